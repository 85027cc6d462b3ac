//! `grader diff` on files written by the project's evaluation runner: reward changes, new and
//! fixed errors, flipped subscores, and the change in mean gating CI.

#![allow(clippy::unwrap_used)]

mod support;

use predicates::prelude::*;
use predicates::str::contains;
use serde_json::Value;
use support::{Outcome, evaluation_file, grader, python, python_writes, samples, temp_dir};

/// 30 samples, all passing, and the same 30 where `worse` of them fail their tests and q29's
/// grading fails.
fn base_and_new(dir: &std::path::Path, worse: usize) -> (std::path::PathBuf, std::path::PathBuf) {
    let base = dir.join("base.jsonl");
    let mut list = samples(30, |_| (1.0, 1.0));
    list[28].1 = Outcome::Fails("sandbox died");
    evaluation_file(&base, list, 1);
    let new = dir.join("new.jsonl");
    let mut list = samples(30, |i| (if i < worse { 0.0 } else { 1.0 }, 1.0));
    list[29].1 = Outcome::Fails("judge unreachable: <timeout>");
    evaluation_file(&new, list, 1);
    (base, new)
}

#[test]
fn a_worse_run_is_reported_and_fails_ci_when_asked() {
    let dir = temp_dir();
    let (base, new) = base_and_new(dir.path(), 10);
    let output = grader()
        .args(["diff", "--json"])
        .arg(&base)
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let diff: Value = serde_json::from_slice(&output.stdout).unwrap();
    // q28 errored in base and q29 in new: 28 pairs, 10 of which lost 0.8.
    assert_eq!(diff["change"]["paired"], 28);
    let delta = diff["change"]["delta"].as_f64().unwrap();
    assert!((delta - (-0.8 * 10.0 / 28.0)).abs() < 1e-12, "{delta}");
    let ci = diff["change"]["ci"].as_array().unwrap();
    assert!(ci[1].as_f64().unwrap() < 0.0, "{ci:?}");
    assert_eq!(diff["reward_changes"].as_array().unwrap().len(), 10);
    assert_eq!(diff["reward_changes"][0]["sample"], "q0");
    assert!((diff["reward_changes"][0]["new"].as_f64().unwrap() - 0.2).abs() < 1e-12);
    assert_eq!(diff["new_errors"][0]["sample"], "q29");
    assert_eq!(
        diff["new_errors"][0]["error"],
        "failed: judge unreachable: <timeout>"
    );
    assert_eq!(diff["fixed_errors"][0]["sample"], "q28");
    assert_eq!(diff["newly_failing"].as_array().unwrap().len(), 10);
    assert_eq!(diff["newly_failing"][0]["subscore"], "tests");
    assert_eq!(diff["newly_passing"].as_array().unwrap().len(), 0);

    grader()
        .args(["diff", "--fail-if-worse", "--limit", "3"])
        .arg(&base)
        .arg(&new)
        .assert()
        .code(1)
        .stdout(contains("change in mean (paired, n=28): -0.2857, 95% CI ["))
        .stdout(contains("]: worse"))
        .stdout(contains("reward changes, largest first (10):"))
        .stdout(contains("  q0  1.0000 → 0.2000  (-0.8000)"))
        .stdout(contains("  … 7 more (--limit, --json)"))
        .stdout(contains(
            "new errors (1):\n  q29  failed: judge unreachable: <timeout>",
        ))
        .stdout(contains("fixed errors (1):\n  q28  failed: sandbox died"))
        .stdout(contains(
            "q0 (epoch 1)  tests: pass → fail (1.0000 → 0.0000)",
        ))
        .stderr(contains("the new mean is lower beyond the 95% interval"));
}

#[test]
fn a_change_within_the_interval_passes_the_gate() {
    let dir = temp_dir();
    // One sample of 28 paired gets worse: the interval spans zero.
    let (base, new) = base_and_new(dir.path(), 1);
    grader()
        .args(["diff", "--fail-if-worse"])
        .arg(&base)
        .arg(&new)
        .assert()
        .code(0)
        .stdout(contains(": no significant change"));
    // Against itself nothing changed, so nothing is listed.
    grader()
        .args(["diff", "--fail-if-worse"])
        .arg(&base)
        .arg(&base)
        .assert()
        .code(0)
        .stdout(contains("change in mean (paired, n=29): +0.0000"))
        .stdout(contains("reward changes").not())
        .stdout(contains("new errors").not());
}

