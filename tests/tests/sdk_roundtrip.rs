//! The Python SDK (`hud==0.6.21`, the reference's own client) reads what we write and we read
//! what it writes (R4), and both combine the same subscores into the same result.
//!
//! The SDK runs in a virtual environment made under `target/` on first use; where `python3` is
//! absent (and `CI` is unset) these tests print why and skip.

use std::path::PathBuf;

use grader_core::{EvaluationResult, Grade, Info, SubScore, all, any};
use grader_tests::python::{hud_python, run_script};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};

fn python() -> Option<PathBuf> {
    hud_python(env!("CARGO_TARGET_TMPDIR"))
}

fn sub(name: &str, value: f64, weight: f64) -> SubScore {
    SubScore::new(name, value)
        .and_then(|s| s.with_weight(weight))
        .expect("valid")
}

fn info(value: Value) -> Info {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// Results covering what we write: penalties, children trees, info, unicode names, unknown
/// fields, content, `isError`, and a bare default.
fn results_we_write() -> Vec<EvaluationResult> {
    let both = all(
        "both",
        vec![
            sub("lint", 1.0, 0.5).with_info(info(json!({"warnings": 0}))),
            sub("lint", 0.0, 0.5),
        ],
    )
    .grade(1.0)
    .now()
    .expect("all");
    let tree = any(
        "either",
        vec![both, sub("tests ✓", 1.0, 1.0).with_children(Vec::new())],
    )
    .grade(0.4)
    .now()
    .expect("any");
    let mut with_penalties = Grade::from_subscores([
        sub("correct", 1.0, 0.6).with_info(info(json!({
            "_parameters": {"answer": "Paris", "tolerance": 0.001, "list": [1, 2.5, null, true]},
            "stdout": "ok\n", "exit_code": 0,
        }))),
        tree,
        sub("名前", 0.25, 0.3),
        sub("名前", 1.0, 0.1),
        sub("rm -rf", 1.0, -0.3).with_info(info(json!({"zeta": 1, "alpha": {"b": 2, "a": 1}}))),
        sub("unused", 0.0, 0.0),
    ])
    .expect("combines");
    with_penalties.content = Some("Ещё \"quoted\" \\ line\nbreak \u{1F600}".to_owned());
    let extra = &mut with_penalties.extra;
    extra.insert("trace_id", "tr-123").expect("extra");
    extra
        .insert("zz_nested", json!({"k": [1, {"x": null}], "ü": -1.5e-7}))
        .expect("extra");
    extra.insert("aa_last", 7).expect("extra");
    // Beyond 64 bits: kept as written, not as a float.
    extra
        .insert_raw(
            "big",
            serde_json::value::RawValue::from_string("123456789012345678901234567890".into())
                .expect("JSON"),
        )
        .expect("extra");

    let negative =
        Grade::from_subscores([sub("ok", 0.0, 1.0), sub("penalty", 1.0, -0.5)]).expect("combines");
    let mut failed = EvaluationResult::from_reward(0.0).expect("finite");
    failed.is_error = true;
    failed.done = false;
    failed
        .info
        .insert("error".into(), json!("grader `x` failed"));
    let tiny =
        Grade::from_subscores([sub("a", 1e-300, 1.0), sub("b", 5e-324, 1e-300)]).expect("combines");
    vec![
        with_penalties,
        negative,
        failed,
        tiny,
        EvaluationResult::default(),
    ]
}

/// Reads JSON lines with the SDK, prints each `model_dump_json()` on its own line. Warnings are
/// errors while it reads and dumps what we wrote (it must not look inconsistent to the SDK),
/// and only then: what the SDK's dependencies warn at import (asyncssh about a deprecated
/// cipher, say) is not ours to judge.
const VALIDATE_AND_DUMP: &str = r#"
import sys, warnings
from hud.graders import EvaluationResult
for line in sys.stdin.read().splitlines():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = EvaluationResult.model_validate_json(line)
        dumped = result.model_dump_json()
    print(dumped)
"#;

#[test]
fn the_sdk_reads_what_we_write_and_we_read_its_dump_back_unchanged() {
    let Some(python) = python() else { return };
    let results = results_we_write();
    let input: Vec<String> = results
        .iter()
        .map(|r| serde_json::to_string(r).expect("serializes"))
        .collect();
    let output = run_script(&python, VALIDATE_AND_DUMP, &input.join("\n"));
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), results.len(), "{output}");
    for ((original, written), dumped) in results.iter().zip(&input).zip(lines) {
        let back: EvaluationResult = serde_json::from_str(dumped)
            .unwrap_or_else(|e| panic!("cannot read the SDK's dump {dumped}: {e}"));
        assert_eq!(&back, original, "SDK dump: {dumped}");
        // Same order of every object's keys, and the same numbers to the bit.
        assert_eq!(
            &serde_json::to_string(&back).expect("serializes"),
            written,
            "SDK dump: {dumped}"
        );
    }
}

