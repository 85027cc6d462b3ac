//! An environment served by a real child process, as hud's runtimes start one: spawned, its
//! port read from the `HUD_SERVE_PORT=` line on its stdout, killed when the handle drops.

use crate::child::Bounded as _;
use std::io::{BufRead as _, BufReader, Read as _};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A serving environment process.
#[derive(Debug)]
pub struct EnvProcess {
    child: Child,
    /// The port it announced.
    pub port: u16,
    /// What it printed on stdout after the port line (a well-behaved server prints nothing).
    rest: mpsc::Receiver<String>,
}

impl EnvProcess {
    /// Spawns `command` (its stderr as the caller set it, inherited by default) and waits (at
    /// most `timeout`) for its port line.
    ///
    /// # Panics
    /// When it cannot start, prints anything else first, or announces no port in time.
    #[must_use]
    pub fn spawn(mut command: Command, timeout: Duration) -> EnvProcess {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the environment");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (line_tx, line_rx) = mpsc::channel();
        let (rest_tx, rest) = mpsc::channel();
        std::thread::spawn(move || forward(stdout, &line_tx, &rest_tx));
        let line: String = match line_rx.recv_timeout(timeout) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no port line within {timeout:?}");
            }
        };
        let port = line
            .strip_prefix("HUD_SERVE_PORT=")
            .and_then(|p| p.trim_end().parse().ok())
            .unwrap_or_else(|| panic!("the first stdout line is not the port line: {line:?}"));
        EnvProcess { child, port, rest }
    }

    /// The process id.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (a name such as `TERM`) with `kill`.
    ///
    /// # Panics
    /// When `kill` fails.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status_bounded();
        assert!(status.success(), "kill -{signal} failed");
    }

    /// Waits for the process to exit, at most `timeout`; `None` when it is still running.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything printed on stdout after the port line (call after the process exited).
    #[must_use]
    pub fn stdout_rest(&self) -> String {
        self.rest
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_default()
    }
}

fn forward(stdout: ChildStdout, line: &mpsc::Sender<String>, rest: &mpsc::Sender<String>) {
    let mut reader = BufReader::new(stdout);
    let mut first = String::new();
    let _ = reader.read_line(&mut first);
    let _ = line.send(first);
    let mut remaining = String::new();
    let _ = reader.read_to_string(&mut remaining);
    let _ = rest.send(remaining);
}

impl Drop for EnvProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a process with this id is still alive (neither gone nor a zombie).
#[must_use]
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

/// A path under `dir` for a test's file.
#[must_use]
pub fn scratch(dir: &Path, name: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).expect("create the scratch folder");
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}
