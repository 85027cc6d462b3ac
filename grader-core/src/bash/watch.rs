//! The watcher: a small bash process, one per grading process, that stops every tagged
//! command (see [`sweep`](super::sweep)) and everything in the commands' cgroups when the
//! grading process is gone, however it ended (SIGKILL included).
//!
//! It blocks reading a pipe whose write end only this process holds (close-on-exec, so no
//! command inherits it). When this process ends, the kernel closes that end and the read
//! returns: the watcher then finds every process whose environment carries this process's tag
//! name (`grep` over `/proc/*/task/*/environ`, so that a process whose main thread exited is
//! found through its other threads), sends SIGTERM and SIGCONT, and after half a second
//! SIGKILL to whatever is left. Every process still in one of this process's cgroups
//! (`grader-<pid>-*` beneath the directories it was given) gets SIGKILL at once, whatever its
//! environment (`env -i` clears the tag; no process can leave its cgroup), and the emptied
//! groups are removed. Then it exits. It runs in a process group of its own and ignores
//! SIGINT, SIGQUIT, SIGHUP and SIGTERM, so a Ctrl-C in a terminal, a hang-up or a `timeout`
//! that ends the grading process does not end the watcher first.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

/// What the watcher runs, with the tag name as `$1`, the prefix of this process's cgroups as
/// `$2`, and the directories they are made in after.
const SCRIPT: &str = r#"
trap '' INT QUIT HUP TERM
while read -r _; do :; done
pattern="^$1="
prefix=$2
shift 2
round=0
while :; do
    pids=()
    # Each thread's environment: a process whose main thread exited can only be read there.
    for file in $(grep -lsz -e "$pattern" /proc/[0-9]*/task/[0-9]*/environ); do
        pid=${file#/proc/}
        pids+=("${pid%%/*}")
    done
    members=()
    for dir in "$@"; do
        for group in "$dir/$prefix"*/; do
            [[ -d $group ]] || continue
            [[ -e ${group}cgroup.kill ]] && echo 1 > "${group}cgroup.kill"
            while read -r pid; do members+=("$pid"); done < "${group}cgroup.procs"
        done
    done 2>/dev/null
    (( ${#members[@]} )) && kill -KILL "${members[@]}" 2>/dev/null
    if (( ${#pids[@]} + ${#members[@]} == 0 )); then
        for dir in "$@"; do
            for group in "$dir/$prefix"*/; do
                [[ -d $group ]] && rmdir "$group"
            done
        done 2>/dev/null
        exit 0
    fi
    if (( ${#pids[@]} )); then
        if (( round < 10 )); then
            kill -TERM "${pids[@]}" 2>/dev/null
            kill -CONT "${pids[@]}" 2>/dev/null
        else
            kill -KILL "${pids[@]}" 2>/dev/null
        fi
    fi
    (( ++round < 100 )) || exit 1
    sleep 0.05
done
"#;

/// The running watchers, each with whether it was given the cgroups' directories. Usually one;
/// a second when the first was started before any command asked for a cgroup.
static WATCHERS: Mutex<Vec<(Child, bool)>> = Mutex::new(Vec::new());

/// Starts the watcher unless one is running, and one that knows `groups` (the directories
/// this process's cgroups are made in) unless one that knows them is running.
///
/// # Errors
/// When `bash` cannot be started.
pub(super) fn ensure(bash: &str, groups: &[PathBuf]) -> std::io::Result<()> {
    let mut watchers = WATCHERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    watchers.retain_mut(|(child, _)| matches!(child.try_wait(), Ok(None)));
    let running = !watchers.is_empty();
    let knows_groups = watchers.iter().any(|(_, knows)| *knows);
    if running && (groups.is_empty() || knows_groups) {
        return Ok(());
    }
    let child = Command::new(bash)
        .args(["--noprofile", "--norc", "-c", SCRIPT, "grader-bash-watcher"])
        .arg(super::sweep::tag_name())
        .arg(crate::sandbox::group_prefix())
        .args(groups)
        .env_remove("BASH_ENV")
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    watchers.push((child, !groups.is_empty()));
    Ok(())
}
