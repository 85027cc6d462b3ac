//! `grader export --inspect`: the log read back by Inspect AI 0.3.285 itself (the test venv),
//! and served by its viewer to a real headless browser.
//!
//! Why this file is long: one run's results are exported in both formats and read back by
//! Inspect AI's readers and its viewer, with the scripts that read them; the checks share that
//! run, its expectations and the viewer's server.

#![allow(clippy::unwrap_used)]

mod support;

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use grader_core::{EvaluationResult, Grade};
use grader_eval::{ErrorKind, Line};
use predicates::str::contains;
use serde_json::{Value, json};
use support::{browser, grader, info, inspect_python, project_result, sub, temp_dir};

/// A coding environment's run: 20 samples × 2 epochs graded by a test command (its output in
/// info), a judge (its reason) and a penalty for editing the tests that fires now and then; a
/// sample whose grading fails in one epoch only, one that always fails, one with a nested tree,
/// and a repeated line that must not count.
fn run_file(dir: &Path) -> (PathBuf, BTreeMap<(String, u32), Option<f64>>) {
    let mut lines = Vec::new();
    let result = |tests: f64, judge: f64, edited: f64| -> EvaluationResult {
        Grade::from_subscores([
            sub("tests", tests, 0.7).with_info(info(json!({
                "_parameters": {"command": "python -m unittest", "timeout_seconds": 60},
                "exit_code": i32::from(tests < 1.0),
                "stdout": "",
                "stderr": if tests < 1.0 { "FAIL: test_parse\n\nFAILED (failures=1)\n" }
                          else { "Ran 3 tests in 0.01s\n\nOK (skipped=1)\n" },
            }))),
            sub("judge", judge, 0.3).with_info(info(json!({"reason": "The fix is minimal."}))),
            sub("tests_edited", edited, -0.5),
        ])
        .unwrap()
    };
    for index in 0..20u32 {
        for epoch in 1..=2u32 {
            let tests = f64::from((index + epoch) % 3 != 0);
            let judge = f64::from(index % 4 != 0);
            let edited = f64::from(index % 7 == 3 && epoch == 2);
            let mut line = Line::graded(
                format!("q{index}"),
                epoch,
                result(tests, judge, edited),
                0.25 + f64::from(index),
            );
            // Each grading's start, one minute apart, and the sample's texts.
            line.started_at = Some(format!(
                "2026-11-27T10:{:02}:{:02}.250000Z",
                index,
                epoch * 10
            ));
            line.input = Some(format!("Fix the failing test of repository {index}."));
            line.target = Some(format!("patch-{index}"));
            line.answer = Some(format!("I fixed parse() in repository {index}."));
            lines.push(line);
        }
    }
    lines.push(Line::failed(
        "flaky",
        1,
        ErrorKind::Failed,
        "judge timed out after 30s",
        30.0,
    ));
    lines.push(Line::graded("flaky", 2, result(1.0, 1.0, 0.0), 1.0));
    lines.push(Line::failed(
        "broken",
        1,
        ErrorKind::Panicked,
        "index out of bounds",
        0.1,
    ));
    lines.push(Line::failed(
        "broken",
        2,
        ErrorKind::Panicked,
        "index out of bounds",
        0.1,
    ));
    lines.push(Line::graded("tree", 1, project_result(0.5), 2.0));
    // Repeated: the first line of (q0, 1) counts.
    lines.push(Line::graded(
        "q0",
        1,
        EvaluationResult::from_reward(0.123).unwrap(),
        0.1,
    ));

    let mut expected = BTreeMap::new();
    for line in &lines {
        expected
            .entry((line.id.clone(), line.epoch))
            .or_insert_with(|| line.reward());
    }
    let path = dir.join("coding-run.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    for line in &lines {
        file.write_all(&line.to_json_line().unwrap()).unwrap();
    }
    (path, expected)
}

