//! A Python process that answers one JSON request per line: how the tests drive hud's own
//! clients (`tests/data/ssh_agent.py` around hud's `SSHClient`, `filetracking_driver.py`
//! around hud's file tracking), one process for a whole test.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// The script's process, killed and reaped when dropped. Its first line (a greeting, or what
/// it read before it was ready) is kept in [`greeting`](Self::greeting); a first line that is
/// not JSON is kept as `{"raw": line}`.
#[derive(Debug)]
pub struct Driver {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// The first line the script printed.
    pub greeting: Value,
}

impl Driver {
    /// Starts `command` (its stdin and stdout piped) and reads its first line.
    ///
    /// # Panics
    /// When the process cannot start or its first line cannot be read.
    #[must_use]
    pub fn spawn(command: &mut Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {command:?}: {error}"));
        let stdin = child.stdin.take().expect("stdin is piped");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("the driver's first line");
        let greeting = serde_json::from_str(&line).unwrap_or_else(|_| json!({ "raw": line }));
        Driver {
            child,
            stdin,
            stdout,
            greeting,
        }
    }

    /// Sends `request` as one line and returns the reply line, asserting that it has no
    /// `error` key.
    ///
    /// # Panics
    /// When the reply is not JSON or holds an `error`.
    pub fn ask(&mut self, request: &Value) -> Value {
        let reply = self.try_ask(request);
        assert!(reply.get("error").is_none(), "{request} failed: {reply}");
        reply
    }

    /// Sends one request and returns the reply as it is, an `error` included.
    ///
    /// # Panics
    /// When the reply is not JSON.
    pub fn try_ask(&mut self, request: &Value) -> Value {
        writeln!(self.stdin, "{request}").expect("write to the driver");
        self.stdin.flush().expect("write to the driver");
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("read from the driver");
        serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("the driver answered {line:?} to {request}"))
    }

    /// `ssh_agent.py`: runs `cmd` over SSH; the reply holds `exit_status`, `stdout` and
    /// `stderr`.
    pub fn run(&mut self, cmd: &str) -> Value {
        self.ask(&json!({ "cmd": cmd }))
    }

    /// `ssh_agent.py`: the standard output of `cmd`, asserting that it exits 0.
    ///
    /// # Panics
    /// When `cmd` exits otherwise.
    pub fn stdout(&mut self, cmd: &str) -> String {
        let reply = self.run(cmd);
        assert_eq!(reply["exit_status"], 0, "{cmd}: {reply}");
        reply["stdout"].as_str().unwrap_or_default().to_owned()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
