//! `grader validate` on real files: written by this project, by the reference's Python SDK,
//! and malformed (truncated, NaN, wrong types, a 100 MB line).

#![allow(clippy::unwrap_used)]

mod support;

use std::io::Write as _;

use predicates::prelude::*;
use predicates::str::contains;
use support::{grader, project_result, python, python_writes, temp_dir, write_lines};

#[test]
fn files_written_by_this_project_are_valid() {
    let dir = temp_dir();
    let lines = dir.path().join("results.jsonl");
    let results: Vec<_> = (0..50)
        .map(|i| project_result(f64::from(i % 3) / 2.0))
        .collect();
    write_lines(&lines, &results);
    let single = dir.path().join("result.json");
    std::fs::write(
        &single,
        serde_json::to_string_pretty(&project_result(1.0)).unwrap(),
    )
    .unwrap();

    grader()
        .arg("validate")
        .arg(&lines)
        .arg(&single)
        .assert()
        .code(0)
        .stdout(contains(
            "results.jsonl: 50 results read as EvaluationResult (`reward`): 0 invalid (0 format error(s)), 0 warning(s): valid",
        ))
        .stdout(contains(
            "result.json: 1 result read as EvaluationResult (`reward`): 0 invalid (0 format error(s)), 0 warning(s): valid",
        ));
}

#[test]
fn files_written_by_the_python_sdk_are_valid() {
    let Some(python) = python() else { return };
    let dir = temp_dir();
    let path = dir.path().join("python.jsonl");
    python_writes(&python, support::PYTHON_WRITES_LINES, &path);
    grader()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(contains(
            "3 results read as EvaluationResult (`reward`): 0 invalid (0 format error(s)), 0 warning(s); 1 grading error(s) recorded (valid lines: a failed grading or isError): valid",
        ));
}

#[test]
fn the_references_warnings_are_warnings_unless_strict() {
    let Some(python) = python() else { return };
    let dir = temp_dir();
    let path = dir.path().join("warned.jsonl");
    // The SDK accepts this with two warnings: weights summing to 2 and a reward that does not
    // match them.
    python_writes(
        &python,
        r#"
import sys, warnings
warnings.simplefilter("ignore")
from hud.graders import EvaluationResult, SubScore
r = EvaluationResult(reward=0.1, subscores=[SubScore(name="a", value=1.0), SubScore(name="a", value=0.0)])
open(sys.argv[1], "w").write(r.model_dump_json() + "\n")
"#,
        &path,
    );
    grader()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(contains(
            "line 1: warning: $.subscores[1].name: duplicate subscore name \"a\"",
        ))
        .stdout(contains(
            "line 1: warning: $.subscores: positive subscore weights should sum to about 1.0 (got 2.0000)",
        ))
        .stdout(contains(
            "line 1: warning: $.reward: subscores don't match the reward",
        ));
    grader()
        .args(["validate", "--strict"])
        .arg(&path)
        .assert()
        .code(1);
}

#[test]
fn a_truncated_last_line_is_reported_with_its_number() {
    let dir = temp_dir();
    let path = dir.path().join("cut.jsonl");
    write_lines(&path, &[project_result(1.0), project_result(0.0)]);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() - 40]).unwrap();
    grader()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(1)
        .stdout(contains(
            "cut.jsonl: line 2: $: the JSON ends too early, the line looks truncated",
        ))
        .stdout(contains(
            "2 results read as EvaluationResult (`reward`): 1 invalid (1 format error(s)), 0 warning(s)\n",
        ));
}

#[test]
fn nan_and_infinities_are_named() {
    let Some(python) = python() else { return };
    let dir = temp_dir();
    let path = dir.path().join("nan.jsonl");
    // Python's json module writes NaN and Infinity, which are not JSON.
    python_writes(
        &python,
        r#"
import sys, json
rows = [{"reward": float("nan")}, {"reward": 1.0, "subscores": [{"name": "a", "value": float("inf")}]}, {"reward": 1e400}]
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in rows))
"#,
        &path,
    );
    grader()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(1)
        .stdout(contains(
            "line 1: $: `NaN` is not JSON: scores and rewards must be finite numbers",
        ))
        .stdout(contains(
            "line 2: $: `Infinity` is not JSON: scores and rewards must be finite numbers",
        ))
        .stdout(contains("line 3: $: `Infinity` is not JSON"))
        .stdout(contains(
            "3 results: 3 invalid (3 format error(s)), 0 warning(s)\n",
        ));
    let big = dir.path().join("big.jsonl");
    std::fs::write(&big, "{\"reward\": 1e400}\n").unwrap();
    grader()
        .arg("validate")
        .arg(&big)
        .assert()
        .code(1)
        .stdout(contains(
            "line 1: $: a number too large for a double: scores and rewards must be finite",
        ));
}