/// Exports `results` into a fresh folder (`logs-eval` or `logs-json`) in `format` (`eval`, the
/// default in a folder, or `json`); returns the folder and the log's file name.
fn export(results: &Path, dir: &Path, format: &str) -> (PathBuf, String) {
    let logs = dir.join(format!("logs-{format}"));
    std::fs::create_dir_all(&logs).unwrap();
    let mut command = grader();
    command.args(["export", "--inspect", "--task", "coding", "-o"]);
    command.arg(&logs).arg(results);
    if format == "json" {
        command.args(["--format", "json"]);
    }
    command.assert().code(0).stdout(contains(
        "Inspect AI eval log of 45 results (23 samples, 42 scored, 3 errored)",
    ));
    let names: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    (logs, names[0].clone())
}

/// Reads the log with Inspect AI, prints what it read, then what Inspect AI's own
/// `recompute_metrics` makes of the samples, and the header read alone; of a `.eval` log, also
/// the samples read one at a time (`read_eval_log_samples`) and the summaries the viewer lists.
const READ_LOG: &str = r#"
import json, sys, warnings
warnings.simplefilter("ignore")
from inspect_ai.log import (read_eval_log, read_eval_log_samples,
                            read_eval_log_sample_summaries, recompute_metrics)

path = sys.stdin.read().strip()
log = read_eval_log(path)
def metrics(results):
    return {s.name: {"metrics": {k: m.value for k, m in s.metrics.items()},
                     "scored": s.scored_samples, "unscored": s.unscored_samples,
                     "reducer": s.reducer} for s in results.scores}
def sample(s):
    return {"id": s.id, "epoch": s.epoch,
            "scores": None if s.scores is None else {
                k: {"value": v.value, "explanation": v.explanation, "metadata": v.metadata,
                    "answer": v.answer}
                for k, v in s.scores.items()},
            "error": None if s.error is None else s.error.message,
            "input": s.input, "target": s.target, "answer": s.output.completion,
            "started_at": s.started_at, "completed_at": s.completed_at,
            "total_time": s.total_time}
def by_key(samples):
    return {f"{s['id']}/{s['epoch']}": s for s in samples}
out = {
    "version": log.version,
    "status": log.status,
    "task": log.eval.task,
    "epochs": log.eval.config.epochs,
    "sample_ids": log.eval.dataset.sample_ids,
    "viewer": None if log.eval.viewer is None else log.eval.viewer.model_dump(exclude_none=True),
    "total_samples": log.results.total_samples,
    "completed_samples": log.results.completed_samples,
    "stats": [log.stats.started_at, log.stats.completed_at],
    "samples": [sample(s) for s in log.samples],
    "metrics": metrics(log.results),
    "reductions": {r.scorer: {str(s.sample_id): s.value for s in r.samples} for r in log.reductions},
}
out["by_key"] = by_key(out["samples"])
out["header"] = metrics(read_eval_log(path, header_only=True).results)
if path.endswith(".eval"):
    out["streamed"] = by_key(sample(s) for s in read_eval_log_samples(path, all_samples_required=False))
    out["summaries"] = {f"{s.id}/{s.epoch}": {"error": s.error, "input": s.input,
                        "reward": s.scores["reward"].value if s.scores else None,
                        "started_at": s.started_at}
                        for s in read_eval_log_sample_summaries(path)}
recompute_metrics(log)
out["recomputed"] = metrics(log.results)
print(json.dumps(out))
"#;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12
}