#[test]
fn a_better_run_and_samples_on_one_side_only() {
    let dir = temp_dir();
    let base = dir.path().join("base.jsonl");
    evaluation_file(&base, samples(20, |_| (0.0, 1.0)), 1);
    let new = dir.path().join("new.jsonl");
    let mut list = samples(20, |_| (1.0, 1.0));
    list.remove(3);
    list.push((
        "extra".to_owned(),
        Outcome::Graded(vec![("tests", 1.0, 1.0)]),
    ));
    evaluation_file(&new, list, 1);
    grader()
        .args(["diff", "--fail-if-worse"])
        .arg(&base)
        .arg(&new)
        .assert()
        .code(0)
        .stdout(contains("]: better"))
        .stdout(contains("subscores now passing (19):"))
        .stdout(contains("samples only in base (1):\n  q3"))
        .stdout(contains("samples only in new (1):\n  extra"));
}

#[test]
fn python_sdk_results_pair_by_sample_id() {
    let Some(python) = python() else { return };
    let dir = temp_dir();
    let base = dir.path().join("base.jsonl");
    python_writes(&python, support::PYTHON_WRITES_LINES, &base);
    let new = dir.path().join("new.jsonl");
    python_writes(
        &python,
        r#"
import sys
from hud.graders import EvaluationResult, SubScore
rows = [EvaluationResult(reward=0.5, subscores=[SubScore(name="tests", weight=1.0, value=0.5)], sample_id="py-0"),
        EvaluationResult(reward=1.0, sample_id="py-2")]
open(sys.argv[1], "w").write("".join(r.model_dump_json() + "\n" for r in rows))
"#,
        &new,
    );
    let output = grader()
        .args(["diff", "--json", "--threshold", "0.6"])
        .arg(&base)
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let diff: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(diff["change"]["paired"], 1);
    assert_eq!(diff["change"]["ci"], Value::Null);
    assert_eq!(diff["reward_changes"][0]["sample"], "py-0");
    assert_eq!(diff["newly_failing"][0]["subscore"], "tests");
    assert_eq!(diff["fixed_errors"][0]["sample"], "py-2");
    assert_eq!(diff["fixed_errors"][0]["error"], "isError: sandbox died");
    assert_eq!(diff["only_in_base"][0], "line 2");
}

#[test]
fn unreadable_inputs_are_errors() {
    let dir = temp_dir();
    let good = dir.path().join("good.jsonl");
    evaluation_file(&good, samples(2, |_| (1.0, 1.0)), 1);
    grader()
        .arg("diff")
        .arg(&good)
        .arg(dir.path().join("missing.jsonl"))
        .assert()
        .code(2)
        .stderr(contains("missing.jsonl: No such file or directory"));
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"reward\": \"x\"}\n").unwrap();
    grader()
        .arg("diff")
        .arg(&good)
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(contains(
            "bad.jsonl:1: invalid type: string \"x\", expected f64",
        ));
}

