//! Recorded `_parameters` as JSON text: what `write_parameters` writes is byte for byte the JSON
//! of what `parameters` returns, for `#[grader]`, `#[derive(Grader)]` and hand-written graders,
//! and a graded subscore reads, compares and serializes as it did when they were a map.
#![allow(missing_docs, clippy::float_cmp, clippy::needless_pass_by_value)]

use std::borrow::Cow;
use std::collections::BTreeMap;

use grader_core::params::{ParametersWriter, json_safe};
use grader_core::{Failure, Grader, GraderError, Info, Score, SubScore, grader};
use serde::Serialize;
use serde::ser::SerializeMap as _;
use serde_json::{Value, json};

/// What `write_parameters` writes, checked against the JSON of `parameters`.
fn written<G: Grader>(grader: &G) -> String {
    let mut out = ParametersWriter::new();
    grader.write_parameters(&mut out);
    let text = out.into_string();
    let expected = serde_json::to_string(&grader.parameters()).expect("a map serializes");
    assert_eq!(text, expected);
    text
}

struct Opaque;

/// Fails at run time, after writing part of itself.
struct FailsHalfway;

impl Serialize for FailsHalfway {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("partial", &1)?;
        Err(serde::ser::Error::custom("refused"))
    }
}

#[derive(Serialize)]
enum Mode {
    Strict { depth: u8 },
}

#[grader]
#[allow(clippy::too_many_arguments)]
fn everything(
    text: &str,
    ratio: f64,
    small: f32,
    wide: u128,
    opaque: &Opaque,
    failing: &FailsHalfway,
    nested: &BTreeMap<String, Vec<Option<f64>>>,
    mode: &Mode,
    value: &Value,
) -> bool {
    let _ = (
        text, ratio, small, wide, opaque, failing, nested, mode, value,
    );
    true
}

fn nested() -> BTreeMap<String, Vec<Option<f64>>> {
    BTreeMap::from([
        (
            "é \"q\"\n".to_owned(),
            vec![Some(1.0), None, Some(f64::NAN)],
        ),
        ("b".to_owned(), vec![Some(f64::INFINITY), Some(-0.0)]),
    ])
}

fn value() -> Value {
    json!({"z": [1, {"y": null}], "a": "\u{1}\u{7f}😀", "m": {}})
}