#[test]
fn the_sdk_accepts_nulls_omitted_fields_and_any_field_order() {
    let Some(python) = python() else { return };
    let documents = [
        r#"{"subscores":[{"value":1.0,"name":"a","children":null,"info":null,"weight":1.0}],"reward":1.0}"#,
        r#"{"isError":false,"reward":1.0,"subscores":[{"name":"a","value":1.0}]}"#,
        r#"{"reward":0.5,"subscores":[{"name":"a","value":0.5,"metadata":{"seed":"era"}}]}"#,
        r#"{"content":null,"info":{},"subscores":null,"done":true}"#,
    ];
    let output = run_script(&python, VALIDATE_AND_DUMP, &documents.join("\n"));
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), documents.len(), "{output}");
    for (document, dumped) in documents.iter().zip(lines) {
        let ours: EvaluationResult = serde_json::from_str(document).expect("we read it");
        let theirs: EvaluationResult = serde_json::from_str(dumped).expect("we read the SDK's");
        assert_eq!(ours, theirs, "{document} vs {dumped}");
    }
}

/// What the SDK's own combiners write: `combine` (async, with awaitables), `_combine_subscores`,
/// `combine_any`, `combine_all` and a grader's `grade`.
const SDK_WRITES: &str = r#"
import asyncio, json, warnings
warnings.simplefilter("ignore")
from hud.graders import SubScore, Grader, combine, combine_any, combine_all, _combine_subscores

class Check(Grader):
    name = "Check"

    @classmethod
    async def compute_score(cls, value, **kwargs):
        return value, {"note": "ü", "nested": {"b": 1, "a": [1.5, None]}}

async def main():
    node = combine_any(0.25, [
        SubScore(name="x", value=0.0, weight=0.5),
        combine_all(0.5, [SubScore(name="y", value=1.0), SubScore(name="y", value=0.5, info={"k": 1})], name="both"),
    ], name="either")
    return await combine(
        Check.grade(weight=0.5, value=1.0, label="first"),
        SubScore(name="plain", value=0.5, weight=0.25),
        node,
        Check.grade(weight=0.25, value=0.0, label="second"),
        SubScore(name="penalty", value=1.0, weight=-0.1),
    )

result = asyncio.run(main())
print(result.model_dump_json())
print(_combine_subscores([SubScore(name="d", value=1.0, weight=2), SubScore(name="d", value=0.0, weight=1)]).model_dump_json())
"#;

