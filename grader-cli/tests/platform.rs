//! What hud's platform writes, read right: hud 0.6.21's grade frame (the reply to
//! `tasks.grade`) and `run.evaluation` (what hud keeps of a rollout) carry `score`, not
//! `reward`. Every command reads the score as the reward; a result with neither, a `score` that
//! is not a finite number, and a file of both forms are said plainly.

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use grader_tests::child::Bounded as _;
use grader_tests::env_process::EnvProcess;
use predicates::str::contains;
use serde_json::Value;
use support::{grader, python, temp_dir};

/// hud's own server serving the probe environment's templates (the Rust probe's twin).
fn probe_script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/env/env_probe.py")
}

fn rollouts_script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hud_rollouts.py")
}

fn stdout_of(args: &[&str], dir: &Path) -> String {
    let output = grader().current_dir(dir).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "grader {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Rollouts driven by hud's own code (`Task.run` with a scripted agent) against hud's own
/// server, written as hud keeps them: every command reads their score as the reward.
#[test]
fn files_hud_wrote_are_read_with_their_score_as_the_reward() {
    let Some(python) = python() else {
        return;
    };
    let mut server = Command::new(&python);
    server
        .arg(probe_script())
        .stderr(std::process::Stdio::null());
    let env = EnvProcess::spawn(server, Duration::from_secs(60));
    let dir = temp_dir();
    let status = Command::new(&python)
        .arg(rollouts_script())
        .arg(env.port.to_string())
        .arg(dir.path())
        .env_remove("HUD_API_KEY")
        .status_bounded();
    assert!(status.success(), "the rollouts failed: {status}");
    drop(env);

    // What hud wrote: `score`, no `reward` (1.0 and 0.0 for the echoes, 0.75 graded).
    let written = std::fs::read_to_string(dir.path().join("evaluations.jsonl")).unwrap();
    let lines: Vec<Value> = written
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let scores: Vec<&Value> = lines.iter().map(|line| &line["score"]).collect();
    assert_eq!(scores, [1.0, 0.0, 0.75]);
    assert!(
        lines.iter().all(|line| line.get("reward").is_none()),
        "{written}"
    );

    let validated = stdout_of(&["validate", "evaluations.jsonl", "grade.json"], dir.path());
    assert!(
        validated.contains(
            "evaluations.jsonl: 3 results read as hud's grade frame (`score` is the reward): \
             0 invalid (0 format error(s)), 0 warning(s): valid"
        ),
        "{validated}"
    );
    assert!(
        validated.contains("grade.json: 1 result read as hud's grade frame"),
        "{validated}"
    );

    let shown = stdout_of(&["show", "grade.json"], dir.path());
    assert!(shown.starts_with("reward 0.7500  partial"), "{shown}");
    let shown = stdout_of(&["show", "evaluations.jsonl"], dir.path());
    for reward in ["reward 1.0000", "reward 0.0000", "reward 0.7500"] {
        assert!(shown.contains(reward), "{shown}");
    }

    let summary: Value = serde_json::from_str(&stdout_of(
        &["summary", "--json", "evaluations.jsonl"],
        dir.path(),
    ))
    .unwrap();
    assert_eq!(summary["scored"], 3);
    assert!(
        (summary["reward"]["mean"].as_f64().unwrap() - 1.75 / 3.0).abs() < 1e-12,
        "{summary}"
    );
    assert_eq!(summary["subscores"]["a"]["mean"], 1.0);

    let diff: Value = serde_json::from_str(&stdout_of(
        &["diff", "--json", "evaluations.jsonl", "evaluations.jsonl"],
        dir.path(),
    ))
    .unwrap();
    assert!(
        (diff["base"]["mean"].as_f64().unwrap() - 1.75 / 3.0).abs() < 1e-12,
        "{diff}"
    );

    stdout_of(
        &["report", "evaluations.jsonl", "-o", "page.html"],
        dir.path(),
    );
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    assert!(page.contains("0.7500"), "the page shows the graded score");

    stdout_of(
        &["export", "--inspect", "evaluations.jsonl", "-o", "log.json"],
        dir.path(),
    );
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("log.json")).unwrap())
            .unwrap();
    let rewards: Vec<f64> = log["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sample| sample["scores"]["reward"]["value"].as_f64().unwrap())
        .collect();
    assert_eq!(rewards, [1.0, 0.0, 0.75]);
}

