//! A failing template is not silent by default: an environment binary that installed no
//! `tracing` subscriber (the probe installs none) prints each task that fails to start or to
//! grade, panics included, on standard error with the task, the session and the error, as
//! hud's server prints the exception; `RUST_LOG=off` (or `grader_env=off`) silences it, and
//! what an agent's answer put in an error cannot act on the terminal.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use grader_tests::env_process::EnvProcess;
use serde_json::{Value, json};

const PROBE: &str = env!("CARGO_BIN_EXE_env-probe");

/// One control connection to the probe.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    fn connect(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        Client {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let mut line =
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).unwrap();
        let mut reply = String::new();
        self.reader.read_line(&mut reply).unwrap();
        serde_json::from_str(&reply).unwrap()
    }
}

/// Serves the probe with `rust_log` (when given) and its standard error in a file; drives a
/// template that fails to start, one that panics while grading and one whose bad args hold
/// an escape sequence; stops it; returns the session id and what it printed on standard error.
fn failures(rust_log: Option<&str>) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let stderr_path = dir.path().join("stderr");
    let mut command = Command::new(PROBE);
    command
        .env_remove("RUST_LOG")
        .stderr(Stdio::from(std::fs::File::create(&stderr_path).unwrap()));
    if let Some(value) = rust_log {
        command.env("RUST_LOG", value);
    }
    let mut env = EnvProcess::spawn(command, Duration::from_secs(60));
    let mut client = Client::connect(env.port);
    let hello = client.call("hello", json!({}));
    let session = hello["result"]["session_id"].as_str().unwrap().to_owned();
    let failed = client.call("tasks.start", json!({"id": "fails"}));
    assert_eq!(failed["error"]["message"], "boom");
    client.call("tasks.start", json!({"id": "panics"}));
    let panicked = client.call("tasks.grade", json!({"answer": 1}));
    assert_eq!(panicked["error"]["message"], "kaboom");
    // The agent controls the args: an escape sequence and a line break in a key.
    let hostile = client.call(
        "tasks.start",
        json!({"id": "echo", "args": {"word": "w", "\u{1b}]0;pwned\u{7}\nreward 1.0": 1}}),
    );
    assert_eq!(hostile["error"]["code"], -32000);
    env.signal("TERM");
    assert!(env.wait_timeout(Duration::from_secs(20)).is_some());
    (session, std::fs::read_to_string(&stderr_path).unwrap())
}

#[test]
fn failing_templates_are_printed_on_stderr_without_a_subscriber() {
    let (session, stderr) = failures(None);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[..2],
        [
            format!(
                "grader-env: error handling tasks.start: task 'fails' failed (session \
                 {session}): boom"
            ),
            format!(
                "grader-env: error handling tasks.grade: task 'panics' failed (session \
                 {session}): kaboom"
            ),
        ],
        "{stderr}"
    );
    // The agent's bytes are escaped: no escape sequence, no line of their own.
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(
        lines[2].contains("task 'echo' failed") && lines[2].contains(r"\x1b]0;pwned\x07\nreward"),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
}

#[test]
fn rust_log_off_silences_it_and_other_values_do_not() {
    for silent in ["off", "grader_env=off", "info,grader_env::server=off"] {
        let (_, stderr) = failures(Some(silent));
        assert!(
            !stderr.contains("grader-env:"),
            "RUST_LOG={silent}: {stderr}"
        );
    }
    let (_, stderr) = failures(Some("warn,hyper=off"));
    assert_eq!(
        stderr.matches("grader-env: error handling").count(),
        3,
        "{stderr}"
    );
}