#[test]
fn inspect_ai_reads_the_log_and_gets_our_rewards() {
    let Some(python) = inspect_python() else {
        return;
    };
    let dir = temp_dir();
    let (results, expected) = run_file(dir.path());
    let mut read = Vec::new();
    for format in ["eval", "json"] {
        let (logs, name) = export(&results, dir.path(), format);
        // Named as Inspect AI names its logs, so that its viewer lists it.
        assert!(
            name.ends_with(&format!(".{format}")) && name.contains("_coding_"),
            "{name}"
        );
        assert_eq!(&name[4..5], "-");
        assert_eq!(&name[10..11], "T");
        let printed = grader_tests::python::run_script(
            &python,
            READ_LOG,
            &logs.join(&name).display().to_string(),
        );
        let log: Value = serde_json::from_str(&printed).unwrap();
        check_log(&log, &expected, &results);
        read.push(log);
    }
    // Both formats hold the same: samples (scores, explanations, texts, times), metrics,
    // reductions, stats. (What `recompute_metrics` makes of them is within an ulp of the
    // metrics in both, checked above: Inspect AI sorts a `.eval` log's samples, and sums them
    // in that order.)
    let (eval, json) = (&read[0], &read[1]);
    assert_eq!(eval["by_key"], json["by_key"]);
    for key in [
        "metrics",
        "header",
        "reductions",
        "stats",
        "viewer",
        "sample_ids",
        "total_samples",
        "completed_samples",
    ] {
        assert_eq!(eval[key], json[key], "{key}");
    }
    // The `.eval` log's samples read one at a time, as `read_eval_log_samples` reads them
    // (from the header's sample ids), are the same; and its summaries, the rows the viewer
    // lists, say the same in short.
    assert_eq!(eval["streamed"], eval["by_key"]);
    let summaries = eval["summaries"].as_object().unwrap();
    assert_eq!(summaries.len(), 45);
    assert_eq!(
        summaries["broken/2"]["error"],
        "panicked: index out of bounds"
    );
    assert_eq!(
        summaries["q3/2"]["reward"],
        eval["by_key"]["q3/2"]["scores"]["reward"]["value"]
    );
    assert_eq!(
        summaries["q3/2"]["input"],
        "Fix the failing test of repository 3."
    );
    assert_eq!(
        summaries["q3/2"]["started_at"],
        "2026-11-27T10:03:20.250000+00:00"
    );
}