#[test]
fn wrong_types_are_each_reported_at_their_json_path() {
    let dir = temp_dir();
    let path = dir.path().join("types.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"reward": "high", "done": 1, "isError": null, "content": 3, "info": [],"#,
            r#" "subscores": [{"name": 7, "value": 1.5, "weight": "x", "extra": 1,"#,
            r#" "children": [{"value": -0.5}], "info": "no"}, "nope"], "trace": 1}"#,
            "\n",
            r#"[1, 2]"#,
            "\n\n",
            r#"{"subscores": {"name": "a", "value": 1}}"#,
            "\n",
            r#"{"subscores": [{"name": "a", "value": 1, "info": {}, "metadata": {}}]}"#,
            "\n",
        ),
    )
    .unwrap();
    let expected = [
        "line 1: $.reward: `reward` must be a finite number, found the string \"high\"",
        "line 1: $.done: `done` must be a boolean, found 1",
        "line 1: $.isError: `isError` must be a boolean, found null",
        "line 1: $.content: `content` must be a string or null, found 3",
        "line 1: $.info: `info` must be an object, found an array",
        "line 1: $.subscores[0].extra: unknown field `extra`: a subscore has only name, weight, value, children and info",
        "line 1: $.subscores[0].name: `name` must be a string, found 7",
        "line 1: $.subscores[0].weight: `weight` must be a finite number, found the string \"x\"",
        "line 1: $.subscores[0].value: value 1.5 is outside [0, 1]",
        "line 1: $.subscores[0].info: `info` must be an object or null, found the string \"no\"",
        "line 1: $.subscores[0].children[0]: missing field `name`",
        "line 1: $.subscores[0].children[0].value: value -0.5 is outside [0, 1]",
        "line 1: $.subscores[1]: a subscore must be a JSON object, found a string",
        "line 2: $: a result must be a JSON object, found an array",
        "line 4: $.subscores: subscores must be an array or null, found an object",
        "line 4: $: neither `reward` nor `score`: a result says its reward as `reward` (grader's and the HUD SDK's EvaluationResult) or `score` (hud's grade frame and `run.evaluation`)",
        "line 5: $.subscores[0].metadata: both `info` and `metadata`, which are the same field",
        "line 5: $: neither `reward` nor `score`: a result says its reward as `reward` (grader's and the HUD SDK's EvaluationResult) or `score` (hud's grade frame and `run.evaluation`)",
    ];
    let output = grader().arg("validate").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let found: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.split_once("types.jsonl: line ").map(|(_, rest)| rest))
        .collect();
    let expected: Vec<String> = expected
        .iter()
        .map(|line| line.trim_start_matches("line ").to_owned())
        .collect();
    assert_eq!(found, expected, "{stdout}");
    assert!(
        stdout.contains("types.jsonl: 4 results: 4 invalid (18 format error(s)), 0 warning(s)"),
        "{stdout}"
    );
}

#[test]
fn a_pretty_printed_document_is_reported_by_path_without_a_line() {
    let dir = temp_dir();
    let path = dir.path().join("one.json");
    std::fs::write(
        &path,
        "{\n  \"reward\": 0.5,\n  \"subscores\": [\n    {\"name\": \"a\", \"value\": 3}\n  ]\n}\n",
    )
    .unwrap();
    grader()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(1)
        .stdout(contains(
            "one.json: $.subscores[0].value: value 3 is outside [0, 1]",
        ));
}

#[test]
fn a_100_mb_line_is_skipped_without_loading_it_and_the_rest_is_checked() {
    let dir = temp_dir();
    let path = dir.path().join("huge.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(
        file,
        "{}",
        serde_json::to_string(&project_result(1.0)).unwrap()
    )
    .unwrap();
    // A valid result whose content is 100 MB.
    write!(file, "{{\"reward\": 1.0, \"content\": \"").unwrap();
    let chunk = "x".repeat(1 << 20);
    for _ in 0..100 {
        file.write_all(chunk.as_bytes()).unwrap();
    }
    writeln!(file, "\"}}").unwrap();
    writeln!(
        file,
        "{{\"reward\": 0.0, \"subscores\": [{{\"name\": \"late\", \"value\": 9}}]}}"
    )
    .unwrap();
    drop(file);

    grader()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(1)
        .stdout(contains("line 2: $: the line is 104857630 bytes, longer than the limit of 67108864 (--max-line); not checked"))
        .stdout(contains("line 3: $.subscores[0].value: value 9 is outside [0, 1]"))
        .stdout(contains("3 results read as EvaluationResult (`reward`): 2 invalid (2 format error(s)), 0 warning(s)\n"));
    // With a higher limit the long line is read, and is valid.
    grader()
        .args(["validate", "--max-line", "128M"])
        .arg(&path)
        .assert()
        .code(1)
        .stdout(contains("line 2").not())
        .stdout(contains(
            "3 results read as EvaluationResult (`reward`): 1 invalid (1 format error(s)), 0 warning(s)\n",
        ));
}

