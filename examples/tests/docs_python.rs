//! The Python code of the docs runs: each ` ```python ` block of `docs/environments.md` and
//! `docs/workspaces.md` (a session with hud 0.6.21's own client: hello, the task list, a task
//! started, the workspace's SSH key, a command, the grade) is run in the hud venv against the
//! `coding_env` example served as hud runs it, and must print what the page says it prints.
//!
//! Skips, saying why, where python3 is missing; under CI that is a failure.
#![allow(missing_docs, clippy::unwrap_used)] // a test that cannot unwrap has failed

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use grader_tests::child::Bounded as _;
use grader_tests::env_process::EnvProcess;
use grader_tests::python::hud_python;
use serde_json::Value;
use support::examples_dir;

/// The ` ```python ` blocks of a page of `docs/`.
fn python_blocks(page: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(page);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut blocks = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("\n```python\n") {
        let body = &rest[start + "\n```python\n".len()..];
        let end = body.find("\n```\n").unwrap();
        blocks.push(body[..=end].to_owned());
        rest = &body[end..];
    }
    blocks
}

/// Runs `code` with the venv's Python against a freshly served example; the JSON it printed
/// last.
fn run_against_example(python: &Path, dir: &Path, code: &str, name: &str) -> Value {
    let served = EnvProcess::spawn(
        Command::new(dir.join("coding_env")),
        Duration::from_secs(60),
    );
    let scripts = tempfile::tempdir().unwrap();
    let script: PathBuf = scripts.path().join(name);
    std::fs::write(&script, code).unwrap();
    let output = Command::new(python)
        .arg(&script)
        .arg(format!("tcp://127.0.0.1:{}", served.port))
        .output_bounded();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{name} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

#[test]
fn the_environments_page_s_session_is_graded_one() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let blocks = python_blocks("environments.md");
    assert_eq!(blocks.len(), 1, "one Python session on the page");
    let dir = examples_dir();
    let seen = run_against_example(&python, &dir, &blocks[0], "session.py");
    assert_eq!(seen["env"], "coding-env");
    assert_eq!(seen["tasks"], serde_json::json!(["fix-tests"]));
    assert!(
        seen["prompt"]
            .as_str()
            .unwrap()
            .starts_with("Make the checkout tests pass"),
        "{seen}"
    );
    assert_eq!(seen["tests_exit_status"], 0, "{seen}");
    assert_eq!(seen["reward"], 1.0, "{seen}");
    let subscores = seen["subscores"].as_array().unwrap();
    assert_eq!(subscores[0]["value"], 1.0, "{seen}");
    assert_eq!(subscores[1]["name"], "tests_tampered");
    assert_eq!(subscores[1]["value"], 0.0, "{seen}");
}

#[test]
fn the_workspaces_page_s_session_logs_in_with_the_binding_s_key() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let blocks = python_blocks("workspaces.md");
    assert_eq!(blocks.len(), 1, "one Python session on the page");
    let dir = examples_dir();
    let seen = run_against_example(&python, &dir, &blocks[0], "workspace.py");
    assert_eq!(seen["user"], "agent");
    assert_eq!(seen["key"], "ssh-ed25519");
    assert_eq!(seen["host_key"], "ssh-ed25519");
    // Sessions start where the binding says, sandboxed or not.
    assert_eq!(seen["pwd"], seen["cwd"], "{seen}");
    assert!(
        ["bwrap", "none"].contains(&seen["isolation"].as_str().unwrap()),
        "{seen}"
    );
    assert_eq!(seen["reward"], 1.0, "{seen}");
}