#[test]
fn each_subscore_gets_its_paired_change_and_can_gate_ci() {
    let dir = temp_dir();
    let (base, new) = base_and_new(dir.path(), 10);
    let output = grader()
        .args(["diff", "--json"])
        .arg(&base)
        .arg(&new)
        .output()
        .unwrap();
    let diff: Value = serde_json::from_slice(&output.stdout).unwrap();
    let subscores = diff["subscores"].as_array().unwrap();
    let names: Vec<&str> = subscores
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["style", "tests"]);
    let tests = &subscores[1];
    // 29 scored samples on each side, 28 on both; 10 of those went from 1 to 0.
    assert_eq!(tests["change"]["paired"], 28);
    let delta = tests["change"]["delta"].as_f64().unwrap();
    assert!((delta - (-10.0 / 28.0)).abs() < 1e-12, "{delta}");
    assert!(tests["change"]["ci"][1].as_f64().unwrap() < 0.0);
    assert_eq!(tests["base_mean"], 1.0);
    assert!((tests["new_mean"].as_f64().unwrap() - 19.0 / 29.0).abs() < 1e-12);
    assert_eq!(
        (
            tests["newly_failing"].clone(),
            tests["newly_passing"].clone()
        ),
        (10.into(), 0.into())
    );
    assert_eq!(subscores[0]["change"]["delta"], 0.0);
    assert_eq!(diff["subscores_only_in_base"], serde_json::json!([]));

    grader()
        .args(["diff"])
        .arg(&base)
        .arg(&new)
        .assert()
        .code(0)
        .stdout(contains(
            "subscores, change in mean (paired by sample) (2):",
        ))
        .stdout(contains(
            "  tests  1.0000 → 0.6552  (-0.3571, n=28, 95% CI [",
        ))
        .stdout(contains("]): worse; 10 now failing, 0 now passing"))
        .stdout(contains(
            "  style  1.0000 → 1.0000  (+0.0000, n=28, 95% CI [+0.0000, +0.0000]): no \
             significant change; 0 now failing, 0 now passing",
        ))
        .stdout(contains("subscores now failing (10):"));

    // The gate on a named subscore: `tests` got worse, `style` did not.
    grader()
        .args(["diff", "--fail-if-worse-on", "tests"])
        .arg(&base)
        .arg(&new)
        .assert()
        .code(1)
        .stderr(contains(
            "grader: subscore tests: the new mean is lower beyond the 95% interval",
        ));
    grader()
        .args(["diff", "--fail-if-worse-on", "style"])
        .arg(&base)
        .arg(&new)
        .assert()
        .code(0)
        .stderr("");
    grader()
        .args(["diff", "--fail-if-worse-on", "nosuch"])
        .arg(&base)
        .arg(&new)
        .assert()
        .code(2)
        .stderr(contains(
            "--fail-if-worse-on nosuch: no top-level subscore of that name in either file",
        ));
    // A change within the interval passes the subscore gate.
    let other = temp_dir();
    let (base, new) = base_and_new(other.path(), 1);
    grader()
        .args(["diff", "--fail-if-worse-on", "tests", "--fail-if-worse"])
        .arg(&base)
        .arg(&new)
        .assert()
        .code(0);
}

#[test]
fn a_renamed_grader_is_listed_on_each_side_and_fails_a_gate_on_it() {
    let dir = temp_dir();
    let base = dir.path().join("base.jsonl");
    evaluation_file(&base, samples(6, |_| (1.0, 0.5)), 2);
    let new = dir.path().join("new.jsonl");
    let renamed = (0..6)
        .map(|i| {
            (
                format!("q{i}"),
                Outcome::Graded(vec![("tests", 1.0, 0.8), ("style_v2", 0.25, 0.2)]),
            )
        })
        .collect();
    evaluation_file(&new, renamed, 2);

    let output = grader()
        .args(["diff", "--json"])
        .arg(&base)
        .arg(&new)
        .output()
        .unwrap();
    let diff: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        diff["subscores_only_in_base"],
        serde_json::json!([{"name": "style", "samples": 6, "mean": 0.5}])
    );
    assert_eq!(
        diff["subscores_only_in_new"],
        serde_json::json!([{"name": "style_v2", "samples": 6, "mean": 0.25}])
    );
    assert_eq!(diff["subscores"].as_array().unwrap().len(), 1);

    grader()
        .arg("diff")
        .arg(&base)
        .arg(&new)
        .assert()
        .code(0)
        .stdout(contains(
            "subscores only in base (1):\n  style  mean 0.5000 over 6 samples",
        ))
        .stdout(contains(
            "subscores only in new (1):\n  style_v2  mean 0.2500 over 6 samples",
        ));
    // Gating on the old name: it is gone from the new results, which fails the gate.
    grader()
        .args(["diff", "--fail-if-worse-on", "style"])
        .arg(&base)
        .arg(&new)
        .assert()
        .code(1)
        .stderr(contains(
            "grader: subscore style is in the base but not in the new results",
        ));
    // A subscore that is new has nothing to be worse than.
    grader()
        .args(["diff", "--fail-if-worse-on", "style_v2"])
        .arg(&base)
        .arg(&new)
        .assert()
        .code(0);
}
