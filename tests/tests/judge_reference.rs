//! The judge against the real reference: the test venv's `hud.graders.LLMJudgeGrader`
//! (`hud==0.6.21`) and [`LlmJudge`] are pointed at the same scripted server (the reference
//! through `HUD_GATEWAY_URL`) and given the same cases. They must send the same request bodies
//! byte for byte (key order, spacing and escaping included), the same number of them (retries included),
//! and come to the same values, children and errors. The verdict parser is also compared with
//! the reference's `_parse_verdict` on hand-picked and random replies.

use std::future::IntoFuture as _;

use grader_core::GraderError;
use grader_core::judge::verdict::{VerdictError, parse_verdict, py_str};
use grader_core::judge::{Criterion, JudgeConfig, JudgeError, LlmJudge};
use grader_tests::judge_server::{Reply, ScriptedServer};
use grader_tests::python::{hud_python, run_script};
use proptest::prelude::*;
use proptest::strategy::ValueTree as _;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

/// Runs each case through the reference and prints one JSON line per case.
const REFERENCE_SCRIPT: &str = r#"
import asyncio, json, os, sys
job = json.load(sys.stdin)
os.environ["HUD_GATEWAY_URL"] = job["base_url"]
os.environ["HUD_API_KEY"] = "test-key"
from hud.graders import LLMJudgeGrader

async def one(case):
    criteria = [tuple(c) if isinstance(c, list) else c for c in case["criteria"]]
    try:
        sub = await LLMJudgeGrader.grade(
            weight=case["weight"], answer=case["answer"], criteria=criteria,
            question=case["question"], model=case["model"])
        return {"ok": json.loads(sub.model_dump_json())}
    except Exception as e:
        return {"error": type(e).__name__, "message": str(e),
                "status": getattr(e, "status_code", None)}

for case in job["cases"]:
    print(json.dumps(asyncio.run(one(case))))
"#;

/// Runs the reference's `_parse_verdict` on each reply.
const PARSER_SCRIPT: &str = r#"
import json, sys
from hud.graders.judge import _parse_verdict
for text in json.load(sys.stdin):
    try:
        met, reason = _parse_verdict(text)
        print(json.dumps({"met": met, "reason": reason}))
    except ValueError as e:
        print(json.dumps({"error": str(e)}))
"#;

