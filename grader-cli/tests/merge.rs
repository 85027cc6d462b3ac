//! `grader merge` on real files: shards joined into one file whose summary is the whole run's,
//! duplicates and a torn last line left out and said, and the mistakes a user makes.

#![allow(clippy::unwrap_used)]

mod support;

use predicates::str::contains;
use support::{evaluation_file, grader, samples, temp_dir};

#[test]
fn shards_merge_into_the_whole_run() {
    let dir = temp_dir();
    let whole = dir.path().join("whole.jsonl");
    evaluation_file(&whole, samples(20, |i| ((i % 3) as f64 / 2.0, 1.0)), 2);
    let text = std::fs::read_to_string(&whole).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (first, second) = lines.split_at(lines.len() / 2);
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    std::fs::write(&a, first.join("\n") + "\n").unwrap();
    // The second shard repeats the first shard's last line and ends in a torn line.
    let torn = &second[0][..second[0].len() / 2];
    std::fs::write(
        &b,
        format!("{}\n{}\n{torn}", first[first.len() - 1], second.join("\n")),
    )
    .unwrap();
    let merged = dir.path().join("merged.jsonl");
    grader()
        .args(["merge", "-o"])
        .arg(&merged)
        .arg(&a)
        .arg(&b)
        .assert()
        .code(0)
        .stderr(contains(format!(
            "{} lines from 2 files (1 duplicates left out)",
            lines.len()
        )))
        .stderr(contains("torn last line left out"));
    let summary = |path: &std::path::Path| {
        let output = grader()
            .args(["summary", "--json"])
            .arg(path)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let mut value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        value["grading_secs"] = serde_json::Value::Null;
        value
    };
    assert_eq!(summary(&merged), summary(&whole));
}

#[test]
fn mistakes_are_refused() {
    let dir = temp_dir();
    let a = dir.path().join("a.jsonl");
    evaluation_file(&a, samples(3, |_| (1.0, 1.0)), 1);
    grader()
        .args(["merge", "-o"])
        .arg(&a)
        .arg(&a)
        .assert()
        .code(1)
        .stderr(contains("the output is also an input"));
    let missing = dir.path().join("missing.jsonl");
    grader()
        .args(["merge", "-o"])
        .arg(dir.path().join("out.jsonl"))
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(contains("missing.jsonl"));
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"not\": \"a line\"}\n{}\n").unwrap();
    grader()
        .args(["merge", "-o"])
        .arg(dir.path().join("out2.jsonl"))
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(contains("bad.jsonl"));
}