/// What Inspect AI read of the log of [`run_file`] (printed by [`READ_LOG`]), checked against
/// the lines and `grader summary`.
fn check_log(log: &Value, expected: &BTreeMap<(String, u32), Option<f64>>, results: &Path) {
    assert_eq!(log["version"], 2);
    assert_eq!(log["status"], "success");
    assert_eq!(log["task"], "coding");
    assert_eq!(log["epochs"], 2);
    // 23 samples × 2 epochs asked for; 42 graded without error.
    assert_eq!(log["total_samples"], 46);
    assert_eq!(log["completed_samples"], 42);

    // One sample per (sample, epoch), in the file's order, the repeated line left out; each
    // scored one with our reward, each failed one with its error and no score.
    let samples = log["samples"].as_array().unwrap();
    assert_eq!(samples.len(), expected.len());
    for sample in samples {
        let key = (
            sample["id"].as_str().unwrap().to_owned(),
            u32::try_from(sample["epoch"].as_u64().unwrap()).unwrap(),
        );
        match expected[&key] {
            Some(reward) => {
                assert_eq!(
                    sample["scores"]["reward"]["value"].as_f64(),
                    Some(reward),
                    "{key:?}"
                );
                assert!(sample["error"].is_null());
            }
            None => {
                assert!(sample["scores"].is_null(), "{key:?}");
                assert!(sample["error"].as_str().unwrap().contains(": "), "{sample}");
            }
        }
    }
    let find = |id: &str, epoch: u64| {
        samples
            .iter()
            .find(|s| s["id"] == id && s["epoch"] == epoch)
            .unwrap()
    };
    assert_eq!(
        find("q0", 1)["scores"]["reward"]["value"],
        json!(expected[&("q0".to_owned(), 1)].unwrap())
    );
    assert_eq!(
        find("flaky", 1)["error"],
        "failed: judge timed out after 30s"
    );
    assert_eq!(find("broken", 2)["error"], "panicked: index out of bounds");
    assert_eq!(find("q3", 1)["total_time"], 3.25);
    // The sample's texts, where its lines hold them, and Inspect AI's empty ones where not.
    let q3 = find("q3", 1);
    assert_eq!(q3["input"], "Fix the failing test of repository 3.");
    assert_eq!(q3["target"], "patch-3");
    assert_eq!(q3["answer"], "I fixed parse() in repository 3.");
    assert_eq!(
        q3["scores"]["reward"]["answer"],
        "I fixed parse() in repository 3."
    );
    let flaky = find("flaky", 2);
    assert_eq!(
        [&flaky["input"], &flaky["target"], &flaky["answer"]],
        ["", "", ""]
    );
    assert!(flaky["scores"]["reward"]["answer"].is_null());
    // The start and end of each grading whose line records them, and of the run.
    assert_eq!(q3["started_at"], "2026-11-27T10:03:10.250000+00:00");
    assert_eq!(q3["completed_at"], "2026-11-27T10:03:13.500000+00:00");
    assert!(flaky["started_at"].is_null() && flaky["completed_at"].is_null());
    assert_eq!(
        log["stats"],
        json!([
            "2026-11-27T10:00:10.250000+00:00",
            "2026-11-27T10:19:39.500000+00:00"
        ])
    );
    // Every column has something in it: the viewer's settings hide none.
    assert!(log["viewer"].is_null(), "{}", log["viewer"]);
    assert_eq!(log["sample_ids"].as_array().unwrap().len(), 23);

    // Each subscore is a score: its value, an explanation a person reads, and its weight and
    // info in the metadata.
    let q0 = &find("q1", 2)["scores"];
    assert_eq!(q0["tests"]["value"], 0.0);
    assert_eq!(
        q0["tests"]["explanation"],
        "exit code 1: FAILED (failures=1)\n\nstderr:\n```\nFAIL: test_parse\n\nFAILED (failures=1)\n```"
    );
    assert_eq!(q0["tests"]["metadata"]["weight"], 0.7);
    assert_eq!(
        q0["tests"]["metadata"]["info"]["_parameters"]["command"],
        "python -m unittest"
    );
    assert_eq!(q0["judge"]["explanation"], "The fix is minimal.");
    assert_eq!(q0["tests_edited"]["metadata"]["weight"], -0.5);
    assert_eq!(q0["tests_edited"]["explanation"], "penalty −0.5: not fired");
    // A penalty's score is its signed effect on the reward (weight × value): a fired one is
    // −0.5, not a 1 that reads as a pass, one that did not fire 0; its value is in the
    // metadata.
    let fired = &find("q3", 2)["scores"]["tests_edited"];
    assert_eq!(fired["value"], -0.5, "{fired}");
    assert_eq!(fired["metadata"]["value"], 1.0, "{fired}");
    assert_eq!(q0["tests_edited"]["value"], 0.0);
    // A fired penalty says so, where a plain score of 1 read as a success.
    assert!(
        find("q3", 2)["scores"]["tests_edited"]["explanation"]
            .as_str()
            .unwrap()
            .starts_with("penalty −0.5: fired"),
        "{}",
        find("q3", 2)["scores"]["tests_edited"]
    );
    // The reward's explanation is the weighted breakdown.
    let breakdown = q0["reward"]["explanation"].as_str().unwrap();
    assert!(
        breakdown.contains("= Σ weight × value:\n- tests: 0.7 × 0.0000 = 0.0000\n"),
        "{breakdown}"
    );
    assert!(
        breakdown.contains("- tests_edited (penalty): −0.5 × 0.0000"),
        "{breakdown}"
    );
    // A tree's children stay in the metadata.
    let checks = &find("tree", 1)["scores"]["checks"];
    assert_eq!(checks["metadata"]["children"][0]["name"], "lint");
    // With nothing of its own to explain it, a subscore is explained by its children.
    assert_eq!(
        checks["explanation"],
        "- **lint** (weight 1): 1\n- **types** (weight 1): 0.5"
    );

    // The metrics: as Inspect AI computes them from these samples, and the reward's as
    // `grader summary` computes it.
    let metrics = &log["metrics"];
    assert_eq!(
        metrics.as_object().unwrap().keys().collect::<Vec<_>>(),
        [
            "reward",
            "tests",
            "judge",
            "tests_edited",
            "checks",
            "deleted tests"
        ]
    );
    assert_eq!(log["header"], log["metrics"]);
    for (name, score) in metrics.as_object().unwrap() {
        let again = &log["recomputed"][name];
        assert_eq!(score["reducer"], "mean");
        assert_eq!(again["scored"], score["scored"], "{name}");
        for metric in ["mean", "stderr"] {
            let ours = score["metrics"][metric].as_f64().unwrap();
            let inspect = again["metrics"][metric].as_f64().unwrap();
            assert!(
                close(ours, inspect),
                "{name} {metric}: {ours} vs Inspect AI's {inspect}"
            );
        }
    }
    assert_eq!(metrics["reward"]["scored"], 23 - 1); // `broken` has no scored epoch
    assert_eq!(metrics["reward"]["unscored"], 1);
    let summary = grader()
        .args(["summary", "--json"])
        .arg(results)
        .output()
        .unwrap();
    let summary: Value = serde_json::from_slice(&summary.stdout).unwrap();
    assert!(close(
        metrics["reward"]["metrics"]["mean"].as_f64().unwrap(),
        summary["reward"]["mean"].as_f64().unwrap()
    ));
    assert!(close(
        metrics["reward"]["metrics"]["stderr"].as_f64().unwrap(),
        summary["reward"]["stderr"].as_f64().unwrap()
    ));
    // Each sample's epochs reduced to their mean: `flaky` by its one scored epoch.
    assert_eq!(
        log["reductions"]["reward"]["flaky"],
        find("flaky", 2)["scores"]["reward"]["value"]
    );
    assert!(log["reductions"]["reward"].get("broken").is_none());
}

