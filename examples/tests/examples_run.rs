//! Runs each example as a newcomer does (`cargo run -p grader-examples --example NAME`) and
//! checks its exit status, its breakdown and its JSON.
#![allow(missing_docs)]

use grader_tests::child::Bounded as _;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

/// Runs the example and returns its standard output; fails the test when it exits non-zero.
fn run_example(name: &str) -> String {
    run_example_without(name, &[])
}

/// As [`run_example`], with these environment variables removed.
fn run_example_without(name: &str, unset: &[&str]) -> String {
    // The target directory of this build, so the example is built once, where cargo put it.
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target directory");
    let mut command = Command::new(env!("CARGO"));
    command
        .args([
            "run",
            "--quiet",
            "--package",
            "grader-examples",
            "--example",
            name,
        ])
        .arg("--target-dir")
        .arg(target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    for name in unset {
        command.env_remove(name);
    }
    let output = command.output_bounded();
    let stdout = String::from_utf8(output.stdout).expect("the output is UTF-8");
    assert!(
        output.status.success(),
        "example {name} failed with {}\n--- stdout\n{stdout}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The first JSON document after the `== as JSON:` heading.
fn json_after_heading(stdout: &str) -> Value {
    let (_, rest) = stdout
        .split_once("== as JSON:\n")
        .expect("the example prints its JSON");
    serde_json::Deserializer::from_str(rest)
        .into_iter::<Value>()
        .next()
        .expect("a JSON document follows the heading")
        .expect("the JSON parses")
}

/// The text of the first line of `text` that starts, after the tree's branches, with `start`.
fn line<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|line| {
            line.trim_start_matches(['│', '├', '└', '─', ' '])
                .starts_with(start)
        })
        .unwrap_or_else(|| panic!("no line starting with {start:?} in\n{text}"))
}

fn names(subscores: &Value) -> Vec<&str> {
    subscores
        .as_array()
        .expect("a list of subscores")
        .iter()
        .map(|sub| sub["name"].as_str().expect("a name"))
        .collect()
}

#[test]
fn fix_tests_goes_from_0_to_1_and_penalizes_the_shortcut() {
    let stdout = run_example("fix_tests");
    assert!(
        stdout.starts_with("prompt: Make the checkout tests pass\n"),
        "{stdout}"
    );

    // As shipped: the test output explains the failure, and the reward is 0.
    let (shipped, rest) = stdout
        .split_once("== after an agent that edited the test:")
        .expect("the shortcut's heading");
    assert!(shipped.contains("FAIL: test_ten_percent_off"), "{shipped}");
    assert!(shipped.contains("AssertionError: 3.0 != 27"), "{shipped}");
    assert!(shipped.contains("reward 0.0000\n"), "{shipped}");
    assert!(line(shipped, "BashGrader").contains("value 0.0000  exit code 1"));

    // The shortcut passes the tests but pays the penalty.
    let (shortcut, fixed) = rest
        .split_once("== after an agent that fixed the bug")
        .expect("the fix's heading");
    assert!(shortcut.contains("reward 0.0000\n"), "{shortcut}");
    assert!(line(shortcut, "BashGrader").contains("value 1.0000  exit code 0"));
    let penalty = line(shortcut, "tests_tampered");
    assert!(
        penalty
            .contains(r#"weight -1.0000  value 1.0000  penalty -1.0000  {"test_file":"edited"}"#),
        "{penalty}"
    );

    // The fix: reward 1, with each grader's parameters in the alternate form.
    assert!(fixed.contains("reward 1.0000\n"), "{fixed}");
    assert!(
        fixed.contains(r#"parameters {"command":"python3 -m unittest -q tests/test_checkout.py""#)
    );

    let result = json_after_heading(&stdout);
    assert_eq!(result["reward"], 1.0);
    assert_eq!(result["isError"], false);
    let subscores = &result["subscores"];
    assert_eq!(names(subscores), ["BashGrader", "tests_tampered"]);
    assert_eq!(
        (&subscores[0]["weight"], &subscores[0]["value"]),
        (&json!(1.0), &json!(1.0))
    );
    assert_eq!(
        (&subscores[1]["weight"], &subscores[1]["value"]),
        (&json!(-1.0), &json!(0.0))
    );
    let tests = &subscores[0]["info"];
    assert_eq!(tests["exit_code"], 0);
    assert_eq!(tests["_parameters"]["timeout_seconds"], 120);
    // `shipped` is skipped: the test file's text is not recorded.
    let params = &subscores[1]["info"]["_parameters"];
    assert_eq!(params["file"], "tests/test_checkout.py");
    assert!(params.get("shipped").is_none(), "{params}");

    // The checkout was in a temporary directory, gone once the example ended.
    let checkout = tests["_parameters"]["cwd"]
        .as_str()
        .expect("the cwd is recorded");
    assert_eq!(params["repo"], checkout);
    assert!(!Path::new(checkout).exists(), "{checkout} was left behind");
}

#[test]
fn custom_graders_show_every_way_to_write_a_grader() {
    let stdout = run_example("custom_graders");
    let good = json_after_heading(&stdout);
    assert_eq!(good["reward"], 1.0);
    let subscores = &good["subscores"];
    assert_eq!(
        names(subscores),
        [
            "names_the_order",
            "status",
            "word_budget",
            "delivery",
            "tracking",
            "leaks_internal_notes"
        ]
    );
    // The async grader: renamed, its secret skipped, its client recorded as a placeholder.
    let status = &subscores[1]["info"];
    assert_eq!(status["actual"], "shipped");
    assert_eq!(
        status["_parameters"]["orders"],
        "<Orders: not serializable>"
    );
    assert_eq!(status["_parameters"]["order"], 1042);
    assert!(status["_parameters"].get("api_key").is_none(), "{status}");
    assert!(
        !stdout.contains("sk-example"),
        "the API key leaked:\n{stdout}"
    );
    // The hand-written grader records what it chose to.
    assert_eq!(
        subscores[2]["info"]["_parameters"],
        json!({"max_words": 20})
    );
    // `all` and `any` keep their checks as children.
    assert_eq!(names(&subscores[3]["children"]), ["carrier", "date"]);
    assert_eq!(names(&subscores[4]["children"]), ["number", "link"]);
    assert_eq!(subscores[5]["weight"], -0.5);

    // The wrong answer: `all` fails on one missing check, `any` passes on one, the penalty
    // takes the reward below 0.
    let (_, bad) = stdout
        .split_once("== a wrong answer that leaks a note:\n")
        .expect("the wrong answer's heading");
    assert!(bad.starts_with("reward -0.2000\n"), "{bad}");
    assert!(line(bad, "status").contains("value 0.0000"), "{bad}");
    assert!(line(bad, "delivery").contains("value 0.0000"), "{bad}");
    assert!(line(bad, "carrier").contains("value 1.0000"), "{bad}");
    assert!(line(bad, "tracking").contains("value 1.0000"), "{bad}");
    assert!(line(bad, "link").contains("value 0.0000"), "{bad}");
    assert!(
        line(bad, "leaks_internal_notes")
            .ends_with("weight -0.5000  value 1.0000  penalty -0.5000"),
        "{bad}"
    );
}

#[test]
fn gather_fails_by_default_and_excludes_on_request() {
    let stdout = run_example("gather");
    assert!(
        stdout.starts_with(
            "== OnError::Fail: 1 of 7 graders failed: grader `readme_tone` failed: \
             judge unavailable: HTTP 503\n   (6 subscores finished"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("reward 0.8889  (evaluation error)\n"),
        "{stdout}"
    );
    assert!(line(&stdout, "readme_tone").contains("weight  0.0000  value 0.0000  error: "));

    let result = json_after_heading(&stdout);
    assert_eq!(result["isError"], true);
    let subscores = &result["subscores"];
    assert_eq!(
        names(subscores),
        [
            "readme",
            "license",
            "usage_section",
            "build_script_parses",
            "build_runs",
            "readme_topics",
            "readme_tone"
        ]
    );
    let values: Vec<f64> = subscores
        .as_array()
        .expect("a list")
        .iter()
        .map(|sub| sub["value"].as_f64().expect("a value"))
        .collect();
    assert_eq!(values, [1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
    assert_eq!(subscores[6]["weight"], 0.0);
    let error = subscores[6]["info"]["error"]
        .as_str()
        .expect("the error is kept");
    assert!(error.contains("HTTP 503"), "{error}");
    assert_eq!(subscores[4]["info"]["stdout"], "hi\n");
    let reward = result["reward"].as_f64().expect("a reward");
    assert!((reward - 0.8 / 0.9).abs() < 1e-12, "{reward}");
}

#[test]
fn qa_judge_says_it_uses_the_scripted_server_and_grades_per_criterion() {
    let stdout = run_example_without(
        "qa_judge",
        &[
            "GRADER_JUDGE_BASE_URL",
            "HUD_GATEWAY_URL",
            "HUD_API_KEY",
            "OPENAI_API_KEY",
        ],
    );
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(
            "judge: no GRADER_JUDGE_BASE_URL, HUD_GATEWAY_URL or OPENAI_API_KEY set, so a scripted"
        ) && first.contains("127.0.0.1"),
        "{stdout}"
    );
    let result = json_after_heading(&stdout);
    assert_eq!(result["reward"], 0.4);
    let judge = &result["subscores"][0];
    assert_eq!(judge["name"], "LLMJudgeGrader");
    assert_eq!(judge["value"], 0.25);
    let children = judge["children"]
        .as_array()
        .expect("one child per criterion");
    assert_eq!(children.len(), 4);
    let penalty = &children[3];
    assert_eq!(
        (penalty["weight"].as_f64(), penalty["value"].as_f64()),
        (Some(-1.0), Some(1.0))
    );
    assert!(
        penalty["info"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("found"))
    );
    // The confused agent's breakdown (the second) shows the penalty that fired.
    let fired = stdout
        .lines()
        .filter(|line| line.contains("Claims that seasons"))
        .nth(1)
        .unwrap_or_default();
    assert!(fired.contains("penalty"), "{stdout}");
}

#[test]
fn stateful_grader_grades_many_answers_against_one_reference() {
    let stdout = run_example("stateful_grader");
    let result = json_after_heading(&stdout);
    let subscore = |name: &str| -> &Value {
        result["subscores"]
            .as_array()
            .expect("subscores")
            .iter()
            .find(|sub| sub["name"] == name)
            .unwrap_or_else(|| panic!("no subscore {name} in {result}"))
    };
    let values: Vec<f64> = (1..=5)
        .map(|i| {
            subscore(&format!("in_reference-{i}"))["value"]
                .as_f64()
                .expect("a value")
        })
        .collect();
    assert_eq!(values, [1.0, 0.0, 1.0, 1.0, 0.0]);
    // The reference set is skipped; what identifies it is recorded.
    assert_eq!(
        subscore("in_reference-1")["info"]["_parameters"],
        json!({"dataset": "quiz.jsonl", "question": "capital of France", "answer": "paris."})
    );
    // The async grader: its client is a placeholder, its key is nowhere.
    assert_eq!(
        subscore("fact_checked-5")["info"]["_parameters"]["checker"],
        "<FactChecker: not serializable>"
    );
    assert!(
        !stdout.contains("sk-example"),
        "the API key leaked:\n{stdout}"
    );
    assert!(stdout.contains("grader `in_reference` failed: question \"speed of light\""));
}

#[test]
fn coding_tree_skips_the_review_until_the_tests_pass() {
    let stdout = run_example("coding_tree");
    assert!(
        stdout.starts_with(
            "== as shipped: the tests fail, so the review is skipped:\nreward 0.2000\n"
        ),
        "{stdout}"
    );
    assert!(line(&stdout, "review").contains("skipped"), "{stdout}");
    assert!(
        stdout.contains("== after the fix:\nreward 1.0000\n"),
        "{stdout}"
    );

    let result = json_after_heading(&stdout);
    let subscores = &result["subscores"];
    assert_eq!(
        names(subscores),
        ["tests", "lint", "tests_edited", "review"]
    );
    let review = &subscores[3];
    assert_eq!(review["info"]["decided_by"], "documented");
    assert_eq!(names(&review["children"]), ["documented", "expert_review"]);
    assert_eq!(
        review["children"][1]["info"]["skipped"],
        "an earlier stage decided"
    );
    assert_eq!(names(&subscores[1]["children"]), ["compiles", "no_tabs"]);
}

#[test]
fn evaluate_resumes_a_cut_short_run_and_summarizes_every_line_once() {
    let stdout = run_example("evaluate");
    let second = line(&stdout, "second run: ");
    let numbers: Vec<usize> = second
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 3, "{second}");
    assert_eq!(numbers[0] + numbers[1], 900, "{second}");
    assert_eq!(numbers[2], 0, "{second}");
    assert!(
        line(&stdout, "results ").ends_with(" 900 scored, 0 errored"),
        "{stdout}"
    );
    let summary = json_after_heading(&stdout);
    assert_eq!(summary["lines"], 900);
    assert_eq!(summary["samples"], 300);
    assert_eq!(summary["duplicates"], 0);
    assert_eq!(summary["pass_at_k"][2]["reducer"], "pass_at_3");
    let subscores: Vec<&str> = summary["subscores"]
        .as_object()
        .expect("subscores by name")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        subscores,
        ["contains_any", "exact_match", "f1_score", "numeric_match"]
    );
}

#[test]
fn math_rewards_reads_golds_whole_and_compares_exactly() {
    let stdout = run_example("math_rewards");
    let rewards: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("reward "))
        .map(|l| &l["reward ".len()..l.find(" |").expect("a reward line")])
        .collect();
    // Six samples, then the answer past a bound.
    assert_eq!(rewards, ["1", "0", "1", "0", "1", "0", "0"], "{stdout}");
    assert!(stdout.contains("gold \"(-oo, 2]\""), "{stdout}");
    assert!(stdout.contains("exact 0, math-verify 1"), "{stdout}");
    assert!(
        stdout.contains("only \"5\" was read from the gold"),
        "{stdout}"
    );
    assert!(stdout.contains("units of work"), "{stdout}");
    assert_eq!(stdout.matches("Correct |").count(), 3, "{stdout}");
}
