//! hud's own files, read as they are, on files hud 0.6.21's own code wrote: `run.evaluation`
//! of a rollout that failed before launch is `{}`, one result not graded (counted as errored,
//! named, never a 0 and never a refused file); and the span files hud's exporter writes
//! (`HUD_TELEMETRY_LOCAL_DIR/<trace_id>.jsonl`) are read directly, each trace one result, by
//! every command.

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use grader_tests::child::Bounded as _;
use grader_tests::env_process::EnvProcess;
use serde_json::Value;
use support::{grader, python, temp_dir};

/// Runs four rollouts with hud's own code against hud's own server (the probe's templates),
/// span export on: two echoes (1 and 0), a graded task (0.75), and one that fails before
/// launch. Returns the folder with `evaluations.jsonl` and `spans/`.
fn hud_wrote(python: &Path) -> tempfile::TempDir {
    let probe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/env/env_probe.py");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hud_spans.py");
    let mut server = Command::new(python);
    server.arg(probe).stderr(std::process::Stdio::null());
    let env = EnvProcess::spawn(server, Duration::from_secs(60));
    let dir = temp_dir();
    let output = Command::new(python)
        .arg(script)
        .arg(env.port.to_string())
        .arg(dir.path())
        .env("HUD_TELEMETRY_LOCAL_DIR", dir.path().join("spans"))
        .env_remove("HUD_API_KEY")
        .output_bounded();
    assert!(
        output.status.success(),
        "the rollouts failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    drop(env);
    dir
}

fn span_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("spans"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

fn run(dir: &Path, args: &[&str]) -> (String, String) {
    let output = grader().current_dir(dir).args(args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    );
    assert!(output.status.success(), "grader {args:?}: {stderr}");
    (stdout, stderr)
}

#[test]
fn hud_s_files_are_read_as_hud_wrote_them() {
    let Some(python) = python() else {
        return;
    };
    let dir = hud_wrote(&python);
    let path = dir.path();

    // What hud wrote: the last rollout's evaluation is `{}`.
    let written = std::fs::read_to_string(path.join("evaluations.jsonl")).unwrap();
    assert_eq!(written.lines().last(), Some("{}"), "{written}");

    // Every command reads it: three scored, one errored (not graded), named in a note.
    let (stdout, stderr) = run(path, &["summary", "--json", "evaluations.jsonl"]);
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (summary["scored"].as_u64(), summary["errored"].as_u64()),
        (Some(3), Some(1))
    );
    assert!((summary["reward"]["mean"].as_f64().unwrap() - 1.75 / 3.0).abs() < 1e-12);
    assert!(
        stderr.contains("1 result not graded by hud") && stderr.contains("evaluations.jsonl:4"),
        "{stderr}"
    );
    let (validated, _) = run(path, &["validate", "evaluations.jsonl"]);
    assert!(
        validated.contains(
            "1 not graded: `{}`, hud's evaluation of a rollout that failed before launch)"
        ) && validated.ends_with(": valid\n"),
        "{validated}"
    );
    let (shown, _) = run(path, &["show", "evaluations.jsonl", "--line", "4"]);
    assert!(
        shown.contains(
            "error: failed: not graded: hud wrote `{}` (a rollout that failed before launch)"
        ),
        "{shown}"
    );

    // The span files, one a trace: the same rewards, and the rollout that failed before launch
    // not graded, with hud's own error.
    let spans = span_files(path);
    assert_eq!(spans.len(), 4, "{spans:?}");
    let names: Vec<String> = spans
        .iter()
        .map(|file| file.strip_prefix(path).unwrap().display().to_string())
        .collect();
    let mut args = vec!["summary", "--json"];
    args.extend(names.iter().map(String::as_str));
    let (stdout, stderr) = run(path, &args);
    let from_spans: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(from_spans["scored"], 3, "{from_spans}");
    assert_eq!(from_spans["errored"], 1, "{from_spans}");
    assert_eq!(from_spans["reward"]["mean"], summary["reward"]["mean"]);
    assert!(stderr.contains("1 result not graded by hud"), "{stderr}");

    let shown_all: String = names
        .iter()
        .map(|name| run(path, &["show", name]).0)
        .collect();
    assert_eq!(shown_all.matches("reward 1.0000").count(), 1, "{shown_all}");
    assert_eq!(shown_all.matches("reward 0.0000").count(), 1, "{shown_all}");
    assert!(shown_all.contains("reward 0.7500  partial"), "{shown_all}");
    assert!(
        shown_all.contains("error: failed: not graded: [starting task]")
            && shown_all.contains("unknown task: 'no-such-task'"),
        "{shown_all}"
    );
    // Each sample is the rollout's run id, the trace's file name.
    let first_id = spans[0].file_stem().unwrap().to_string_lossy().into_owned();
    assert!(
        shown_all.contains(&format!("── sample {first_id} (line ")),
        "{shown_all}"
    );

    let mut args = vec!["validate"];
    args.extend(names.iter().map(String::as_str));
    let (validated, _) = run(path, &args);
    assert_eq!(validated.matches(": valid\n").count(), 4, "{validated}");

    // The report and the Inspect AI export take them too: the prompt is the sample's input,
    // the answer sent its answer.
    let mut args = vec!["report", "-o", "page.html"];
    args.extend(names.iter().map(String::as_str));
    run(path, &args);
    let page = std::fs::read_to_string(path.join("page.html")).unwrap();
    assert!(
        page.contains("Repeat right") && page.contains("0.7500"),
        "the page"
    );
    let mut args = vec!["export", "--inspect", "-o", "log.json"];
    args.extend(names.iter().map(String::as_str));
    run(path, &args);
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(path.join("log.json")).unwrap()).unwrap();
    let inputs: Vec<&str> = log["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|sample| sample["input"].as_str())
        .collect();
    assert!(inputs.contains(&"Repeat left"), "{inputs:?}");

    // Joined with `cat`, read from standard input, each trace is still one result.
    let mut joined = Vec::new();
    for file in &spans {
        joined.extend(std::fs::read(file).unwrap());
    }
    let output = grader()
        .current_dir(path)
        .args(["summary", "--json", "-"])
        .write_stdin(joined)
        .output()
        .unwrap();
    assert!(output.status.success());
    let piped: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (piped["scored"].as_u64(), piped["errored"].as_u64()),
        (Some(3), Some(1))
    );
}
