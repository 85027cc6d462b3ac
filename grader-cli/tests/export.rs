//! `grader export --inspect`: the log read back by Inspect AI 0.3.285 itself (the test venv),
//! and served by its viewer to a real headless browser.

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
            lines.push(Line::graded(
                format!("q{index}"),
                epoch,
                result(tests, judge, edited),
                0.25 + f64::from(index),
            ));
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

/// Exports `results` into a fresh folder; returns the folder and the log's file name.
fn export(results: &Path, dir: &Path) -> (PathBuf, String) {
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    grader()
        .args(["export", "--inspect", "--task", "coding", "-o"])
        .arg(&logs)
        .arg(results)
        .assert()
        .code(0)
        .stdout(contains(
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
/// `recompute_metrics` makes of the samples, and the header read alone.
const READ_LOG: &str = r#"
import json, sys, warnings
warnings.simplefilter("ignore")
from inspect_ai.log import read_eval_log, recompute_metrics

path = sys.stdin.read().strip()
log = read_eval_log(path)
def metrics(results):
    return {s.name: {"metrics": {k: m.value for k, m in s.metrics.items()},
                     "scored": s.scored_samples, "unscored": s.unscored_samples,
                     "reducer": s.reducer} for s in results.scores}
out = {
    "version": log.version,
    "status": log.status,
    "task": log.eval.task,
    "epochs": log.eval.config.epochs,
    "total_samples": log.results.total_samples,
    "completed_samples": log.results.completed_samples,
    "samples": [
        {"id": s.id, "epoch": s.epoch,
         "scores": None if s.scores is None else {
             k: {"value": v.value, "explanation": v.explanation, "metadata": v.metadata}
             for k, v in s.scores.items()},
         "error": None if s.error is None else s.error.message,
         "total_time": s.total_time}
        for s in log.samples
    ],
    "metrics": metrics(log.results),
    "reductions": {r.scorer: {str(s.sample_id): s.value for s in r.samples} for r in log.reductions},
}
out["header"] = metrics(read_eval_log(path, header_only=True).results)
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
    let (logs, name) = export(&results, dir.path());
    // Named as Inspect AI names its logs, so that its viewer lists it.
    assert!(
        name.ends_with(".json") && name.contains("_coding_"),
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
    assert_eq!(find("q3", 2)["scores"]["tests_edited"]["value"], 1.0);
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
        .arg(&results)
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

#[test]
fn inspect_view_serves_the_log_and_shows_its_samples() {
    use std::os::unix::process::CommandExt as _;
    let Some(python) = inspect_python() else {
        return;
    };
    let Some(chromium) = browser::chromium() else {
        return;
    };
    let dir = temp_dir();
    let (results, _) = run_file(dir.path());
    let (logs, name) = export(&results, dir.path());

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // `python -m inspect_ai` rather than the venv's `inspect` script, whose first line names
    // the interpreter of wherever the venv was made.
    let server = std::process::Command::new(&python)
        .args(["-m", "inspect_ai", "view", "--log-dir"])
        .arg(&logs)
        .args(["--port", &port.to_string(), "--host", "127.0.0.1"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let _server = browser::Group(server);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let listing = loop {
        if let Some((200, body)) = http_get(port, "/api/log-files") {
            break body;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "inspect view did not answer"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    // The server lists the log (by its URI) and reads it whole (its own EvalLog validation).
    let listing: Value = serde_json::from_str(&listing).unwrap();
    let uri = listing["files"][0]["name"].as_str().unwrap();
    assert!(
        uri.starts_with("file:///") && uri.ends_with(&format!("/{name}")),
        "{listing}"
    );
    assert_eq!(listing["files"][0]["task"], "coding");
    let (status, body) = http_get(port, &format!("/api/logs/{}", percent_encoded(uri))).unwrap();
    assert_eq!(status, 200, "{body}");
    let served: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(served["samples"].as_array().unwrap().len(), 45);

    // The viewer, in a browser, shows the sample list.
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("export");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join("inspect-view.png");
    let _ = std::fs::remove_file(&shot);
    let cells = r#"Array.from(document.querySelectorAll('[data-col-id="sampleId"]'))"#;
    let values = browser::look(
        &chromium,
        &python,
        &browser::Look {
            url: &format!(
                "http://127.0.0.1:{port}/#/tasks/{}",
                name.replace('+', "%2B")
            ),
            wait: &format!("{cells}.length >= 5"),
            timeout_secs: 60,
            evaluate: &[
                &format!("{cells}.map(e => e.textContent)"),
                "document.body.innerText",
            ],
            screenshot: Some(&shot),
            size: (1400, 900),
        },
    );
    let ids: Vec<&str> = values[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    // The viewer sorts the samples by id; each (sample, epoch) is a row.
    assert!(
        ids.starts_with(&["broken", "broken", "flaky", "flaky", "q0", "q0", "q1", "q1"]),
        "{ids:?}"
    );
    let text = values[1].as_str().unwrap();
    assert!(text.contains("coding"), "{text}");
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
    eprintln!("screenshot of inspect view: {}", shot.display());
}
