//! `grader summary` on real files: the project's evaluation runner's output (whole, and in
//! shards), the Python SDK's results, and broken files.

#![allow(clippy::unwrap_used)]

mod support;

use grader_eval::{Evaluation, SummaryOptions};
use predicates::str::contains;
use serde_json::Value;
use support::{Outcome, evaluation_file, grader, python, python_writes, samples, temp_dir};

#[test]
fn the_summary_is_grader_cores_for_the_runners_file() {
    let dir = temp_dir();
    let path = dir.path().join("results.jsonl");
    let mut list = samples(12, |i| (if i % 3 == 0 { 0.0 } else { 1.0 }, 0.5));
    list.push(("broken".to_owned(), Outcome::Fails("judge unreachable")));
    evaluation_file(&path, list, 2);

    let output = grader()
        .args(["summary", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let ours: Value = serde_json::from_slice(&output.stdout).unwrap();
    let expected = Evaluation::summarize(&path, SummaryOptions::default()).unwrap();
    assert_eq!(ours, serde_json::to_value(&expected).unwrap());
    assert_eq!(ours["samples"], 13);
    assert_eq!(ours["scored"], 24);
    assert_eq!(ours["errored"], 2);
    assert_eq!(ours["errors"]["failed"], 2);

    grader()
        .arg("summary")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(expected.to_string())
        .stdout(contains("24 scored, 2 errored (failed 2)"));
}

#[test]
fn shards_are_merged_into_the_summary_of_the_whole() {
    let dir = temp_dir();
    let whole = dir.path().join("whole.jsonl");
    evaluation_file(&whole, samples(20, |i| ((i % 2) as f64, 1.0)), 1);
    let text = std::fs::read_to_string(&whole).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (first, second) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&first, lines[..7].join("\n") + "\n").unwrap();
    std::fs::write(&second, lines[7..].join("\n") + "\n").unwrap();

    let summary = |files: &[&std::path::Path]| {
        let output = grader()
            .args(["summary", "--json", "--threshold", "0.5"])
            .args(files)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let merged = summary(&[&second, &first]);
    assert_eq!(merged, summary(&[&whole]));
    assert_eq!(merged["samples"], 20);
    assert_eq!(merged["reward"]["pass_rate"], 0.5);
}

#[test]
fn results_written_by_the_python_sdk_are_summarized() {
    let Some(python) = python() else { return };
    let dir = temp_dir();
    let path = dir.path().join("python.jsonl");
    python_writes(&python, support::PYTHON_WRITES_LINES, &path);
    let output = grader()
        .args(["summary", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    // Three results: two scored (0.75 and 0.25), one marked isError and counted apart.
    assert_eq!(summary["lines"], 3);
    assert_eq!(summary["scored"], 2);
    assert_eq!(summary["errors"]["is_error"], 1);
    assert_eq!(summary["reward"]["mean"], 0.5);
    assert_eq!(summary["subscores"]["tests"]["mean"], 1.0);
}

#[test]
fn a_torn_last_line_is_skipped_with_a_warning_and_a_bad_line_fails() {
    let dir = temp_dir();
    let path = dir.path().join("torn.jsonl");
    evaluation_file(&path, samples(3, |_| (1.0, 1.0)), 1);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(r#"{"v":1,"id":"q9","epoch":1,"dura"#);
    std::fs::write(&path, &text).unwrap();
    grader()
        .args(["summary", "--json"])
        .arg(&path)
        .assert()
        .code(0)
        .stdout(contains("\"samples\": 3"))
        .stderr(contains(
            "torn.jsonl:4: the last line is incomplete (a write cut short?); skipped",
        ));

    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"reward\": 1}\n{\"reward\": 1, \"subscores\": [{\"name\": \"a\", \"value\": 7}]}\n{\"reward\": 0}\n",
    )
    .unwrap();
    grader()
        .arg("summary")
        .arg(&bad)
        .assert()
        .code(1)
        .stdout("")
        .stderr(contains("1 line(s) are not results"))
        .stderr(contains(
            "bad.jsonl:2: subscore `a`: value 7.0 is not a number in [0, 1]",
        ))
        .stderr(contains("`grader validate` says what is wrong with each"));
}

#[test]
fn bad_options_are_usage_errors() {
    grader()
        .args(["summary", "--level", "95", "x.jsonl"])
        .assert()
        .code(2)
        .stderr(contains("not a level between 0 and 1"));
    grader()
        .args(["summary", "--reducer", "avg", "x.jsonl"])
        .assert()
        .code(2)
        .stderr(contains("unknown reducer `avg`"));
}

#[test]
fn samples_cut_short_by_an_interrupted_run_are_warned_about() {
    let dir = temp_dir();
    let path = dir.path().join("results.jsonl");
    evaluation_file(&path, samples(6, |i| ((i % 2) as f64, 1.0)), 2);
    // As a run stopped part-way leaves it: two samples' second epochs missing.
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| {
            let line: Value = serde_json::from_str(line).unwrap();
            !(line["epoch"] == 2 && ["q0", "q3"].contains(&line["id"].as_str().unwrap_or("")))
        })
        .collect();
    assert_eq!(kept.len(), 10, "{text}");
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();

    grader()
        .arg("summary")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(contains("6 (0 with no score), 2 epochs\n"))
        .stdout(contains(
            "2 samples have fewer than 2 epochs (an unfinished or interrupted run",
        ))
        .stdout(contains("legend:\n"));
    let output = grader()
        .args(["summary", "--json", "--epochs", "3"])
        .arg(&path)
        .output()
        .unwrap();
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["incomplete_samples"], 6);
    assert_eq!(summary["epochs"], 2);
    assert_eq!(summary["options"]["epochs"], 3);
    grader()
        .args(["summary", "--epochs", "0"])
        .arg(&path)
        .assert()
        .code(2);
}

#[test]
fn the_help_explains_every_row() {
    let output = grader().args(["summary", "--help"]).output().unwrap();
    let help = String::from_utf8(output.stdout).unwrap();
    for row in [
        "samples ",
        "results ",
        "reward ",
        "CI ",
        "pass rate ",
        "pass_at_k ",
        "majority",
        "subscores ",
        "--epochs",
    ] {
        assert!(help.contains(row), "{row}: {help}");
    }
}