#[test]
fn we_read_what_the_sdk_combiners_write_and_agree_with_it() {
    let Some(python) = python() else { return };
    let output = run_script(&python, SDK_WRITES, "");
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), 2, "{output}");

    let theirs: EvaluationResult = serde_json::from_str(lines[0]).expect("reads combine");
    let subs = theirs.subscores.clone().expect("subscores");
    let names: Vec<&str> = subs.iter().map(SubScore::name).collect();
    assert_eq!(names, ["Check-1", "plain", "either", "Check-2", "penalty"]);
    let first = subs[0].info().expect("info");
    assert_eq!(
        first["_parameters"],
        json!({"value": 1.0, "label": "first"})
    );
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        ["note", "nested", "_parameters"]
    );
    assert_eq!(
        first["nested"]
            .as_object()
            .expect("object")
            .keys()
            .collect::<Vec<_>>(),
        ["b", "a"]
    );
    let either = &subs[2];
    let children = either.children().expect("children");
    assert_eq!(children[1].name(), "both");
    let grandchildren: Vec<&str> = children[1]
        .children()
        .expect("grandchildren")
        .iter()
        .map(SubScore::name)
        .collect();
    assert_eq!(grandchildren, ["y-1", "y-2"]);
    // What we write of it is what the SDK wrote, byte for byte.
    assert_eq!(
        serde_json::to_string(&theirs).expect("serializes"),
        lines[0]
    );

    // Recombining the inputs the SDK saw gives the same result, info included (neither copies
    // subscore info into the result: R9).
    let inputs: Vec<SubScore> = subs
        .iter()
        .zip([0.5, 0.25, 0.25, 0.25, -0.1])
        .map(|(s, w)| {
            let base = s.name().trim_end_matches("-1").trim_end_matches("-2");
            s.clone().with_name(base).with_weight(w).expect("finite")
        })
        .collect();
    let ours = Grade::from_subscores(inputs).expect("combines");
    assert!(ours.info.is_empty());
    assert_eq!(ours, theirs);

    let theirs: EvaluationResult = serde_json::from_str(lines[1]).expect("reads");
    let ours = Grade::from_subscores([sub("d", 1.0, 2.0), sub("d", 0.0, 1.0)]).expect("ok");
    assert_eq!(ours, theirs);
}

/// Random subscore lists, combined by the SDK: one JSON array of cases on stdin, one JSON
/// array of `{result, any, all}` on stdout.
const SDK_COMBINES: &str = r#"
import json, sys, warnings
warnings.simplefilter("ignore")
from hud.graders import SubScore, _combine_subscores, combine_any, combine_all
out = []
for case in json.load(sys.stdin):
    subs = [SubScore.model_validate(s) for s in case]
    out.append({
        "result": _combine_subscores(subs).model_dump(mode="json"),
        "any": combine_any(0.5, subs).model_dump(mode="json"),
        "all": combine_all(-0.5, subs, name="every").model_dump(mode="json"),
    })
json.dump(out, sys.stdout)
"#;

fn random_case() -> impl Strategy<Value = Vec<SubScore>> {
    let name = prop_oneof![
        prop::sample::select(vec!["a", "a-1", "a-2", "b", "b-1-1", "", "ü"])
            .prop_map(str::to_owned),
        "[ab]{0,2}(-[0-2]){0,2}",
    ];
    let weight = prop_oneof![
        4 => 1e-3..10.0_f64,
        1 => Just(0.0),
        1 => Just(0.1),
        2 => -2.0..-1e-3_f64,
    ];
    // -0.0 beside 0.0: `any` and `all` keep the first of equal extremes, as Python's max/min.
    let value = prop_oneof![4 => 0.0..=1.0_f64, 1 => Just(0.0), 1 => Just(-0.0), 1 => Just(1.0)];
    prop::collection::vec((name, value, weight), 1..40)
        .prop_filter("a positive weight", |v| v.iter().any(|(_, _, w)| *w > 0.0))
        .prop_map(|items| items.into_iter().map(|(n, v, w)| sub(&n, v, w)).collect())
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs())),
        "{what}: {a} vs {b}"
    );
}