#[test]
fn a_file_name_the_viewer_does_not_list_is_pointed_out() {
    let dir = temp_dir();
    let (results, _) = run_file(dir.path());
    let log = dir.path().join("run.json");
    grader()
        .args(["export", "--inspect", "-o"])
        .arg(&log)
        .arg(&results)
        .assert()
        .code(0)
        .stderr(contains("give a folder as --output"));
    let text = std::fs::read_to_string(&log).unwrap();
    let parsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed["eval"]["task"], "coding-run");
    // The header comes before the samples, as Inspect AI's streaming header reader needs.
    let keys: Vec<&String> = parsed.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "version",
            "status",
            "eval",
            "plan",
            "results",
            "stats",
            "invalidated",
            "tags",
            "metadata",
            "samples",
            "reductions"
        ]
    );
}

#[test]
fn standard_input_and_a_missing_format_are_refused() {
    grader()
        .args(["export", "--inspect", "-o", "x.json", "-"])
        .assert()
        .code(2)
        .stderr(contains("standard input cannot be read again"));
    grader()
        .args(["export", "-o", "x.json", "results.jsonl"])
        .assert()
        .code(2)
        .stderr(contains("--inspect"));
    // The format is the name's: one that says none, or the other one, is refused before
    // anything is read or written.
    let dir = temp_dir();
    let (results, _) = run_file(dir.path());
    for (output, format, says) in [
        (
            "run.zip",
            None,
            "run.zip: name the log .eval (Inspect AI's zip",
        ),
        (
            "run.json",
            Some("eval"),
            "run.json: --format eval but the name ends in .json",
        ),
    ] {
        let mut command = grader();
        command
            .args(["export", "--inspect", "-o"])
            .arg(dir.path().join(output))
            .arg(&results);
        if let Some(format) = format {
            command.args(["--format", format]);
        }
        command.assert().code(2).stderr(contains(says));
        assert!(!dir.path().join(output).exists());
    }
}

/// `GET path` from 127.0.0.1:`port`: the status and the body, or `None` when nothing answers.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split(' ').nth(1)?.parse().ok()?;
    let body = response.split_once("\r\n\r\n")?.1.to_owned();
    Some((status, body))
}

/// `text` with every byte but letters, digits and `-._~` percent-encoded.
fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The lines of `results` without their samples' texts and start times, as lines written
/// before the runner recorded them, in `plain.jsonl` beside it.
fn without_texts(results: &Path) -> PathBuf {
    let path = results.with_file_name("plain.jsonl");
    let mut out = Vec::new();
    for text in std::fs::read_to_string(results).unwrap().lines() {
        let mut line: Line = serde_json::from_str(text).unwrap();
        (line.started_at, line.input, line.target, line.answer) = (None, None, None, None);
        out.extend(line.to_json_line().unwrap());
    }
    std::fs::write(&path, out).unwrap();
    path
}

