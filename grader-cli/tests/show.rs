//! `grader show` on real files: the tree is grader-core's `Display`, made terminal-safe and
//! coloured only on a terminal without `NO_COLOR`.

#![allow(clippy::unwrap_used)]

mod support;

use predicates::prelude::*;
use predicates::str::contains;
use support::{
    Bounded as _, child, grader, project_result, python, python_writes, temp_dir, write_lines,
};

#[test]
fn a_json_file_shows_the_same_tree_as_display() {
    let dir = temp_dir();
    let path = dir.path().join("result.json");
    let result = project_result(0.5);
    std::fs::write(&path, serde_json::to_string_pretty(&result).unwrap()).unwrap();

    grader()
        .arg("show")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(result.to_string());
    grader()
        .args(["show", "--params"])
        .arg(&path)
        .assert()
        .code(0)
        .stdout(format!("{result:#}"))
        .stdout(contains(
            r#"parameters {"command":"pytest -q","timeout":60}"#,
        ));
}

#[test]
fn summary_leaves_out_every_info() {
    let dir = temp_dir();
    let path = dir.path().join("result.json");
    std::fs::write(&path, serde_json::to_string(&project_result(0.5)).unwrap()).unwrap();
    let output = grader()
        .args(["show", "--summary"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("├─ tests"), "{stdout}");
    assert!(stdout.contains("│  └─ types"), "{stdout}");
    assert!(!stdout.contains("exit code"), "{stdout}");
    assert!(!stdout.contains("parameters"), "{stdout}");
    grader()
        .args(["show", "--summary", "--params"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(contains("cannot be used with"));
}

#[test]
fn json_lines_show_each_line_and_filter_by_line_or_sample() {
    let dir = temp_dir();
    let path = dir.path().join("results.jsonl");
    write_lines(
        &path,
        &[
            project_result(1.0),
            project_result(0.0),
            project_result(0.5),
        ],
    );
    let output = grader().arg("show").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.matches("── sample").count(), 3, "{stdout}");
    assert!(
        stdout.contains("── sample s1 (line 2)\nreward 0.0000\n"),
        "{stdout}"
    );

    grader()
        .args(["show", "--line", "3"])
        .arg(&path)
        .assert()
        .code(0)
        .stdout(format!("── sample s2 (line 3)\n{}", project_result(0.5)));
    grader()
        .args(["show", "--sample", "s0,s2"])
        .arg(&path)
        .assert()
        .code(0)
        .stdout(contains("sample s0"))
        .stdout(contains("sample s2"))
        .stdout(contains("sample s1").not());
}

#[test]
fn lines_that_are_not_results_are_reported_and_fail_the_command() {
    let dir = temp_dir();
    let path = dir.path().join("mixed.jsonl");
    std::fs::write(
        &path,
        "{\"reward\": 1}\n{\"reward\": NaN}\n{\"reward\":0.5,\n",
    )
    .unwrap();
    grader()
        .arg("show")
        .arg(&path)
        .assert()
        .code(1)
        .stdout(contains("── line 1\nreward 1.0000\n"))
        .stderr(contains("2 line(s) could not be shown"))
        .stderr(contains("line 2: not a result"))
        .stderr(contains("line 3: not a result: EOF while parsing"));
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"subscores": [{"name": "a", "value": 2}]}"#).unwrap();
    grader()
        .arg("show")
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(contains("bad.json: not a result"))
        .stderr(contains("`grader validate` says more"));
}

#[test]
fn files_written_by_the_python_sdk_are_shown() {
    let Some(python) = python() else { return };
    let dir = temp_dir();
    let path = dir.path().join("python.jsonl");
    python_writes(&python, support::PYTHON_WRITES_LINES, &path);
    grader()
        .arg("show")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(contains(
            "── sample py-0 (line 1)\nreward 0.7500  two graders\n",
        ))
        .stdout(contains("   └─ format"))
        .stdout(contains(r#"{"why":"tabs"}"#))
        .stdout(contains("── line 2\nreward 0.2500\n"))
        .stdout(contains("reward 0.0000  (evaluation error)"));
}

#[test]
fn untrusted_text_never_reaches_the_terminal_raw() {
    let dir = temp_dir();
    let path = dir.path().join("hostile.json");
    std::fs::write(
        &path,
        r#"{"reward": 1, "content": "\u001b[2J", "subscores": [{"name": "a\u001b]0;x\u0007\u202e", "value": 1, "info": {"error": "\u001b[31m"}}]}"#,
    )
    .unwrap();
    let output = grader()
        .args(["show", "--color", "always"])
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    // Our own colours are there; none of the file's escapes are.
    assert!(stdout.contains("\u{1b}[1m"), "{stdout:?}");
    assert!(!stdout.contains("\u{1b}[2J"), "{stdout:?}");
    assert!(!stdout.contains("\u{1b}]0;"), "{stdout:?}");
    assert!(!stdout.contains('\u{202e}'), "{stdout:?}");
    assert!(stdout.contains("a\\u{1b}]0;x\\u{7}\\u{202e}"), "{stdout:?}");
}

/// Runs `grader show --color auto FILE` on a pseudo-terminal (util-linux `script`), with or
/// without `NO_COLOR`, and returns what the terminal received.
fn on_a_terminal(file: &std::path::Path, no_color: bool) -> Option<String> {
    let script = std::path::Path::new("/usr/bin/script");
    if !script.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "util-linux `script` is required under CI for the terminal test"
        );
        eprintln!("skipping the terminal test: /usr/bin/script is not installed");
        return None;
    }
    let command = format!("{} show {}", env!("CARGO_BIN_EXE_grader"), file.display());
    let mut run = std::process::Command::new(script);
    run.args(["-qec", &command, "/dev/null"])
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR")
        .env("TERM", "xterm-256color");
    if no_color {
        run.env("NO_COLOR", "1");
    }
    let output = run.output_bounded();
    assert!(output.status.success(), "{output:?}");
    Some(String::from_utf8(output.stdout).unwrap())
}

#[test]
fn colour_on_a_terminal_only_and_never_with_no_color() {
    let dir = temp_dir();
    let path = dir.path().join("result.json");
    std::fs::write(&path, serde_json::to_string(&project_result(0.5)).unwrap()).unwrap();

    let piped = grader().arg("show").arg(&path).output().unwrap();
    assert!(!piped.stdout.contains(&0x1b), "colour on a pipe");

    let Some(terminal) = on_a_terminal(&path, false) else {
        return;
    };
    assert!(terminal.contains("\u{1b}[1mreward 0.5000"), "{terminal:?}");
    assert!(terminal.contains("value \u{1b}[33m0.5000"), "{terminal:?}");
    let plain = on_a_terminal(&path, true).unwrap();
    assert!(!plain.contains('\u{1b}'), "{plain:?}");
    assert!(plain.contains("reward 0.5000"), "{plain:?}");
}

#[test]
fn the_runners_lines_show_sample_epoch_and_failures() {
    let dir = temp_dir();
    let path = dir.path().join("eval.jsonl");
    let list = vec![
        (
            "q1".to_owned(),
            support::Outcome::Graded(vec![("tests", 1.0, 1.0)]),
        ),
        (
            "q2".to_owned(),
            support::Outcome::Fails("judge unreachable"),
        ),
    ];
    support::evaluation_file(&path, list, 2);
    let output = grader()
        .args(["show", "--sample", "q2"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        stdout.matches("── sample q2, epoch ").count(),
        2,
        "{stdout}"
    );
    assert!(
        stdout.contains("error: failed: judge unreachable\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("q1"), "{stdout}");
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    use std::io::Read as _;
    let dir = temp_dir();
    let path = dir.path().join("many.jsonl");
    let results: Vec<_> = (0..5000).map(|_| project_result(1.0)).collect();
    write_lines(&path, &results);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_grader"))
        .arg("show")
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe is closed here, with most of the output still to come.
    let output = child::wait_with_output(child, "grader show");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn a_json_file_may_hold_one_evaluation_line() {
    let dir = temp_dir();
    let path = dir.path().join("line.json");
    let line = grader_eval::Line::graded("q7", 2, project_result(1.0), 0.5);
    std::fs::write(&path, serde_json::to_string_pretty(&line).unwrap()).unwrap();
    grader()
        .arg("show")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(format!(
            "── sample q7, epoch 2 (line 1)\n{}",
            project_result(1.0)
        ));
}

/// A result whose command printed far more than the tree's one line: 200 lines of stdout with
/// a colour code and a bidirectional override in them, stderr with tabs and CRLF endings, and
/// a judge's long reason two levels down.
fn chatty_result() -> grader_core::EvaluationResult {
    use grader_core::{Grade, SubScore, all, info_from_value};
    let mut stdout: String = (0..200).map(|i| format!("test_{i:03} ... ok\n")).collect();
    stdout.push_str("\u{1b}[31m1 failed\u{1b}[0m, evil \u{202e}txt.exe\n");
    let stderr = "Traceback:\r\n\tFile \"t.py\", line 3\r\nAssertionError\r\n";
    let reason = "The answer names Paris but then claims, at some length, that Lyon has been \
                  the capital since 1990, which is wrong.";
    let tests = SubScore::new("tests", 0.0)
        .unwrap()
        .with_weight(0.7)
        .unwrap()
        .with_info(
            info_from_value(serde_json::json!({
                "exit_code": 1, "stdout": stdout, "stderr": stderr, "model": "short",
            }))
            .unwrap(),
        );
    let judged = SubScore::new("names Paris", 1.0)
        .unwrap()
        .with_info(info_from_value(serde_json::json!({"reason": reason})).unwrap());
    let review = all("review", [judged]).grade(0.3).now().unwrap();
    Grade::from_subscores([tests, review]).unwrap()
}

#[test]
fn full_prints_every_cut_text_whole_and_terminal_safe() {
    let dir = temp_dir();
    let path = dir.path().join("result.json");
    let result = chatty_result();
    std::fs::write(&path, serde_json::to_string(&result).unwrap()).unwrap();

    // The tree alone shows one line of it.
    let tree = grader().arg("show").arg(&path).output().unwrap();
    let tree = String::from_utf8(tree.stdout).unwrap();
    assert!(!tree.contains("test_000"), "{tree}");

    let output = grader()
        .args(["show", "--full"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.starts_with(&tree), "the tree comes first:\n{stdout}");
    let full = &stdout[tree.len()..];
    let expected_stdout: String = (0..200).map(|i| format!("test_{i:03} ... ok\n")).collect();
    assert!(
        full.starts_with(&format!("── tests › stdout\n{expected_stdout}")),
        "{full}"
    );
    assert!(
        full.contains("\\u{1b}[31m1 failed\\u{1b}[0m, evil \\u{202e}txt.exe\n"),
        "{full}"
    );
    assert!(
        full.contains("── tests › stderr\nTraceback:\n\tFile \"t.py\", line 3\nAssertionError\n"),
        "{full}"
    );
    assert!(
        full.contains("── review › names Paris › reason\nThe answer names Paris but then claims"),
        "{full}"
    );
    assert!(
        !full.contains("model"),
        "short texts stay in the tree: {full}"
    );
    for c in full.chars() {
        assert!(
            c == '\n' || c == '\t' || !c.is_control(),
            "a raw control character {c:?} in {full}"
        );
    }
    assert!(!full.contains('\u{202e}'));

    // One subscore only, and a name that no subscore has.
    let output = grader()
        .args(["show", "--subscore", "names Paris", "--subscore", "lint"])
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let full = &stdout[tree.len()..];
    assert!(
        full.starts_with("── review › names Paris › reason\n"),
        "{full}"
    );
    assert!(!full.contains("stdout"), "{full}");
    assert!(full.ends_with("── no subscore named lint\n"), "{full}");

    grader()
        .args(["show", "--full", "--summary"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(contains("cannot be used with"));
}

#[test]
fn full_follows_each_line_of_a_json_lines_file() {
    let dir = temp_dir();
    let path = dir.path().join("results.jsonl");
    write_lines(&path, &[chatty_result(), project_result(1.0)]);
    let output = grader()
        .args(["show", "--full", "--line", "2"])
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    // The project's result has a short, multi-line stdout: shown whole under its tree.
    assert!(
        stdout.ends_with("── tests › stdout\n....F\n1 failed in 0.12s\n"),
        "{stdout}"
    );
    let output = grader()
        .args(["show", "--full"])
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.matches("── tests › stdout\n").count(), 2, "{stdout}");
    let second = stdout.find("── sample s1").unwrap();
    assert!(stdout[..second].contains("test_199 ... ok\n"), "{stdout}");
}
