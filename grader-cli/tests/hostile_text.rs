//! Text from a result file reaches the terminal only escaped: an error that quotes a key
//! (serde names an unknown field) cannot set the clipboard (OSC 52), the title or the screen,
//! and a subscore name or a sample id holding a line break cannot forge a line of `diff` or
//! `summary` that reads as the tool's own.

#![allow(clippy::unwrap_used)]

mod support;

use std::path::Path;

use support::{grader, temp_dir};

/// OSC 52 (set the clipboard), then OSC 0 (the title) and a screen clear.
const ESCAPES: &str = "\u{1b}]52;c;aGk=\u{7}\u{1b}]0;owned\u{7}\u{1b}[2J";

/// What a terminal would act on.
fn acts_on_a_terminal(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| b == 0x1b || b == 0x07)
}

fn write(path: &Path, lines: &[serde_json::Value]) {
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn an_error_quoting_a_key_is_escaped_by_every_command() {
    let dir = temp_dir();
    let file = dir.path().join("hostile.jsonl");
    let mut subscore = serde_json::json!({"name": "tests", "value": 1.0});
    subscore[ESCAPES] = serde_json::json!(1);
    write(
        &file,
        &[serde_json::json!({"reward": 1.0, "subscores": [subscore]})],
    );
    let out = |name: &str| dir.path().join(name);
    let commands: Vec<Vec<std::ffi::OsString>> = vec![
        vec!["show".into(), file.clone().into()],
        vec!["validate".into(), file.clone().into()],
        vec!["summary".into(), file.clone().into()],
        vec!["diff".into(), file.clone().into(), file.clone().into()],
        vec![
            "report".into(),
            file.clone().into(),
            "-o".into(),
            out("r.html").into(),
        ],
        vec![
            "export".into(),
            "--inspect".into(),
            file.clone().into(),
            "-o".into(),
            out("e.json").into(),
        ],
    ];
    for args in commands {
        let output = grader().args(&args).output().unwrap();
        assert!(!output.status.success(), "{args:?}");
        // `validate` reports on stdout, the others fail on stderr.
        let shown = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            !acts_on_a_terminal(&output.stderr) && !acts_on_a_terminal(&output.stdout),
            "{args:?}: {shown:?}"
        );
        assert!(
            shown.contains("\\u{1b}]52;c;aGk=\\u{7}") || shown.contains("\\u001b]52"),
            "{args:?}: the key is shown, escaped: {shown}"
        );
    }
}

/// A base and a new file where one sample's subscore flips and whose name and sample id try
/// to print lines of their own.
#[test]
fn names_and_ids_cannot_forge_lines_of_diff_or_summary() {
    let dir = temp_dir();
    let name = "tests\nsubscores now passing (1):\n  FORGED";
    let id = "s1\nFORGED";
    let line = |value: f64| {
        serde_json::json!({
            "v": 1, "id": id, "epoch": 1, "duration_secs": 0.0, "error": null,
            "result": {"reward": value, "subscores": [{"name": name, "value": value}]},
        })
    };
    let base = dir.path().join("base.jsonl");
    let new = dir.path().join("new.jsonl");
    write(&base, &[line(1.0)]);
    write(&new, &[line(0.0)]);
    for args in [
        vec![base.as_os_str(), new.as_os_str()],
        vec![new.as_os_str()],
    ] {
        let command = if args.len() == 2 { "diff" } else { "summary" };
        let output = grader().arg(command).args(&args).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            !stdout
                .lines()
                .any(|line| line.trim_start().starts_with("FORGED")),
            "{command}: {stdout}"
        );
        assert!(
            stdout.contains("\\u{a}"),
            "{command}: the name is shown, escaped: {stdout}"
        );
    }
}
