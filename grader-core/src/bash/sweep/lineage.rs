//! Which processes can descend from a command, told from their parents in
//! `/proc/<pid>/stat` alone, without reading their environment.

use std::collections::{HashMap, HashSet};

use super::super::per_process::PerProcess;
use super::pids::Range;

/// Which processes of a domain can descend from a command, by their parents (see
/// [`Reader::scan`](super::scan::Reader)).
pub(super) struct Lineage<'a> {
    domain: Range,
    /// This process's id.
    me: u32,
    /// The bash of every running command that is not being stopped.
    others: &'a HashSet<u32>,
    /// This process, its ancestors and init: who adopts an orphan.
    adopters: &'static HashSet<u32>,
    /// What is known of each pid looked at.
    known: HashMap<u32, Descent>,
}

/// What a process's parents say of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Descent {
    /// It can descend from a command being stopped, or it was adopted: read its environment.
    Read,
    /// It descends from this bash, of a command that is not being stopped, and carries that
    /// command's tag.
    Other(u32),
    /// It cannot carry a tag wanted: started outside the commands.
    No,
    /// It is gone, or a zombie.
    Dead,
}

impl<'a> Lineage<'a> {
    pub(super) fn new(domain: Range, others: &'a HashSet<u32>) -> Self {
        // Found once per process: when this process's parent dies, the one that adopts it is
        // one of its former ancestors, so the set stays whole. A child made by `fork` finds
        // its own, which holds itself.
        static ADOPTERS: PerProcess<HashSet<u32>> = PerProcess::new();
        let adopters = ADOPTERS.get_or_init(|| {
            let mut adopters = HashSet::from([1]);
            let mut pid = std::process::id();
            while adopters.insert(pid) {
                match parent_of(pid) {
                    Some((parent, _)) if parent > 0 => pid = parent,
                    _ => break,
                }
            }
            adopters
        });
        Lineage {
            domain,
            me: std::process::id(),
            others,
            adopters,
            known: HashMap::new(),
        }
    }

    pub(super) fn descent(&mut self, pid: u32) -> Descent {
        // Up the parents while the answer is unknown; then the answer for the whole path.
        let mut path = Vec::new();
        let mut current = pid;
        let answer = loop {
            if let Some(&known) = self.known.get(&current) {
                break known;
            }
            path.push(current);
            match parent_of(current) {
                // The process itself is gone or a zombie: not alive.
                None | Some((_, true)) if current == pid => break Descent::Dead,
                // An ancestor died while being looked at, and its children have been adopted
                // since: look at the environment.
                None | Some((_, true)) => break Descent::Read,
                Some((parent, false)) => {
                    if parent == self.me && self.others.contains(&current) {
                        // The bash of a command that is not being stopped, or one of its
                        // descendants: they carry its tag.
                        break Descent::Other(current);
                    }
                    if self.adopters.contains(&parent) {
                        break Descent::Read;
                    }
                    if !self.domain.contains(parent) || path.len() > 4096 || path.contains(&parent)
                    {
                        break Descent::No;
                    }
                    current = parent;
                }
            }
        };
        // A dead process says nothing of the others on its path (it was the first).
        if answer != Descent::Dead {
            for pid in path {
                self.known.insert(pid, answer);
            }
        }
        answer
    }
}

/// The parent of process `pid` and whether it is a zombie, from `/proc/<pid>/stat`.
///
/// A process whose main thread exited while other threads run shows as a zombie; it is
/// alive, and counted so.
pub(super) fn parent_of(pid: u32) -> Option<(u32, bool)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may itself hold spaces and parentheses.
    let (_, fields) = stat.rsplit_once(')')?;
    let mut fields = fields.split_ascii_whitespace();
    let zombie = matches!(fields.next()?, "Z" | "X") && other_threads(pid).is_empty();
    let parent = fields.next()?.parse().ok()?;
    Some((parent, zombie))
}

/// The threads of process `pid` but its main one.
pub(super) fn other_threads(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| task.file_name().to_str()?.parse().ok())
        .filter(|&tid| tid != pid)
        .collect()
}

#[cfg(all(test, target_os = "linux"))]
mod lineage_tests {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::super::pids::Counters;
    use super::*;

    /// The pid of the live child of `parent` running `sleep`, waiting for it to start.
    fn sleeping_child(parent: u32) -> u32 {
        let start = Instant::now();
        loop {
            let output = Command::new("pgrep")
                .args(["-P", &parent.to_string(), "sleep"])
                .output()
                .expect("pgrep runs");
            if let Some(pid) = String::from_utf8_lossy(&output.stdout)
                .split_whitespace()
                .next()
                .and_then(|pid| pid.parse().ok())
            {
                return pid;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no sleep under {parent}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn only_processes_that_can_descend_from_a_command_are_read() {
        // Started before the domain, not an ancestor of this process: what it starts later is
        // in the domain but cannot descend from a command.
        let mut outsider = Command::new("/bin/bash")
            .args(["-c", "read -r _; sleep 30; :"])
            .stdin(Stdio::piped())
            .spawn()
            .expect("bash runs");
        let first = Counters::read().expect("counters").last_pid + 1;
        let mut inside = Command::new("/bin/bash")
            .args(["-c", "sleep 30; :"])
            .spawn()
            .expect("bash runs");
        outsider
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"go\n")
            .expect("written");
        let (outsider_sleep, inside_sleep) =
            (sleeping_child(outsider.id()), sleeping_child(inside.id()));
        let now = Counters::read().expect("counters");
        let domain = Range {
            first,
            last: now.last_pid,
            len: if now.last_pid >= first {
                u64::from(now.last_pid - first) + 1
            } else {
                u64::from(now.last_pid) + u64::from(now.pid_max) - u64::from(first) + 1
            },
            pid_max: now.pid_max,
        };
        let others = HashSet::new();
        let mut lineage = Lineage::new(domain, &others);
        let verdicts = (
            lineage.descent(inside.id()),
            lineage.descent(inside_sleep),
            lineage.descent(outsider_sleep),
        );
        // While `inside` is the bash of a command that is not being stopped, what descends
        // from it carries that command's tag and is passed over.
        let others = HashSet::from([inside.id()]);
        let mut lineage = Lineage::new(domain, &others);
        let passed_over = (lineage.descent(inside.id()), lineage.descent(inside_sleep));
        for child in [&mut outsider, &mut inside] {
            let _ = child.kill();
            let _ = child.wait();
        }
        for pid in [outsider_sleep, inside_sleep] {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
        assert_eq!(verdicts, (Descent::Read, Descent::Read, Descent::No));
        let other = Descent::Other(inside.id());
        assert_eq!(passed_over, (other, other));
    }
}
