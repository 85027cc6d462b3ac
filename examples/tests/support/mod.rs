//! What the coding example's tests share: the examples built once, and the `coding_agent`
//! example run against a served environment.

#![allow(dead_code)] // each test file uses a part

use grader_tests::child::Bounded as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the examples once into this build's target directory and returns its folder.
pub fn examples_dir() -> PathBuf {
    let target_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--package", "grader-examples"])
        .args(["--example", "coding_env", "--example", "coding_agent"])
        .arg("--target-dir")
        .arg(&target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status_bounded();
    assert!(status.success());
    target_dir.join("debug").join("examples")
}

/// The `coding_agent` example (in `dir`) against the environment on `port`, with `extra`
/// arguments: the grade it printed, and what it said before it.
pub fn coding_agent(dir: &Path, port: u16, extra: &[&str]) -> (serde_json::Value, String) {
    let output = Command::new(dir.join("coding_agent"))
        .arg(port.to_string())
        .args(extra)
        .output_bounded();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (said, grade) = stdout.split_once("== grade:\n").unwrap();
    (serde_json::from_str(grade).unwrap(), said.to_owned())
}