#[test]
fn problems_beyond_the_limit_are_counted_not_printed() {
    let dir = temp_dir();
    let path = dir.path().join("many.jsonl");
    std::fs::write(&path, "{\"reward\": true}\n".repeat(30)).unwrap();
    let output = grader()
        .args(["validate", "--max-problems", "5"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        stdout.matches("must be a finite number").count(),
        5,
        "{stdout}"
    );
    assert!(
        stdout.contains("… 25 more not shown (--max-problems)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("30 results: 30 invalid (30 format error(s)), 0 warning(s)\n"),
        "{stdout}"
    );
}

#[test]
fn standard_input_is_read_as_lines() {
    grader()
        .args(["validate", "-"])
        .write_stdin("{\"reward\": 1}\n{\"reward\": 0.5, \"done\": false}\n")
        .assert()
        .code(0)
        .stdout(contains(
            "-: 2 results read as EvaluationResult (`reward`): 0 invalid (0 format error(s)), 0 warning(s): valid",
        ));
}

#[test]
fn a_missing_file_is_a_usage_error_and_no_file_is_refused() {
    let dir = temp_dir();
    grader()
        .arg("validate")
        .arg(dir.path().join("absent.jsonl"))
        .assert()
        .code(2)
        .stderr(contains("absent.jsonl: No such file or directory"));
    grader()
        .arg("validate")
        .assert()
        .code(2)
        .stderr(contains("required"));
}

#[test]
fn hostile_keys_and_messages_reach_the_terminal_escaped() {
    let dir = temp_dir();
    let path = dir.path().join("hostile.jsonl");
    std::fs::write(
        &path,
        "{\"subscores\": [{\"name\": \"a\", \"value\": 1, \"\\u001b]0;owned\\u0007\\u202e\": 1}]}\n",
    )
    .unwrap();
    let output = grader().arg("validate").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(!output.stdout.contains(&0x1b), "raw escape in the output");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(!stdout.contains('\u{202e}'), "{stdout}");
    assert!(
        stdout.contains("\\u{1b}]0;owned\\u{7}\\u{202e}"),
        "{stdout}"
    );
}

#[test]
fn the_runners_evaluation_lines_are_valid_and_their_fields_checked() {
    let dir = temp_dir();
    let path = dir.path().join("eval.jsonl");
    let mut list = support::samples(5, |i| (f64::from(u8::try_from(i % 2).unwrap()), 1.0));
    list.push(("broken".to_owned(), support::Outcome::Fails("no sandbox")));
    support::evaluation_file(&path, list, 2);
    grader()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(0)
        .stdout(contains(
            "12 results read as EvaluationResult (`reward`): 0 invalid (0 format error(s)), 0 warning(s); 2 grading error(s) recorded (valid lines: a failed grading or isError): valid",
        ));

    let bad = dir.path().join("bad-eval.jsonl");
    std::fs::write(
        &bad,
        concat!(
            r#"{"v":2,"id":7,"epoch":0,"duration_secs":"slow","error":{"kind":"exploded"},"#,
            r#""result":{"reward":1,"subscores":[{"name":"a","value":1.5}]}}"#,
            "\n",
            r#"{"v":1,"epoch":1,"duration_secs":0.1,"error":"boom","result":null}"#,
            "\n",
        ),
    )
    .unwrap();
    let output = grader().arg("validate").arg(&bad).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    for expected in [
        "line 1: $.v: line format version 2 is not supported (this reader knows 1)",
        "line 1: $.id: `id` must be a string, found 7",
        "line 1: $.epoch: `epoch` must be a whole number from 1, found 0",
        "line 1: $.duration_secs: `duration_secs` must be a finite number, found the string \"slow\"",
        "line 1: $.error: missing field `message`",
        "line 1: $.error.kind: `kind` must be \"failed\" or \"panicked\", found the string \"exploded\"",
        "line 1: $.result.subscores[0].value: value 1.5 is outside [0, 1]",
        "line 2: $: missing field `id`",
        "line 2: $.error: `error` must be an object or null, found the string \"boom\"",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in\n{stdout}"
        );
    }
    assert!(
        stdout.contains("2 results: 2 invalid (9 format error(s))"),
        "{stdout}"
    );
}

#[test]
fn invalid_lines_and_recorded_grading_errors_are_counted_apart() {
    let dir = temp_dir();
    let path = dir.path().join("mixed.jsonl");
    let lines = [
        r#"{"v":1,"id":"a","epoch":1,"duration_secs":0.1,"error":null,"result":{"reward":1.0}}"#,
        r#"{"v":1,"id":"b","epoch":1,"duration_secs":0.1,"error":{"kind":"failed","message":"judge unreachable"},"result":null}"#,
        r#"{"reward":0.0,"isError":true}"#,
        r#"{"reward":"high"}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    grader()
        .arg("validate")
        .arg(&path)
        .assert()
        .code(1)
        .stdout(contains(
            "4 results read as EvaluationResult (`reward`): 1 invalid (1 format error(s)), 0 warning(s); 2 grading error(s) \
             recorded (valid lines: a failed grading or isError)\n",
        ));
}
