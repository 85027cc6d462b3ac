//! Shared by the `grader` command's tests: running the binary, result files written by this
//! project, and result files written by the HUD Python SDK in the test venv.

#![allow(dead_code, clippy::unwrap_used)] // each test file uses a part

pub mod browser;

use std::path::{Path, PathBuf};

use grader_core::{EvaluationResult, Grade, Info, SubScore, all};
pub use grader_tests::child::{self, Bounded};
use serde_json::{Value, json};

/// The `grader` binary, ready to be given arguments; killed, failing the test, if it runs
/// past the tests' watchdog ([`child::WATCHDOG`]).
pub fn grader() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::new(env!("CARGO_BIN_EXE_grader"));
    command
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .timeout(child::WATCHDOG);
    command
}

/// A fresh folder that is removed when dropped.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

pub fn sub(name: &str, value: f64, weight: f64) -> SubScore {
    SubScore::new(name, value)
        .and_then(|s| s.with_weight(weight))
        .unwrap()
}

pub fn info(value: Value) -> Info {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// A result as this project writes one: weighted subscores, a tree, info with parameters and
/// a failed command, a penalty.
pub fn project_result(tests: f64) -> EvaluationResult {
    Grade::from_subscores([
        sub("tests", tests, 0.7).with_info(info(json!({
            "_parameters": {"command": "pytest -q", "timeout": 60},
            "exit_code": if tests >= 1.0 { 0 } else { 1 },
            "stdout": "....F\n1 failed in 0.12s\n",
            "stderr": "",
        }))),
        all(
            "checks",
            vec![sub("lint", 1.0, 1.0), sub("types", tests, 1.0)],
        )
        .grade(0.3)
        .now()
        .unwrap(),
        sub("deleted tests", 0.0, -0.5),
    ])
    .unwrap()
}

/// Writes `results` as JSON Lines, each with a `sample_id` of `s{index}`.
pub fn write_lines(path: &Path, results: &[EvaluationResult]) {
    let mut text = String::new();
    for (index, result) in results.iter().enumerate() {
        let mut result = result.clone();
        result
            .extra
            .insert("sample_id", format!("s{index}"))
            .unwrap();
        text.push_str(&serde_json::to_string(&result).unwrap());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// The venv's Python with the reference SDK, or `None` (after saying why) where it cannot run.
pub fn python() -> Option<PathBuf> {
    grader_tests::python::hud_python(env!("CARGO_TARGET_TMPDIR"))
}

/// The Inspect AI test venv's Python, or `None` (after saying why) where it cannot run.
pub fn inspect_python() -> Option<PathBuf> {
    grader_tests::python::inspect_python(env!("CARGO_TARGET_TMPDIR"))
}

/// Runs `script` in the venv with `path` as `sys.argv[1]`.
pub fn python_writes(python: &Path, script: &str, path: &Path) {
    let status = std::process::Command::new(python)
        .args(["-c", script])
        .arg(path)
        .status_bounded();
    assert!(status.success(), "the Python script failed: {status}");
}

/// A JSON Lines file written by the reference SDK: `model_dump_json()` of results built with
/// its own classes (a tree, the `metadata` alias, extra fields, `from_float`, an error).
pub const PYTHON_WRITES_LINES: &str = r#"
import sys, warnings
warnings.simplefilter("ignore")
from hud.graders import EvaluationResult, SubScore
rows = [
    EvaluationResult(reward=0.75, subscores=[
        SubScore(name="tests", weight=0.5, value=1.0, info={"exit_code": 0, "stdout": "ok"}),
        SubScore(name="style", weight=0.5, value=0.5, children=[
            SubScore(name="lint", value=1.0), SubScore(name="format", value=0.0, metadata={"why": "tabs"}),
        ]),
    ], sample_id="py-0", content="two graders"),
    EvaluationResult.from_float(0.25),
    EvaluationResult(reward=0.0, isError=True, info={"error": "sandbox died"}, sample_id="py-2"),
]
with open(sys.argv[1], "w") as f:
    for row in rows:
        f.write(row.model_dump_json() + "\n")
"#;

/// What one sample's grading gives in [`evaluation_file`]: a result from subscores
/// `(name, value, weight)`, or a failure with this message.
#[derive(Clone)]
pub enum Outcome {
    Graded(Vec<(&'static str, f64, f64)>),
    Fails(&'static str),
}

/// Runs grader-core's `Evaluation` over `samples` (id, outcome), `epochs` times each, writing
/// its JSON Lines to `path`: the file exactly as the project's runner writes it.
pub fn evaluation_file(path: &Path, samples: Vec<(String, Outcome)>, epochs: u32) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = runtime
        .block_on(
            grader_eval::Evaluation::new(path)
                .epochs(epochs)
                .handle_interrupts(false)
                .progress(false)
                .run(samples, |sample, _epoch| async move {
                    match &sample.1 {
                        Outcome::Graded(subscores) => {
                            let subscores: Vec<SubScore> = subscores
                                .iter()
                                .map(|(name, value, weight)| sub(name, *value, *weight))
                                .collect();
                            Grade::from_subscores(subscores).map_err(|e| e.to_string())
                        }
                        Outcome::Fails(message) => Err((*message).to_owned()),
                    }
                }),
        )
        .unwrap();
    assert!(!report.interrupted);
}

/// `n` samples `q0`…: each graded by `tests` (weight 0.8) and `style` (0.2) with the values
/// `value(index)` gives.
pub fn samples(n: usize, value: impl Fn(usize) -> (f64, f64)) -> Vec<(String, Outcome)> {
    (0..n)
        .map(|index| {
            let (tests, style) = value(index);
            (
                format!("q{index}"),
                Outcome::Graded(vec![("tests", tests, 0.8), ("style", style, 0.2)]),
            )
        })
        .collect()
}
