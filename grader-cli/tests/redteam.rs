//! The red team's reproductions on the `grader` command, each now refused or made safe:
//!
//! - `grader report - -o in.jsonl < in.jsonl` replaced the results with the page: standard
//!   input read from the output file is caught (its device and inode are the output's);
//! - a 60 MB line (under `--max-line`) of 30 million tiny numbers took `validate` and
//!   `summary` 2.2 GB and `show` 6.4 GB: a line is refused by what it costs parsed
//!   (`--max-parsed`), with the line named, before it is parsed (each command runs under an
//!   address-space limit of 1 GiB here, which the old reading could not live in);
//! - the `.eval` log's entries were named with the raw sample ids
//!   (`samples/../../../tmp/x_epoch_1.json`, escapes `unzip -l` printed raw): an unsafe id is
//!   rewritten into a safe one, the original kept in the sample's metadata, and Inspect AI's
//!   reader still finds each sample by its id;
//! - `grader show` printed a sample id's line break raw (a forged `reward 1.0000` line above
//!   the real one), and an error message's line break started a line of its own;
//! - `summary --json` wrote C1 controls and bidirectional overrides raw inside strings.

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod support;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use grader_tests::child::Bounded as _;
use serde_json::{Value, json};
use support::{evaluation_file, grader, inspect_python, samples, temp_dir};

