//! Duplicates never decide silently: lines of one (sample, epoch) that differ, across three
//! files, are counted and named by every command, which follows `--on-conflict` (first, last,
//! fail); identical duplicates are only counted; `merge` fails on them unless told which to
//! keep.

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod support;

use std::path::Path;

use grader_core::EvaluationResult;
use grader_eval::Line;
use predicates::str::contains;
use serde_json::Value;
use support::{grader, temp_dir};

fn write(dir: &Path, name: &str, lines: &[(&str, f64)]) {
    let mut text = String::new();
    for (id, reward) in lines {
        let line = Line::graded(*id, 1, EvaluationResult::from_reward(*reward).unwrap(), 0.1);
        text.push_str(&serde_json::to_string(&line).unwrap());
        text.push('\n');
    }
    std::fs::write(dir.join(name), text).unwrap();
}

/// `a` differs in all three files, `c` in two; `b` is the same twice.
fn three_files() -> tempfile::TempDir {
    let dir = temp_dir();
    write(
        dir.path(),
        "base.jsonl",
        &[("a", 1.0), ("b", 0.0), ("c", 1.0)],
    );
    write(dir.path(), "rerun.jsonl", &[("a", 0.0), ("b", 0.0)]);
    write(
        dir.path(),
        "third.jsonl",
        &[("a", 0.5), ("c", 0.0), ("d", 1.0)],
    );
    dir
}

const FILES: [&str; 3] = ["base.jsonl", "rerun.jsonl", "third.jsonl"];

fn summary(dir: &Path, extra: &[&str], files: &[&str]) -> (Value, String) {
    let output = grader()
        .current_dir(dir)
        .args(["summary", "--json"])
        .args(extra)
        .args(files)
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    (serde_json::from_slice(&output.stdout).unwrap(), stderr)
}

#[test]
fn the_summary_counts_names_and_follows_the_rule() {
    let dir = three_files();
    let (first, stderr) = summary(dir.path(), &[], &FILES);
    assert_eq!(first["reward"]["mean"], 0.75, "a 1.0, b 0.0, c 1.0, d 1.0");
    assert_eq!(
        (first["duplicates"].as_u64(), first["conflicts"].as_u64()),
        (Some(4), Some(2))
    );
    assert_eq!(
        first["conflicting"],
        serde_json::json!([
            {"id": "a", "epoch": 1, "lines": 3},
            {"id": "c", "epoch": 1, "lines": 2},
        ])
    );
    assert!(
        stderr.contains(
            "grader: warning: base.jsonl, rerun.jsonl, third.jsonl: 2 (sample, epoch) pairs \
             have lines that differ; the first line read counts: a epoch 1 (3 lines), c epoch 1 \
             (2 lines) (--on-conflict first, last or fail)"
        ),
        "{stderr}"
    );

    let (last, stderr) = summary(dir.path(), &["--on-conflict", "last"], &FILES);
    assert_eq!(last["reward"]["mean"], 0.375, "a 0.5, b 0.0, c 0.0, d 1.0");
    assert!(stderr.contains("the last line read counts"), "{stderr}");

    // The order of the files decides only under a rule, and says so.
    let (swapped, stderr) = summary(
        dir.path(),
        &[],
        &["third.jsonl", "rerun.jsonl", "base.jsonl"],
    );
    assert_eq!(swapped["reward"]["mean"], 0.375);
    assert!(stderr.contains("2 (sample, epoch) pairs"), "{stderr}");

    // The table says it too.
    let output = grader()
        .current_dir(dir.path())
        .arg("summary")
        .args(FILES)
        .output()
        .unwrap();
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(table.contains("4 duplicate lines left out"), "{table}");
    assert!(
        table.contains("conflicts ") && table.contains("a epoch 1 (3 lines), c epoch 1 (2 lines)"),
        "{table}"
    );

    grader()
        .current_dir(dir.path())
        .args(["summary", "--on-conflict", "fail"])
        .args(FILES)
        .assert()
        .code(1)
        .stdout("")
        .stderr(contains(
            "2 (sample, epoch) pairs have lines that differ: a epoch 1 (3 lines), c epoch 1 \
             (2 lines); nothing was written: choose the line that counts with --on-conflict \
             first or last",
        ));
}

#[test]
fn identical_duplicates_are_only_counted() {
    let dir = temp_dir();
    write(dir.path(), "one.jsonl", &[("a", 1.0), ("b", 0.0)]);
    write(dir.path(), "two.jsonl", &[("a", 1.0), ("b", 0.0)]);
    let (summary, stderr) = summary(
        dir.path(),
        &["--on-conflict", "fail"],
        &["one.jsonl", "two.jsonl"],
    );
    assert_eq!(
        (
            summary["duplicates"].as_u64(),
            summary["conflicts"].as_u64()
        ),
        (Some(2), Some(0))
    );
    assert_eq!(stderr, "");
    grader()
        .current_dir(dir.path())
        .args(["merge", "-o", "all.jsonl", "one.jsonl", "two.jsonl"])
        .assert()
        .success()
        .stderr("all.jsonl: 2 lines from 2 files (2 duplicates left out)\n");
}