/// hud's structures, written by hand where no rollout makes them: a best-effort grade after a
/// failed grading (`score` 0 with `isError`), a frame beside a result of the other form.
#[test]
fn a_file_of_both_forms_is_read_and_warned_about() {
    let dir = temp_dir();
    std::fs::write(
        dir.path().join("mixed.jsonl"),
        concat!(
            r#"{"reward": 1.0, "sample_id": "a"}"#,
            "\n",
            r#"{"score": 0.5, "done": true, "isError": false, "sample_id": "b"}"#,
            "\n",
            r#"{"score": 0.0, "answer": "x", "content": "grading broke", "isError": true, "sample_id": "c"}"#,
            "\n",
        ),
    )
    .unwrap();
    let output = grader()
        .current_dir(dir.path())
        .args(["summary", "--json", "mixed.jsonl"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(
            "grader: warning: mixed.jsonl: results of two forms: 1 with `reward`, 2 with \
             `score` and no `reward` (hud's grade frame), the second form from line 2"
        ),
        "{stderr}"
    );
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (summary["scored"].as_u64(), summary["errored"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(summary["reward"]["mean"], 0.75);

    grader()
        .current_dir(dir.path())
        .args(["validate", "mixed.jsonl"])
        .assert()
        .code(0)
        .stdout(contains(
            "mixed.jsonl: line 2: warning: $: this file mixes result forms: this result is \
             hud's grade frame (`score`), line 1 is EvaluationResult (`reward`)",
        ))
        .stdout(contains(
            "mixed.jsonl: 3 results of two forms (1 EvaluationResult with `reward`, 2 hud's \
             grade frame with `score`)",
        ));
    grader()
        .current_dir(dir.path())
        .args(["validate", "--strict", "mixed.jsonl"])
        .assert()
        .code(1);
}

#[test]
fn a_result_without_a_readable_reward_is_refused_by_every_command() {
    let dir = temp_dir();
    let cases = [
        (
            r#"{"done": true, "content": "no reward"}"#,
            "neither `reward` nor `score`",
        ),
        (
            r#"{"score": "0.5"}"#,
            "`score` must be a finite number, found a string: \"0.5\"",
        ),
        (
            r#"{"score": NaN}"#,
            "`NaN` is not JSON: scores and rewards must be finite numbers",
        ),
        (
            r#"{"score": 1e999}"#,
            "`score` 1e999 is not a finite number (too large for a double)",
        ),
    ];
    for (index, (line, message)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("bad{index}.jsonl"));
        std::fs::write(&path, format!("{{\"reward\": 1.0}}\n{line}\n")).unwrap();
        for command in [
            &["summary"][..],
            &["show"],
            &["diff"],
            &["report", "-o", "page.html"],
            &["export", "--inspect", "-o", "log.json"],
        ] {
            let (name, rest) = command.split_first().unwrap();
            let mut args = vec![(*name).to_owned()];
            if *name == "diff" {
                // The bad file is the new side, beside itself as the base.
                args.push(path.display().to_string());
                args.push(path.display().to_string());
                args.push("--json".to_owned());
            } else {
                args.extend(rest.iter().map(|arg| (*arg).to_owned()));
                args.push(path.display().to_string());
            }
            let output = grader()
                .current_dir(dir.path())
                .args(&args)
                .output()
                .unwrap();
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert_eq!(output.status.code(), Some(1), "{args:?}: {all}");
            assert!(all.contains(message), "{args:?}: {all}");
            assert!(
                all.contains(":2: ") || all.contains("line 2: "),
                "{args:?} names the line: {all}"
            );
        }
        grader()
            .arg("validate")
            .arg(&path)
            .assert()
            .code(1)
            .stdout(contains("line 2: $"))
            .stdout(contains(*message));
    }
}