/// `grader` with `args` in `dir`, its standard input read from `file`.
fn with_stdin(dir: &Path, args: &[&str], file: &Path) -> std::process::Output {
    let child = Command::new(env!("CARGO_BIN_EXE_grader"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::from(std::fs::File::open(file).unwrap()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    grader_tests::child::wait_with_output(child, "grader")
}

#[test]
fn standard_input_read_from_the_output_file_is_refused() {
    let dir = temp_dir();
    let input = dir.path().join("in.jsonl");
    evaluation_file(&input, samples(4, |i| (i as f64 / 3.0, 1.0)), 1);
    let before = std::fs::read(&input).unwrap();
    for command in [
        vec!["report", "-", "-o", "in.jsonl"],
        vec!["merge", "-", "-o", "in.jsonl"],
    ] {
        let output = with_stdin(dir.path(), &command, &input);
        assert_eq!(output.status.code(), Some(1), "{command:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr
                .contains("in.jsonl: the output is also an input (standard input is read from it)"),
            "{command:?}: {stderr}"
        );
        assert_eq!(std::fs::read(&input).unwrap(), before, "{command:?}");
    }
    // Standard input from another file is read, and the page written.
    let other = dir.path().join("other.jsonl");
    std::fs::copy(&input, &other).unwrap();
    let output = with_stdin(dir.path(), &["report", "-", "-o", "page.html"], &other);
    assert!(output.status.success(), "{output:?}");
    assert!(dir.path().join("page.html").exists());
}

/// `grader` with `args` in `dir`, its address space limited to 1 GiB (the machine's memory is
/// never at stake, and a command that needs gigabytes fails here).
fn grader_in_1_gib(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new("prlimit")
        .arg(format!("--as={}", 1u64 << 30))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_grader"))
        .args(args)
        .current_dir(dir)
        .output_bounded();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned()
            + &String::from_utf8_lossy(&output.stdout),
    )
}

#[test]
fn a_line_of_tiny_numbers_is_refused_by_what_it_costs_parsed() {
    let dir = temp_dir();
    // The red team's line: 60 MB, 30 million zeros in `info`, under the 64 MiB line limit.
    let mut file =
        std::io::BufWriter::new(std::fs::File::create(dir.path().join("costly.jsonl")).unwrap());
    writeln!(file, r#"{{"reward": 1.0, "sample_id": "fine"}}"#).unwrap();
    file.write_all(br#"{"reward": 1.0, "sample_id": "costly", "info": {"x": ["#)
        .unwrap();
    let zeros = b"0,".repeat(1 << 20);
    for _ in 0..30 {
        file.write_all(&zeros).unwrap();
    }
    file.write_all(b"0]}}\n").unwrap();
    // A long text costs about its length: read.
    writeln!(
        file,
        "{}",
        json!({"reward": 0.5, "sample_id": "long", "info": {"stdout": "x".repeat(8 << 20)}})
    )
    .unwrap();
    drop(file);

    for command in ["validate", "summary", "show"] {
        let (code, said) = grader_in_1_gib(dir.path(), &[command, "costly.jsonl"]);
        assert_eq!(code, Some(1), "{command}: {said}");
        assert!(
            said.contains("--max-parsed") && said.contains("31457286 values"),
            "{command}: {said}"
        );
        assert!(
            said.contains("costly.jsonl:2:") || said.contains("line 2:"),
            "{command} names the line: {said}"
        );
    }
    // The other lines were read.
    let (_, said) = grader_in_1_gib(dir.path(), &["show", "costly.jsonl"]);
    assert!(said.contains("── sample fine (line 1)"), "{said}");
    assert!(said.contains("── sample long (line 3)"), "{said}");
    // A budget that holds it reads it (here outside the address-space limit: it takes
    // gigabytes, which is what the budget is for).
    let output = grader()
        .current_dir(dir.path())
        .args(["validate", "--max-parsed", "8G", "costly.jsonl"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

#[test]
fn unsafe_sample_ids_get_safe_names_in_the_eval_log_and_keep_their_own() {
    let dir = temp_dir();
    let ids = [
        "../../../tmp/x",
        "a\u{1b}]0;owned\u{7}b",
        "dir\\\\file",
        "plain-id",
    ];
    let lines: String = ids
        .iter()
        .enumerate()
        .map(|(index, id)| {
            format!(
                "{}\n",
                json!({"v": 1, "id": id, "epoch": 1, "duration_secs": 0.5, "error": null,
                       "result": {"reward": index as f64 / 4.0}})
            )
        })
        .collect();
    std::fs::write(dir.path().join("ids.jsonl"), lines).unwrap();
    grader()
        .current_dir(dir.path())
        .args(["export", "--inspect", "ids.jsonl", "-o", "run.eval"])
        .assert()
        .success();
    let log = dir.path().join("run.eval");
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&log).unwrap()).unwrap();
    let names: Vec<String> = archive
        .file_names()
        .map(|name| name.unwrap().into_owned())
        .collect();
    let samples: Vec<&String> = names.iter().filter(|n| n.starts_with("samples/")).collect();
    assert_eq!(samples.len(), 4, "{names:?}");
    for name in &samples {
        let rest = name.strip_prefix("samples/").unwrap();
        assert!(
            !rest.contains('/') && !rest.contains('\\') && !rest.contains(".."),
            "{name:?}"
        );
        assert!(!rest.chars().any(char::is_control), "{name:?}");
    }
    assert!(
        names.contains(&"samples/plain-id_epoch_1.json".to_owned()),
        "{names:?}"
    );
    // Each sample's id is its entry's, and the original is in its metadata.
    let mut originals = Vec::new();
    for name in &samples {
        let mut entry = archive.by_name(name).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut entry, &mut text).unwrap();
        let sample: Value = serde_json::from_str(&text).unwrap();
        let id = sample["id"].as_str().unwrap();
        assert_eq!(name.as_str(), format!("samples/{id}_epoch_1.json"));
        originals.push(
            sample["metadata"]["sample_id"]
                .as_str()
                .unwrap_or(id)
                .to_owned(),
        );
    }
    originals.sort();
    let mut expected: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
    expected.sort();
    assert_eq!(originals, expected);

    // Inspect AI's reader finds each sample by its id, and lists them all.
    let Some(python) = inspect_python() else {
        return;
    };
    let read = grader_tests::python::run_script(
        &python,
        r#"
import json, sys, warnings
warnings.simplefilter("ignore")
from inspect_ai.log import read_eval_log, read_eval_log_sample
path = sys.stdin.read().strip()
log = read_eval_log(path, header_only=True)
found = {}
for sample_id in log.eval.dataset.sample_ids:
    sample = read_eval_log_sample(path, id=sample_id, epoch=1)
    found[str(sample_id)] = {"original": sample.metadata.get("sample_id", sample.id),
                             "reward": sample.scores["reward"].value}
print(json.dumps(found))
"#,
        &log.display().to_string(),
    );
    let found: Value = serde_json::from_str(&read).unwrap();
    let found = found.as_object().unwrap();
    assert_eq!(found.len(), 4, "{found:?}");
    for (index, id) in ids.iter().enumerate() {
        let sample = found
            .values()
            .find(|sample| sample["original"] == *id)
            .unwrap_or_else(|| panic!("{id:?} not found: {found:?}"));
        assert_eq!(sample["reward"], index as f64 / 4.0);
    }
}

#[test]
fn show_keeps_ids_and_errors_on_one_line() {
    let dir = temp_dir();
    std::fs::write(
        dir.path().join("forged.jsonl"),
        format!(
            "{}\n{}\n",
            json!({"v": 1, "id": "q1\nreward 1.0000", "epoch": 1, "duration_secs": 0.1,
                   "error": null, "result": {"reward": 0.0}}),
            json!({"v": 1, "id": "q2", "epoch": 1, "duration_secs": 0.1,
                   "error": {"kind": "failed", "message": "boom\nreward 1.0000\u{1b}[2J"},
                   "result": null}),
        ),
    )
    .unwrap();
    let output = grader()
        .current_dir(dir.path())
        .args(["show", "forged.jsonl"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let shown = String::from_utf8(output.stdout).unwrap();
    // The only lines that read `reward …` are the results' own.
    let rewards: Vec<&str> = shown
        .lines()
        .filter(|line| line.starts_with("reward"))
        .collect();
    assert_eq!(rewards, ["reward 0.0000"], "{shown}");
    assert!(
        shown.contains("── sample q1\\u{a}reward 1.0000, epoch 1 (line 1)"),
        "{shown}"
    );
    assert!(
        shown.contains("error: failed: boom\\u{a}reward 1.0000\\u{1b}[2J"),
        "{shown}"
    );
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
}

#[test]
fn summary_json_escapes_c1_controls_and_bidirectional_overrides() {
    let dir = temp_dir();
    let name = "tests\u{9b}2J\u{202e}desrever\u{2066}";
    std::fs::write(
        dir.path().join("names.jsonl"),
        format!(
            "{}\n",
            json!({"reward": 1.0, "sample_id": "s\u{85}1",
                   "subscores": [{"name": name, "weight": 1.0, "value": 1.0}]})
        ),
    )
    .unwrap();
    for args in [
        vec!["summary", "--json", "names.jsonl"],
        vec!["diff", "--json", "names.jsonl", "names.jsonl"],
    ] {
        let output = grader()
            .current_dir(dir.path())
            .args(&args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(
            !text.chars().any(|c| {
                ('\u{7f}'..='\u{9f}').contains(&c) || grader_core::report::is_bidi_control(c)
            }),
            "{args:?}: {text:?}"
        );
        assert!(
            text.contains("tests\\u009b2J\\u202edesrever\\u2066"),
            "{args:?}: {text}"
        );
        // The same JSON: the names read back whole.
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert!(parsed.to_string().contains(name), "{args:?}");
    }
}