/// `inspect view` serving `logs` on a free port of 127.0.0.1, once it answers; the port.
fn inspect_view(python: &Path, logs: &Path) -> (browser::Group, u16) {
    use std::os::unix::process::CommandExt as _;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // `python -m inspect_ai` rather than the venv's `inspect` script, whose first line names
    // the interpreter of wherever the venv was made.
    let server = std::process::Command::new(python)
        .args(["-m", "inspect_ai", "view", "--log-dir"])
        .arg(logs)
        .args(["--port", &port.to_string(), "--host", "127.0.0.1"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let server = browser::Group(server);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !matches!(http_get(port, "/api/log-files"), Some((200, _))) {
        assert!(
            std::time::Instant::now() < deadline,
            "inspect view did not answer"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    (server, port)
}

/// The viewer's page of the log `name` in headless Chromium, once it lists at least five
/// samples: the id cells' texts, how many Input, Target and Answer cells there are, and the
/// page's text; a screenshot is saved as `shot`.
fn view_samples(chromium: &Path, python: &Path, port: u16, name: &str, shot: &str) -> Vec<Value> {
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("export");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join(shot);
    let _ = std::fs::remove_file(&shot);
    let cells =
        |id: &str| format!(r#"Array.from(document.querySelectorAll('[data-col-id="{id}"]'))"#);
    let values = browser::look(
        chromium,
        python,
        &browser::Look {
            url: &format!(
                "http://127.0.0.1:{port}/#/tasks/{}",
                name.replace('+', "%2B")
            ),
            wait: &format!("{}.length >= 5", cells("sampleId")),
            timeout_secs: 60,
            evaluate: &[
                &format!("{}.map(e => e.textContent)", cells("sampleId")),
                &format!("{}.length", cells("input")),
                &format!("{}.length", cells("target")),
                &format!("{}.length", cells("answer")),
                "document.body.innerText",
            ],
            screenshot: Some(&shot),
            size: (1400, 900),
        },
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
    eprintln!("screenshot of inspect view: {}", shot.display());
    values
}

#[test]
fn inspect_view_serves_the_logs_and_shows_their_samples() {
    let Some(python) = inspect_python() else {
        return;
    };
    let Some(chromium) = browser::chromium() else {
        return;
    };
    let dir = temp_dir();
    let (results, _) = run_file(dir.path());
    // A `.eval` log of lines with texts and times, and a `.json` log of the same lines
    // without them, side by side.
    let (logs, eval_name) = export(&results, dir.path(), "eval");
    let plain = without_texts(&results);
    let (json_logs, json_name) = export(&plain, dir.path(), "json");
    std::fs::rename(json_logs.join(&json_name), logs.join(&json_name)).unwrap();
    let (_server, port) = inspect_view(&python, &logs);

    // The server lists both logs (by their URIs) and reads each whole (its own EvalLog
    // validation).
    let (_, listing) = http_get(port, "/api/log-files").unwrap();
    let listing: Value = serde_json::from_str(&listing).unwrap();
    let files = listing["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{listing}");
    for name in [&eval_name, &json_name] {
        let file = files
            .iter()
            .find(|f| f["name"].as_str().unwrap().ends_with(&format!("/{name}")))
            .unwrap_or_else(|| panic!("{name} not listed: {listing}"));
        let uri = file["name"].as_str().unwrap();
        assert!(uri.starts_with("file:///"), "{uri}");
        assert_eq!(file["task"], "coding");
        let (status, body) =
            http_get(port, &format!("/api/logs/{}", percent_encoded(uri))).unwrap();
        assert_eq!(status, 200, "{body}");
        let served: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(served["samples"].as_array().unwrap().len(), 45);
    }

    // The viewer, in a browser, lists the samples of each: sorted by id, each (sample, epoch)
    // a row.
    let first_ids = ["broken", "broken", "flaky", "flaky", "q0", "q0", "q1", "q1"];
    let eval = view_samples(
        &chromium,
        &python,
        port,
        &eval_name,
        "inspect-view-eval.png",
    );
    let ids: Vec<&str> = eval[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(ids.starts_with(&first_ids), "{ids:?}");
    // Input, target and answer are columns, with the samples' texts; the run's duration is
    // its real one (its first grading started at 10:00:10.25, its last ended at 10:19:39.5).
    for (column, count) in ["input", "target", "answer"].iter().zip(&eval[1..4]) {
        assert!(count.as_u64().unwrap() >= 5, "{column}: {count}");
    }
    let text = eval[4].as_str().unwrap();
    assert!(
        text.contains("Fix the failing test of repository 0."),
        "{text}"
    );
    assert!(text.contains("I fixed parse() in repository 0."), "{text}");
    assert!(text.contains("19 min 29 sec"), "{text}");
    assert!(!text.contains("NaN"), "{text}");

    // A sample's scores, as the viewer shows them: a fired penalty is its effect on the
    // reward, −0.5, never a 1 that reads as a pass.
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("export");
    let shot = shots.join("inspect-view-penalty.png");
    let scoring = browser::look(
        &chromium,
        &python,
        &browser::Look {
            url: &format!(
                "http://127.0.0.1:{port}/#/tasks/{}/samples/sample/q3/2/scoring",
                eval_name.replace('+', "%2B")
            ),
            wait: "document.body.innerText.includes('tests_edited')",
            timeout_secs: 60,
            evaluate: &["document.body.innerText"],
            screenshot: Some(&shot),
            size: (1400, 900),
        },
    );
    let text = scoring[0].as_str().unwrap();
    // Each score's value, then its name (the tests passed, the penalty fired).
    assert!(text.contains("1\ntests\n"), "{text}");
    assert!(text.contains("-0.5\ntests_edited"), "{text}");
    assert!(!text.contains("1\ntests_edited"), "{text}");

    // Without texts, the columns are hidden rather than empty, and without recorded times
    // the duration is still a number.
    let json = view_samples(
        &chromium,
        &python,
        port,
        &json_name,
        "inspect-view-json.png",
    );
    let ids: Vec<&str> = json[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(ids.starts_with(&first_ids), "{ids:?}");
    assert_eq!(&json[1..4], [0, 0, 0], "input, target and answer cells");
    let text = json[4].as_str().unwrap();
    assert!(text.contains("coding"), "{text}");
    assert!(!text.contains("NaN"), "{text}");
}

/// Reads the log with Inspect AI and prints, per sample, every subscore it holds (the scores
/// but the reward, and those in the reward's `other_subscores`) by name, and the header's
/// score names.
const READ_SUBSCORES: &str = r#"
import json, sys, warnings
warnings.simplefilter("ignore")
from inspect_ai.log import read_eval_log

path = sys.stdin.read().strip()
log = read_eval_log(path)
samples = {}
for s in log.samples:
    values = {k: v.value for k, v in s.scores.items() if k != "reward"}
    others = s.scores["reward"].metadata.get("other_subscores", [])
    for sub in others:
        values[sub["name"]] = sub["value"]
    samples[s.id] = {"scores": len(s.scores), "others": len(others), "values": values,
                     "reward": s.scores["reward"].value}
print(json.dumps({"samples": samples,
                  "header": [score.name for score in log.results.scores]}))
"#;

#[test]
fn results_of_ten_thousand_subscores_each_lose_nothing_and_say_so() {
    let Some(python) = inspect_python() else {
        return;
    };
    let dir = temp_dir();
    let results = dir.path().join("wide.jsonl");
    let mut text = Vec::new();
    let value = |sample: usize, check: usize| f64::from((sample + check).is_multiple_of(3));
    for sample in 0..4 {
        let subscores: Vec<_> = (0..10_000)
            .map(|check| sub(&format!("check {check}"), value(sample, check), 1.0))
            .collect();
        let line = Line::graded(
            format!("s{sample}"),
            1,
            Grade::from_subscores(subscores).unwrap(),
            0.1,
        );
        text.extend(line.to_json_line().unwrap());
    }
    std::fs::write(&results, text).unwrap();
    for format in ["eval", "json"] {
        let log = dir.path().join(format!("wide.{format}"));
        grader()
            .args(["export", "--inspect", "-o"])
            .arg(&log)
            .arg(&results)
            .assert()
            .code(0)
            .stderr(contains(
                "10000 subscore names: Inspect AI's viewer shows each score as a column, so \
                 the log has the reward and the first 99 of them as scores; the other 9901 \
                 are in each sample's `reward` score, metadata `other_subscores`",
            ))
            .stdout(contains("Inspect AI eval log of 4 results"));
        let printed =
            grader_tests::python::run_script(&python, READ_SUBSCORES, &log.display().to_string());
        let read: Value = serde_json::from_str(&printed).unwrap();
        let header = read["header"].as_array().unwrap();
        assert_eq!(header.len(), 100, "{format}");
        assert_eq!(header[0], "reward");
        assert_eq!(header[99], "check 98");
        for sample in 0..4 {
            let got = &read["samples"][format!("s{sample}")];
            assert_eq!(got["scores"], 100, "{format}");
            assert_eq!(got["others"], 9_901, "{format}");
            // Every subscore, with its value: nothing is left out.
            let values = got["values"].as_object().unwrap();
            assert_eq!(values.len(), 10_000, "{format}");
            for check in 0..10_000 {
                assert_eq!(
                    values[&format!("check {check}")].as_f64(),
                    Some(value(sample, check)),
                    "{format} s{sample} check {check}"
                );
            }
        }
    }
}

/// The runner writes what a sample gives (its input, target and answer) and when each grading
/// started into the lines, and the export shows them: the texts as the sample's, and the
/// start and end around the run.
#[test]
fn the_runners_lines_carry_the_samples_texts_and_start_into_the_log() {
    use grader_eval::Sample as _;
    let dir = temp_dir();
    let results = dir.path().join("run.jsonl");
    let samples: Vec<_> = (0..6)
        .map(|index| {
            let sample = (format!("q{index}"), index);
            if index % 2 == 0 {
                sample
                    .with_input(format!("What is {index} + {index}?"))
                    .with_target((2 * index).to_string())
                    .with_answer(format!("{}", 2 * index + index % 4))
            } else {
                // A sample that gives none: its lines hold none.
                grader_eval::Described::new(sample)
            }
        })
        .collect();
    let before = std::time::SystemTime::now();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(
            grader_eval::Evaluation::new(&results)
                .handle_interrupts(false)
                .progress(false)
                .run(samples, |sample, _epoch| async move {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    Grade::from_subscores([sub("exact", f64::from(sample.1 % 4 == 0), 1.0)])
                }),
        )
        .unwrap();
    let after = std::time::SystemTime::now();
    let lines: Vec<Line> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|text| serde_json::from_str(text).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    for line in &lines {
        let started = humantime::parse_rfc3339(line.started_at.as_deref().unwrap()).unwrap();
        assert!(before <= started && started <= after, "{line:?}");
        assert!(line.duration_secs >= 0.02, "{line:?}");
        let index: u32 = line.id[1..].parse().unwrap();
        if index.is_multiple_of(2) {
            assert_eq!(
                line.input.as_deref(),
                Some(format!("What is {index} + {index}?").as_str())
            );
            assert_eq!(line.target, Some((2 * index).to_string()));
            assert_eq!(line.answer, Some(format!("{}", 2 * index + index % 4)));
        } else {
            assert_eq!(
                (&line.input, &line.target, &line.answer),
                (&None, &None, &None)
            );
        }
    }
    // The keys come after the line's own, and only when there is something in them.
    let text = std::fs::read_to_string(&results).unwrap();
    let q1 = text.lines().find(|l| l.contains("\"id\":\"q1\"")).unwrap();
    assert!(!q1.contains("\"input\""), "{q1}");
    assert!(
        q1.contains("},\"started_at\":\"") && q1.ends_with("Z\"}"),
        "{q1}"
    );

    let log = dir.path().join("run.json");
    grader()
        .args(["export", "--inspect", "-o"])
        .arg(&log)
        .arg(&results)
        .assert()
        .code(0);
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    let sample = |id: &str| {
        log["samples"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()
    };
    assert_eq!(sample("q2")["input"], "What is 2 + 2?");
    assert_eq!(sample("q2")["target"], "4");
    assert_eq!(sample("q2")["output"]["completion"], "6");
    assert_eq!(sample("q2")["scores"]["reward"]["answer"], "6");
    assert_eq!(sample("q1")["input"], "");
    assert!(sample("q1").get("output").is_none());
    // Some samples have texts: no column is hidden.
    assert!(log["eval"].get("viewer").is_none(), "{}", log["eval"]);
    let started = humantime::parse_rfc3339_weak(
        log["stats"]["started_at"]
            .as_str()
            .unwrap()
            .trim_end_matches("+00:00"),
    )
    .unwrap();
    let completed = humantime::parse_rfc3339_weak(
        log["stats"]["completed_at"]
            .as_str()
            .unwrap()
            .trim_end_matches("+00:00"),
    )
    .unwrap();
    assert!(before <= started && started < completed && completed <= after);
}