#[test]
fn merge_refuses_conflicts_unless_told_which_to_keep() {
    let dir = three_files();
    grader()
        .current_dir(dir.path())
        .args(["merge", "-o", "all.jsonl"])
        .args(FILES)
        .assert()
        .code(1)
        .stderr(contains(
            "all.jsonl: 2 (sample, epoch) pair(s) have lines that differ: a epoch 1 (3 lines), \
             c epoch 1 (2 lines); nothing was written",
        ))
        .stderr(contains("--on-conflict first or last"));
    assert!(!dir.path().join("all.jsonl").exists());

    grader()
        .current_dir(dir.path())
        .args(["merge", "--on-conflict", "last", "-o", "all.jsonl"])
        .args(FILES)
        .assert()
        .success()
        .stderr(contains(
            "all.jsonl: 4 lines from 3 files (4 duplicates left out)",
        ))
        .stderr(contains(
            "grader: warning: 2 (sample, epoch) pair(s) had lines that differ; the last line \
             read was kept: a epoch 1 (3 lines), c epoch 1 (2 lines)",
        ));
    let merged = std::fs::read_to_string(dir.path().join("all.jsonl")).unwrap();
    let rewards: Vec<(String, f64)> = merged
        .lines()
        .map(|text| {
            let line: Line = serde_json::from_str(text).unwrap();
            (line.id.clone(), line.reward().unwrap())
        })
        .collect();
    // In input order, each pair at the place of its last line.
    let expected = [("b", 0.0), ("a", 0.5), ("c", 0.0), ("d", 1.0)];
    let expected: Vec<(String, f64)> = expected
        .iter()
        .map(|(id, r)| ((*id).to_owned(), *r))
        .collect();
    assert_eq!(rewards, expected);
    // The merged file's summary is the inputs' under the same rule.
    let (merged, _) = summary(dir.path(), &[], &["all.jsonl"]);
    assert_eq!(merged["reward"]["mean"], 0.375);
}

#[test]
fn report_diff_and_export_follow_the_same_rule() {
    let dir = three_files();
    // The report: its mean, and the conflicts named on the page.
    for (rule, mean) in [("first", "0.7500"), ("last", "0.3750")] {
        grader()
            .current_dir(dir.path())
            .args(["report", "--on-conflict", rule, "-o", "page.html"])
            .args(FILES)
            .assert()
            .success()
            .stderr(contains("2 (sample, epoch) pairs have lines that differ"));
        let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
        assert!(
            page.contains(&format!("data-mean=\"{}", &mean[..4])),
            "{rule}"
        );
        assert!(page.contains("data-conflicts=\"2\""), "{rule}");
    }
    grader()
        .current_dir(dir.path())
        .args(["report", "--on-conflict", "fail", "-o", "failed.html"])
        .args(FILES)
        .assert()
        .code(1);
    assert!(!dir.path().join("failed.html").exists());

    // Export: the samples kept under each rule.
    for (rule, expected) in [
        ("first", [1.0, 0.0, 1.0, 1.0]),
        ("last", [0.5, 0.0, 0.0, 1.0]),
    ] {
        grader()
            .current_dir(dir.path())
            .args([
                "export",
                "--inspect",
                "--on-conflict",
                rule,
                "-o",
                "log.json",
            ])
            .args(FILES)
            .assert()
            .success()
            .stderr(contains("2 (sample, epoch) pairs have lines that differ"));
        let log: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("log.json")).unwrap())
                .unwrap();
        let mut rewards: Vec<(String, f64)> = log["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|sample| {
                (
                    sample["id"].as_str().unwrap().to_owned(),
                    sample["scores"]["reward"]["value"].as_f64().unwrap(),
                )
            })
            .collect();
        rewards.sort_by(|a, b| a.0.cmp(&b.0));
        let values: Vec<f64> = rewards.iter().map(|(_, reward)| *reward).collect();
        assert_eq!(values, expected, "{rule}");
    }
    grader()
        .current_dir(dir.path())
        .args([
            "export",
            "--inspect",
            "--on-conflict",
            "fail",
            "-o",
            "refused.json",
        ])
        .args(FILES)
        .assert()
        .code(1);
    assert!(!dir.path().join("refused.json").exists());

    // Diff: a file holding a conflict of its own, against a clean one.
    let both = format!(
        "{}{}",
        std::fs::read_to_string(dir.path().join("base.jsonl")).unwrap(),
        std::fs::read_to_string(dir.path().join("third.jsonl")).unwrap()
    );
    std::fs::write(dir.path().join("both.jsonl"), both).unwrap();
    for (rule, mean) in [("first", 0.75), ("last", 0.375)] {
        let output = grader()
            .current_dir(dir.path())
            .args([
                "diff",
                "--json",
                "--on-conflict",
                rule,
                "base.jsonl",
                "both.jsonl",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr.contains("both.jsonl: 2 (sample, epoch) pairs have lines that differ"),
            "{stderr}"
        );
        let diff: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(diff["new"]["mean"], mean, "{rule}: b is 0 in both");
    }
}