/// The scripted reply for each criterion text.
fn reply_for(criterion: &str, repeat: usize) -> Reply {
    match criterion {
        "json met" => Reply::verdict("MET", "because"),
        "json unmet lowercase" => {
            Reply::content(r#"{"criterion_status": "unmet", "explanation": "nope"}"#)
        }
        "fenced" => {
            Reply::content("```json\n{\"criterion_status\": \"Met\", \"explanation\": 3}\n```")
        }
        "prose met" => Reply::content("The criterion is MET."),
        "prose not met" => Reply::content("NOT MET: it does not say so"),
        "un dash" => Reply::content("UN-MET"),
        "explanation null" => Reply::content(r#"{"criterion_status": "MET", "explanation": null}"#),
        "explanation list" => Reply::content(
            r#"{"criterion_status": "MET", "explanation": ["a", 1.5, {"k": null, "t": true}, "it's"]}"#,
        ),
        "explanation nan" => Reply::content(r#"{"criterion_status": "MET", "explanation": NaN}"#),
        "explanation huge" => {
            Reply::content(r#"{"criterion_status": "UNMET", "explanation": 1e400}"#)
        }
        "explanation big int" => {
            Reply::content(r#"{"criterion_status": "MET", "explanation": 12345678901234567890123}"#)
        }
        "unicode spaces" => Reply::content("\u{a0}Verdict:\u{2003}MET\u{1f}"),
        "unicode not" => Reply::content("résumé NOT\u{2003}MET — ça"),
        "rate limited once" => match repeat {
            0 => Reply::rate_limited("0.05"),
            _ => Reply::verdict("MET", "after waiting"),
        },
        "server error once" => match repeat {
            0 => Reply::Status(
                500,
                vec![("retry-after-ms".into(), "10".into())],
                "{}".into(),
            ),
            _ => Reply::verdict("UNMET", "after a 500"),
        },
        "no verdict" => Reply::content("I think it is met."),
        "bad status" => Reply::content(r#"{"criterion_status": "PARTIAL", "explanation": "half"}"#),
        "bad request" => Reply::status(400),
        "always 503" => Reply::Status(
            503,
            vec![("retry-after".into(), "0.01".into())],
            r#"{"error": {"message": "busy"}}"#.into(),
        ),
        "not json" => Reply::Raw("<html>bad gateway</html>".into()),
        "null content" => Reply::NullContent,
        _ => Reply::verdict("UNMET", "unscripted"),
    }
}

struct Case {
    answer: &'static str,
    criteria: Vec<Criterion>,
    question: &'static str,
    model: &'static str,
    weight: f64,
}

fn case(criteria: Vec<Criterion>) -> Case {
    Case {
        answer: "The capital of France is Paris.",
        criteria,
        question: "What is the capital of France?",
        model: "claude-sonnet-5-5",
        weight: 1.0,
    }
}

fn cases() -> Vec<Case> {
    let plain = |texts: &[&str]| texts.iter().map(|t| Criterion::new(*t)).collect::<Vec<_>>();
    vec![
        Case {
            weight: 0.7,
            model: "judge-model",
            ..case(vec![
                Criterion::new("json met"),
                Criterion::weighted("json unmet lowercase", 2.0),
                Criterion::weighted("prose not met", -1.0),
                Criterion::new("fenced"),
                Criterion::new("prose met"),
                Criterion::new("un dash"),
                Criterion::new("explanation null"),
                Criterion::new("explanation list"),
                Criterion::new("unicode spaces"),
                Criterion::new("unicode not"),
                Criterion::new("rate limited once"),
                Criterion::weighted("server error once", -0.5),
            ])
        },
        Case {
            question: "",
            ..case(vec![
                Criterion::weighted("json met", -1.0),
                Criterion::weighted("json unmet lowercase", -3.0),
            ])
        },
        case(vec![Criterion::weighted("json met", 0.0)]),
        Case {
            answer: "",
            ..case(Vec::new())
        },
        case(plain(&["no verdict"])),
        case(plain(&["bad status"])),
        case(plain(&["bad request"])),
        case(plain(&["always 503"])),
        case(plain(&["not json"])),
        case(plain(&["null content"])),
        case(plain(&["json met", "no verdict"])),
        case(plain(&[
            "explanation nan",
            "explanation huge",
            "explanation big int",
        ])),
        Case {
            // Escaping is part of the bytes: quotes, backslashes, controls, non-ASCII.
            answer: "Caf\u{e9} \"na\u{ef}ve\" \\ / \t\u{1}\u{7f}\u{2028} \u{65e5}\u{672c} \u{1f600}",
            question: "Qu'est-ce que c'est ?\r\n",
            ..case(plain(&["json met"]))
        },
    ]
}

fn criterion_json(criterion: &Criterion, weighted: bool) -> Value {
    if weighted {
        json!([criterion.requirement(), criterion.weight()])
    } else {
        json!(criterion.requirement())
    }
}

/// The same cases as the reference reads them (weighted criteria as `[text, weight]`).
fn job(base_url: &str, cases: &[Case]) -> Value {
    let cases: Vec<Value> = cases
        .iter()
        .enumerate()
        .map(|(index, case)| {
            let criteria: Vec<Value> = case
                .criteria
                .iter()
                .map(|c| criterion_json(c, c != &Criterion::new(c.requirement())))
                .collect();
            json!({
                "answer": answer_of(index, case), "criteria": criteria, "question": case.question,
                "model": case.model, "weight": case.weight,
            })
        })
        .collect();
    json!({ "base_url": base_url, "cases": cases })
}

/// What the reference's error says about a reply with no verdict: its message text.
fn python_repr(text: &str) -> String {
    let list = py_str(&json!([text]));
    list[1..list.len() - 1].to_owned()
}

fn check_error(index: usize, rust: &GraderError, python: &Value) {
    let kind = python["error"].as_str().unwrap_or("");
    let message = python["message"].as_str().unwrap_or("");
    let grader_core::Failure::Judge(judge) = &rust.failure else {
        panic!("case {index}: not a judge failure: {rust}");
    };
    match &**judge {
        JudgeError::NoVerdict { source, .. } => {
            assert_eq!(kind, "ValueError", "case {index}: {message}");
            let expected = match source {
                VerdictError::NoVerdict { reply } => format!(
                    "LLMJudgeGrader: judge reply has no MET/UNMET verdict: {}",
                    python_repr(reply)
                ),
                VerdictError::BadStatus { reply } => format!(
                    "LLMJudgeGrader: judge reply has no MET/UNMET criterion_status: {}",
                    python_repr(reply)
                ),
                other => panic!("case {index}: {other}"),
            };
            assert_eq!(message, expected, "case {index}");
        }
        JudgeError::Status { status, .. } => {
            assert_eq!(
                python["status"].as_u64(),
                Some(u64::from(*status)),
                "case {index}: {kind}"
            );
        }
        JudgeError::Malformed { .. } => {
            // The reference fails too; its SDK's exception type is its own.
            assert!(!kind.is_empty(), "case {index}");
        }
        other => panic!("case {index}: unexpected {other}"),
    }
}

/// Each case's answer carries its index, so that requests can be told apart by case.
fn answer_of(index: usize, case: &Case) -> String {
    format!("{} [case {index}]", case.answer)
}

/// Request bodies per case (by the `[case N]` in the prompt), as the bytes that arrived, each
/// list sorted so that concurrent orders compare equal. The bytes are the request: a cache or
/// proxy keyed on the body sees key order and spacing.
fn bodies_by_case(server: &ScriptedServer, cases: usize) -> Vec<Vec<String>> {
    let mut by_case = vec![Vec::new(); cases];
    for request in server.requests() {
        let prompt = request.user_prompt();
        let index = (0..cases)
            .find(|i| prompt.contains(&format!(" [case {i}]\n</response>")))
            .expect("a case's request");
        by_case[index].push(request.raw);
    }
    for bodies in &mut by_case {
        bodies.sort();
    }
    by_case
}

#[test]
fn the_judge_sends_and_concludes_what_the_reference_does() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let server = ScriptedServer::start(|call| reply_for(call.criterion(), call.repeat));
    let cases = cases();

    // The reference first, every case in one interpreter, one after the other.
    let output = run_script(
        &python,
        REFERENCE_SCRIPT,
        &job(&server.base_url(), &cases).to_string(),
    );
    let reference: Vec<Value> = output
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    assert_eq!(reference.len(), cases.len());
    let reference_requests = bodies_by_case(&server, cases.len());

    // Then ours, on a fresh script state (the repeat counts start again).
    server.clear();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let ours: Vec<Result<grader_core::SubScore, GraderError>> = cases
        .iter()
        .enumerate()
        .map(|(index, case)| {
            let judge = LlmJudge::new(answer_of(index, case), case.criteria.clone())
                .question(case.question)
                .model(case.model)
                .config(
                    JudgeConfig::new()
                        .base_url(server.base_url())
                        .api_key("test-key"),
                );
            runtime.block_on(judge.grade(case.weight).into_future())
        })
        .collect();
    let our_requests = bodies_by_case(&server, cases.len());

    for (index, (ours, theirs)) in ours.into_iter().zip(&reference).enumerate() {
        assert_eq!(
            our_requests[index], reference_requests[index],
            "case {index}: the same requests, as many times"
        );
        match (ours, theirs.get("ok")) {
            (Ok(sub), Some(theirs)) => {
                let mut ours = serde_json::to_value(&sub).expect("serializable");
                let mut theirs = theirs.clone();
                // Python records a float weight given as 1 as `1`, we as `1.0`: compare numbers.
                normalize_numbers(&mut ours);
                normalize_numbers(&mut theirs);
                assert_eq!(ours, theirs, "case {index}");
            }
            (Err(error), None) => check_error(index, &error, theirs),
            (ours, _) => panic!("case {index}: ours {ours:?}, reference {theirs}"),
        }
    }
}

/// Every number as an f64, so `1` and `1.0` compare equal.
fn normalize_numbers(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                *value = json!(x);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_numbers),
        Value::Object(map) => map.values_mut().for_each(normalize_numbers),
        _ => {}
    }
}

/// Replies the reference's parser meets: hand-picked forms around every branch of
/// `_parse_verdict`, then random ones.
fn hand_picked_replies() -> Vec<String> {
    [
        r#"{"criterion_status": "MET", "explanation": "ok"}"#,
        r#"{"criterion_status": "UNMET", "explanation": "no"}"#,
        r#"{"criterion_status": "met"}"#,
        r#"{"criterion_status": "Unmet", "explanation": 2}"#,
        r#"{"criterion_status": "PARTIAL"}"#,
        r#"{"criterion_status": null}"#,
        r#"{"criterion_status": 1}"#,
        r#"{"explanation": "MET"}"#,
        r#"{"criterion_status": "MET", "explanation": {"a": [1, 2.5e-7, 1e16, -0.0]}}"#,
        r#"{"criterion_status": "MET", "explanation": "a\nb"}"#,
        r#"{"criterion_status": "MET", "explanation": ["q'uote", "d\"ouble", "both'\"", "tab\t"]}"#,
        "```json\n{\"criterion_status\": \"MET\"}\n```",
        "```\n{\"criterion_status\": \"UNMET\"}\n```",
        "```json {\"criterion_status\": \"MET\"}```",
        "prefix {\"criterion_status\": \"UNMET\", \"explanation\": \"x\"} suffix",
        "{not json} MET",
        "{not json} NOT MET",
        "} MET {",
        "{\"criterion_status\": \"MET\"",
        "MET",
        "UNMET",
        "UN_MET",
        "UN-MET",
        "UN MET",
        "NOT MET",
        "not met",
        "Not_MET",
        "NOT -_ MET",
        "NOTMET",
        "xMET",
        "MET_",
        "MET.",
        "METS",
        "The answer: MET; however NOT MET overall.",
        "MET MET MET",
        "met",
        "",
        "   \n\t",
        "\u{1c}MET\u{1f}",
        "\u{a0}NOT\u{2003}MET\u{3000}",
        "é MET",
        "éMET",
        "MET\u{301}",
        "٣MET",
        "ﬁ MET",
        "NOT\u{85}MET",
        "{\"criterion_status\": \"ＭＥＴ\"}",
        "{\"criterion_status\": \"MET\", \"explanation\": \"é\u{200b}\u{7f}\"}",
        // What `json.loads` reads and `serde_json` does not, and what it refuses.
        r#"{"criterion_status": "MET", "explanation": NaN}"#,
        r#"{"criterion_status": "UNMET", "explanation": 1e400}"#,
        r#"{"criterion_status": "MET", "explanation": -1E+400}"#,
        r#"{"criterion_status": "MET", "explanation": 12345678901234567890123}"#,
        r#"{"criterion_status": "MET", "explanation": -98765432109876543210987654321}"#,
        r#"{"criterion_status": "MET", "explanation": -0}"#,
        r#"{"criterion_status": "MET", "explanation": [Infinity, -Infinity, NaN, -0.0, 1E5, 1e-7, 0.1e1]}"#,
        r#"{"criterion_status": "MET", "explanation": {"z": 1, "a": 2, "z": [3]}}"#,
        r#"{"criterion_status": "MET", "criterion_status": "UNMET", "explanation": 1}"#,
        r#"{"criterion_status": "MET", "explanation": "\ud83d\ude00 \u00e9 \/ \b\f"}"#,
        "{\"criterion_status\": \"MET\", \"explanation\": \"raw\ttab\"}",
        r#"{"criterion_status": "MET", "explanation": 1.}"#,
        r#"{"criterion_status": "MET", "explanation": 01}"#,
        r#"{"criterion_status": "MET", "explanation": 1e}"#,
        r#"{"criterion_status": "MET", "explanation": .5}"#,
        r#"{"criterion_status": "MET", "explanation": nan}"#,
        r#"{"criterion_status": "MET", "explanation": [1,]}"#,
        r#"{"criterion_status": "MET", "explanation": +1}"#,
        r#"{"criterion_status": "MET", "explanation": "x"} trailing } NOT MET"#,
        r#"{ "criterion_status" : "MET" , "explanation" : [ ] }"#,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .chain(std::iter::once("x".repeat(500) + " NOT MET"))
    .chain(std::iter::once("é".repeat(300) + " MET"))
    // Floats printed as Python's repr: random doubles, and values halfway between two
    // shortest strings (where Python rounds to the even digit).
    .chain(float_explanations())
    // CPython reads integers of up to 4 300 digits from a string, and refuses longer ones.
    .chain([4300, 4301].map(|digits| {
        format!(
            r#"{{"criterion_status": "MET", "explanation": {}}}"#,
            "7".repeat(digits)
        )
    }))
    .collect()
}

fn float_explanations() -> Vec<String> {
    let mut rng = TestRunner::deterministic();
    let mut values: Vec<f64> = (0..400)
        .map(|_| {
            let bits = any::<u64>().new_tree(&mut rng).expect("a value").current();
            f64::from_bits(bits)
        })
        .filter(|x| x.is_finite())
        .collect();
    for k in 40..53 {
        let base = 2_f64.powi(k);
        values.extend([base + 0.25, base + 0.75, -(base + 1.25), base * 3.0 + 0.5]);
    }
    values
        .into_iter()
        .map(|x| format!(r#"{{"criterion_status": "MET", "explanation": [{x:?}]}}"#))
        .collect()
}

fn random_replies(count: usize) -> Vec<String> {
    let piece = prop_oneof![
        Just("MET".to_owned()),
        Just("UN".to_owned()),
        Just("NOT".to_owned()),
        Just("not".to_owned()),
        Just("met".to_owned()),
        Just(" ".to_owned()),
        Just("_".to_owned()),
        Just("-".to_owned()),
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("\"criterion_status\": \"MET\"".to_owned()),
        Just("\"criterion_status\": \"unmet\"".to_owned()),
        Just("```".to_owned()),
        Just("```json".to_owned()),
        Just("\n".to_owned()),
        "[a-zé\u{a0}\u{2003}.,:]{0,3}",
    ];
    let strategy = proptest::collection::vec(piece, 0..12).prop_map(|parts| parts.concat());
    let mut runner = TestRunner::deterministic();
    (0..count)
        .map(|_| strategy.new_tree(&mut runner).expect("a value").current())
        .collect()
}

#[test]
fn the_verdict_parser_agrees_with_the_references() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let mut replies = hand_picked_replies();
    replies.extend(random_replies(3000));
    let output = run_script(
        &python,
        PARSER_SCRIPT,
        &serde_json::to_string(&replies).expect("JSON"),
    );
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), replies.len());
    for (reply, line) in replies.iter().zip(lines) {
        let theirs: Value = serde_json::from_str(line).expect("a JSON line");
        match parse_verdict(reply) {
            Ok(verdict) => {
                assert_eq!(theirs["met"], verdict.met, "{reply:?}: {theirs}");
                assert_eq!(theirs["reason"], verdict.reason.as_str(), "{reply:?}");
            }
            Err(error) => {
                let (label, text) = match &error {
                    VerdictError::NoVerdict { reply } => ("verdict", reply),
                    VerdictError::BadStatus { reply } => ("criterion_status", reply),
                    other => panic!("{other}"),
                };
                let expected = format!(
                    "LLMJudgeGrader: judge reply has no MET/UNMET {label}: {}",
                    python_repr(text)
                );
                assert_eq!(theirs["error"], expected.as_str(), "{reply:?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(Config::with_cases(2000))]

    /// No reply makes the parser panic, and it only ever says MET or UNMET or refuses.
    #[test]
    fn the_parser_never_panics_and_never_guesses(reply in any::<String>()) {
        if let Ok(verdict) = parse_verdict(&reply) {
            // A verdict comes only from a reply that says MET somewhere.
            let upper = reply.to_uppercase();
            prop_assert!(upper.contains("MET"), "{reply:?} -> {verdict:?}");
        }
    }

    #[test]
    fn the_parser_handles_arbitrary_json_objects(status in ".{0,8}", explanation in any::<String>()) {
        let reply = json!({"criterion_status": status, "explanation": explanation}).to_string();
        let upper = status.to_uppercase();
        match parse_verdict(&reply) {
            Ok(verdict) => {
                prop_assert!(upper == "MET" || upper == "UNMET");
                prop_assert_eq!(verdict.met, upper == "MET");
                prop_assert_eq!(verdict.reason, explanation);
            }
            Err(_) => prop_assert!(upper != "MET" && upper != "UNMET"),
        }
    }
}
