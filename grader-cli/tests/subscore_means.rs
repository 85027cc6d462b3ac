//! One mean per subscore: the summary, the report, `diff` and the Inspect AI export give the same
//! number for a subscore, each sample's epochs averaged first, also when samples have different
//! numbers of epochs (where the mean over lines would differ).

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod support;

use grader_core::{Grade, SubScore};
use grader_eval::Line;
use serde_json::Value;
use support::{grader, temp_dir};

#[test]
fn every_view_gives_the_per_sample_mean() {
    let dir = temp_dir();
    // `a` has three epochs of `tests` (1, 1, 0), `b` one (0): per sample (2/3 + 0) / 2 = 1/3,
    // where the mean over the lines would be 2/4.
    let mut text = String::new();
    for (id, epoch, value) in [("a", 1, 1.0), ("a", 2, 1.0), ("a", 3, 0.0), ("b", 1, 0.0)] {
        let result = Grade::from_subscores([SubScore::new("tests", value).unwrap()]).unwrap();
        let line = Line::graded(id, epoch, result, 0.1);
        text.push_str(&serde_json::to_string(&line).unwrap());
        text.push('\n');
    }
    std::fs::write(dir.path().join("run.jsonl"), text).unwrap();
    let expected = (2.0 / 3.0) / 2.0;
    let close = |value: f64| (value - expected).abs() < 1e-12;

    let run = |args: &[&str]| {
        let output = grader()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };

    let summary: Value = serde_json::from_str(&run(&["summary", "--json", "run.jsonl"])).unwrap();
    let stat = &summary["subscores"]["tests"];
    assert!(close(stat["mean"].as_f64().unwrap()), "{stat}");
    assert_eq!(stat["count"], 2, "n is the samples");
    let table = run(&["summary", "run.jsonl"]);
    let row = |label: &str| {
        table
            .lines()
            .find(|line| line.starts_with(label))
            .map(|line| line[label.len()..].trim().to_owned())
    };
    assert_eq!(
        row("subscores ").as_deref(),
        Some("per sample, mean of epochs"),
        "{table}"
    );
    assert_eq!(row("  tests ").as_deref(), Some("0.3333 (n=2)"), "{table}");

    let diff: Value =
        serde_json::from_str(&run(&["diff", "--json", "run.jsonl", "run.jsonl"])).unwrap();
    assert!(
        close(diff["subscores"][0]["base_mean"].as_f64().unwrap()),
        "{diff}"
    );

    run(&["report", "run.jsonl", "-o", "page.html"]);
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    assert!(page.contains("mean per sample"));
    assert!(
        page.contains("<td class=\"num\">0.3333</td>"),
        "the subscore table's mean"
    );

    run(&["export", "--inspect", "run.jsonl", "-o", "log.json"]);
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("log.json")).unwrap())
            .unwrap();
    let score = log["results"]["scores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|score| score["name"] == "tests")
        .unwrap();
    assert!(
        close(score["metrics"]["mean"]["value"].as_f64().unwrap()),
        "{score}"
    );
}