#[test]
fn macro_graders_write_the_json_of_their_parameters() -> Result<(), GraderError> {
    let nested = nested();
    let value = value();
    let grader = Everything {
        text: "tab\there \\ \"quoted\" \u{0} é 😀 \u{2028}",
        ratio: f64::NAN,
        small: 0.1,
        wide: u128::MAX,
        opaque: &Opaque,
        failing: &FailsHalfway,
        nested: &nested,
        mode: &Mode::Strict { depth: 2 },
        value: &value,
    };
    let text = written(&grader);
    assert!(text.contains(r#""ratio":null"#), "{text}");
    assert!(text.contains(r#""small":0.10000000149011612"#), "{text}");
    assert!(
        text.contains(r#""wide":"<u128: not serializable>""#),
        "{text}"
    );
    assert!(
        text.contains(r#""opaque":"<Opaque: not serializable>""#),
        "{text}"
    );
    assert!(
        text.contains(r#""failing":"<FailsHalfway: not serializable>""#),
        "{text}"
    );

    // Graded, the subscore shows the same parameters as the last key of its info.
    let parameters = grader.parameters();
    let sub = grader.grade(0.5).now()?;
    let info = sub.info().expect("info");
    assert_eq!(info.keys().collect::<Vec<_>>(), ["_parameters"]);
    assert_eq!(info["_parameters"], Value::Object(parameters.clone()));
    // Its JSON is what it was with a map.
    let expected = SubScore::new("everything", 1.0)
        .and_then(|s| s.with_weight(0.5))
        .expect("valid")
        .with_info(Info::from_iter([(
            "_parameters".to_owned(),
            Value::Object(parameters),
        )]));
    assert_eq!(sub, expected);
    assert_eq!(
        serde_json::to_string(&sub).expect("serializes"),
        serde_json::to_string(&expected).expect("serializes")
    );
    assert_eq!(format!("{sub:?}"), format!("{expected:?}"));
    let back: SubScore =
        serde_json::from_str(&serde_json::to_string(&sub).expect("serializes")).expect("parses");
    assert_eq!(back, sub);
    Ok(())
}

#[grader]
fn nothing() -> bool {
    true
}

#[test]
fn a_grader_without_arguments_writes_an_empty_object() {
    assert_eq!(written(&Nothing {}), "{}");
}

/// A struct grader: skipped and compiled-out fields are not recorded.
#[derive(Grader)]
#[grader(score = check)]
struct Derived<'a> {
    answer: &'a str,
    #[grader(skip)]
    #[allow(dead_code)]
    secret: &'a str,
    #[cfg(any())]
    gone: u8,
    limits: [f64; 2],
}

impl Derived<'_> {
    fn check(&self) -> bool {
        !self.answer.is_empty()
    }
}

#[test]
fn derived_graders_write_the_json_of_their_parameters() {
    let grader = Derived {
        answer: "yes",
        secret: "hidden",
        limits: [0.5, f64::NEG_INFINITY],
    };
    assert_eq!(written(&grader), r#"{"answer":"yes","limits":[0.5,null]}"#);
}

/// A hand-written grader that implements `parameters` only: the default `write_parameters`.
struct HandWritten;

impl Grader for HandWritten {
    fn name(&self) -> Cow<'_, str> {
        "hand_written".into()
    }

    fn parameters(&self) -> Info {
        let mut params = Info::new();
        params.insert("z".into(), json_safe(&[1.5, f64::NAN], "[f64; 2]"));
        params.insert("a".into(), json!({"k": "\n"}));
        params
    }

    async fn score(self) -> Result<Score, Failure> {
        Ok(Score::new(1.0))
    }
}

#[test]
fn the_default_writes_what_parameters_returns() -> Result<(), GraderError> {
    assert_eq!(written(&HandWritten), r#"{"z":[1.5,null],"a":{"k":"\n"}}"#);
    let sub = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(HandWritten.grade(1.0))?;
    assert_eq!(sub.info().expect("info")["_parameters"]["a"]["k"], "\n");
    // Boxed, the same.
    assert_eq!(written(&HandWritten.boxed()), written(&HandWritten));
    Ok(())
}

#[grader]
fn answered(answer: &str, key: &str) -> bool {
    !answer.is_empty() && !key.is_empty()
}

#[test]
fn redaction_still_replaces_the_value() -> Result<(), GraderError> {
    let sub = Answered {
        answer: "42",
        key: "sk-secret",
    }
    .grade(1.0)
    .redact("key")
    .now()?;
    assert_eq!(
        sub.info().expect("info")["_parameters"],
        json!({"answer": "42", "key": "<redacted>"})
    );
    assert!(
        !serde_json::to_string(&sub)
            .expect("serializes")
            .contains("sk-secret")
    );

    let error = Answered {
        answer: "42",
        key: "sk-secret",
    }
    .grade(1.0)
    .redact("key")
    .redact("kye")
    .now()
    .expect_err("a misspelt name");
    assert!(matches!(
        &error.failure,
        Failure::UnknownParameter { name, known } if name == "kye" && known == &["answer", "key"]
    ));
    assert_eq!(error.parameters["key"], "<redacted>");
    Ok(())
}

#[test]
fn a_failure_carries_the_parameters_as_a_map() {
    let grader = || Answered {
        answer: "42",
        key: "k",
    };
    let error = grader().grade(f64::NAN).now().expect_err("not a weight");
    assert!(matches!(error.failure, Failure::InvalidWeight { .. }));
    assert_eq!(*error.parameters, grader().parameters());
    let error = grader()
        .grade(-1.0)
        .required()
        .now()
        .expect_err("a required penalty");
    assert!(matches!(error.failure, Failure::RequiredPenalty { .. }));
    assert_eq!(*error.parameters, grader().parameters());
}

#[grader]
fn flaky(answer: &str) -> Result<f64, String> {
    if answer.is_empty() {
        Err("empty".into())
    } else {
        Ok(1.0)
    }
}

#[test]
fn a_failing_check_carries_the_parameters_as_a_map() {
    let error = Flaky { answer: "" }.grade(1.0).now().expect_err("it fails");
    assert_eq!(*error.parameters, Flaky { answer: "" }.parameters());
    assert_eq!(error.parameters["answer"], "");
}

/// An expression tree: each addition nests two levels of JSON.
#[derive(Serialize)]
enum Expr {
    Num(f64),
    Add(Box<Expr>, Box<Expr>),
}

fn chain(n: usize) -> Expr {
    let mut expr = Expr::Num(0.0);
    for i in 0..n {
        #[allow(clippy::cast_precision_loss)]
        let number = Expr::Num(i as f64);
        expr = Expr::Add(Box::new(expr), Box::new(number));
    }
    expr
}

#[grader]
fn deep(expr: &Expr, label: &str) -> bool {
    let _ = (expr, label);
    true
}

/// Parameters nested past serde_json's default reading depth (128) read back whole, as a
/// map holding them always did.
#[test]
fn deeply_nested_parameters_read_back_whole() -> Result<(), GraderError> {
    let expr = chain(200);
    let grader = Deep {
        expr: &expr,
        label: "x",
    };
    written(&grader);
    let sub = grader.grade(1.0).now()?;
    let expected = json!({"expr": json_safe(&expr, "Expr"), "label": "x"});
    assert_eq!(sub.info().expect("info")["_parameters"], expected);
    let timed = Deep {
        expr: &expr,
        label: "x",
    }
    .grade(1.0)
    .timed()
    .now()?;
    assert_eq!(timed.info().expect("info")["_parameters"], expected);
    Ok(())
}

/// A map that writes a key and no value for it.
struct DanglingKey;

impl Serialize for DanglingKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("a", &1)?;
        map.serialize_key("dangling")?;
        map.end()
    }
}

/// A map that writes a value without a key.
struct KeylessValue;

impl Serialize for KeylessValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_value(&1)?;
        map.end()
    }
}

#[grader]
fn dangling(value: &DanglingKey, label: &str) -> bool {
    let _ = (value, label);
    true
}

#[grader]
fn keyless(value: &KeylessValue) -> bool {
    let _ = value;
    true
}

/// A `Serialize` that breaks the key-value pairing records what the map path recorded: the
/// key without a value dropped, and a value without a key a panic of the grading (serde_json's
/// own), never text that is not JSON.
#[test]
fn unpaired_keys_and_values_record_what_a_map_records() -> Result<(), GraderError> {
    let grader = Dangling {
        value: &DanglingKey,
        label: "x",
    };
    assert_eq!(written(&grader), r#"{"value":{"a":1},"label":"x"}"#);
    let sub = grader.grade(1.0).now()?;
    assert_eq!(
        sub.info().expect("info")["_parameters"],
        json!({"value": {"a": 1}, "label": "x"})
    );

    let failed = Keyless {
        value: &KeylessValue,
    }
    .grade(1.0)
    .now()
    .expect_err("serde_json panics on a value without a key");
    assert!(
        matches!(failed.failure, Failure::Panicked { .. }),
        "{failed}"
    );
    Ok(())
}

/// serde_json's numbers (`Value`s and `Number`s among the parameters) and `f32`s are written
/// as a `Value` holds them.
#[test]
fn numbers_are_written_as_a_value_holds_them() {
    let grader = Everything {
        text: "",
        ratio: 0.1,
        small: 0.1,
        wide: 1,
        opaque: &Opaque,
        failing: &FailsHalfway,
        nested: &BTreeMap::new(),
        mode: &Mode::Strict { depth: 1 },
        value: &json!({"n": 1, "x": 2.5, "big": u64::MAX, "neg": i64::MIN}),
    };
    let text = written(&grader);
    assert!(text.contains(r#""small":0.10000000149011612"#), "{text}");
    assert!(
        text.contains(r#"{"n":1,"x":2.5,"big":18446744073709551615,"neg":-9223372036854775808}"#),
        "{text}"
    );
}