#[test]
fn random_subscores_combine_the_same_in_rust_and_in_the_sdk() {
    let Some(python) = python() else { return };
    let mut runner = TestRunner::deterministic();
    let strategy = random_case();
    let cases: Vec<Vec<SubScore>> = (0..300)
        .map(|_| strategy.new_tree(&mut runner).expect("generates").current())
        .collect();
    let output = run_script(
        &python,
        SDK_COMBINES,
        &serde_json::to_string(&cases).expect("serializes"),
    );
    let outputs: Vec<Value> = serde_json::from_str(&output).expect("the SDK's output is JSON");
    assert_eq!(outputs.len(), cases.len());

    for (case, sdk) in cases.into_iter().zip(outputs) {
        let theirs: EvaluationResult =
            serde_json::from_value(sdk["result"].clone()).expect("reads the SDK's result");
        let ours = Grade::from_subscores(case.clone()).expect("combines");
        close(ours.reward(), theirs.reward(), "reward");
        let (ours_subs, theirs_subs) = (
            ours.subscores.expect("subscores"),
            theirs.subscores.expect("subscores"),
        );
        assert_eq!(ours_subs.len(), theirs_subs.len());
        for (o, t) in ours_subs.iter().zip(&theirs_subs) {
            assert_eq!(o.name(), t.name());
            assert_eq!(o.value().to_bits(), t.value().to_bits(), "{}", o.name());
            close(o.weight(), t.weight(), o.name());
        }

        let theirs_any: SubScore = serde_json::from_value(sdk["any"].clone()).expect("any");
        let ours_any = any("any", case.clone()).grade(0.5).now().expect("any");
        assert_eq!(ours_any, theirs_any);
        assert_eq!(
            ours_any.value().to_bits(),
            theirs_any.value().to_bits(),
            "any: the sign of a zero too"
        );
        let theirs_all: SubScore = serde_json::from_value(sdk["all"].clone()).expect("all");
        let ours_all = all("every", case).grade(-0.5).now().expect("all");
        assert_eq!(ours_all, theirs_all);
        assert_eq!(
            ours_all.value().to_bits(),
            theirs_all.value().to_bits(),
            "all: the sign of a zero too"
        );
    }
}

/// For each result on stdin (one JSON per line): the SDK's `SubScore.to_summary()` of each
/// subscore, and the `evaluation` that `hud.eval` records for a grade (its subscores
/// summarized the same way).
const SDK_SUMMARIES: &str = r#"
import json, sys, warnings
warnings.simplefilter("ignore")
from hud.graders import SubScore
from hud.eval.run import Grade
for line in sys.stdin.read().splitlines():
    raw = json.loads(line)
    print(json.dumps({
        "subscores": [SubScore.model_validate(s).to_summary() for s in raw.get("subscores") or []],
        "evaluation": Grade(raw=raw).evaluation,
    }))
"#;

#[test]
fn to_summary_matches_the_sdk() {
    let Some(python) = python() else { return };
    let mut results = results_we_write();
    let mut runner = TestRunner::deterministic();
    let strategy = random_case();
    for _ in 0..50 {
        let case = strategy.new_tree(&mut runner).expect("generates").current();
        let nested = vec![
            any("either", case.clone()).grade(0.5).now().expect("any"),
            all("every", case).grade(0.5).now().expect("all"),
        ];
        results.push(Grade::from_subscores(nested).expect("combines"));
    }
    let input: Vec<String> = results
        .iter()
        .map(|r| serde_json::to_string(r).expect("serializes"))
        .collect();
    let output = run_script(&python, SDK_SUMMARIES, &input.join("\n"));
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), results.len(), "{output}");
    for (result, line) in results.iter().zip(lines) {
        let theirs: Value = serde_json::from_str(line).expect("the SDK's output is JSON");
        let ours: Vec<Value> = result
            .subscores
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(SubScore::to_summary)
            .collect();
        assert_eq!(Value::Array(ours), theirs["subscores"], "{line}");
        assert_eq!(result.to_summary(), theirs["evaluation"], "{line}");
        // Same keys in the same order, at the top and in every subscore.
        assert_eq!(
            serde_json::to_string(&result.to_summary()).expect("serializes"),
            serde_json::to_string(&theirs["evaluation"]).expect("serializes"),
        );
    }
}
