#![allow(missing_docs, clippy::all, dead_code)]
//! Scratch review tests (temporary).

use grader_core::eval::Line;
use grader_core::params::{ParametersWriter, json_safe};
use grader_core::{Failure, Grade, Grader, SubScore, grader};
use serde::Serialize;
use serde::ser::{SerializeMap as _, SerializeSeq as _};
use serde_json::{Value, json};

#[derive(Serialize, Clone)]
enum Expr {
    Num(f64),
    Add(Box<Expr>, Box<Expr>),
}

fn chain(n: usize) -> Expr {
    let mut e = Expr::Num(0.0);
    for i in 0..n {
        e = Expr::Add(Box::new(e), Box::new(Expr::Num(i as f64)));
    }
    e
}

#[grader]
fn deep(expr: &Expr, label: &str) -> bool {
    let _ = (expr, label);
    true
}

/// What the old map path recorded: json_safe into a map.
fn old_params(expr: &Expr, label: &str) -> Value {
    json!({"expr": json_safe(expr, "Expr"), "label": json_safe(label, "str")})
}

#[test]
fn deep_expression_parameters_survive_info() {
    // 64 nested additions: {"Add":[{"Add":[...]}, ...]} is 2 levels per node.
    let e = chain(64);
    let sub = Deep { expr: &e, label: "x" }.grade(1.0).now().expect("graded");
    let info = sub.info().expect("info");
    assert_eq!(info["_parameters"], old_params(&e, "x"), "info() lost the parameters");
}

#[test]
fn deep_expression_parameters_survive_serialize() {
    let e = chain(64);
    let sub = Deep { expr: &e, label: "x" }.grade(1.0).now().expect("graded");
    let json: Value = serde_json::from_str(&serde_json::to_string(&sub).unwrap()).unwrap_or(Value::Null);
    let _ = json;
    let text = serde_json::to_string(&sub).unwrap();
    assert!(text.contains("\"label\":\"x\""), "serialized subscore lost parameters: {}", &text[..text.len().min(200)]);
}

#[test]
fn deep_expression_parameters_survive_timed_line() {
    let e = chain(64);
    let sub = Deep { expr: &e, label: "x" }.grade(1.0).timed().now().expect("graded");
    let result = Grade::from_subscores([sub]).expect("result");
    let line = Line::graded("s", 0, result, 0.0).to_json_line().expect("line");
    let text = String::from_utf8(line).unwrap();
    assert!(text.contains("\"label\":\"x\""), "written line lost parameters: {}", &text[..text.len().min(300)]);
}

#[test]
fn different_deep_parameters_compare_equal() {
    let a = Deep { expr: &chain(64), label: "a" }.grade(1.0).now().unwrap();
    let b = Deep { expr: &chain(65), label: "b" }.grade(1.0).now().unwrap();
    assert_ne!(a, b, "different parameters compare equal");
}

/// A map that gives a key and no value (a contract violation that serde_json's Value
/// serializer tolerates: the key is dropped).
struct KeyNoValue;
impl Serialize for KeyNoValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("a", &1)?;
        m.serialize_key("dangling")?;
        m.end()
    }
}

#[grader]
fn dangling(v: &KeyNoValue, label: &str) -> bool {
    let _ = (v, label);
    true
}

#[test]
fn dangling_key_writes_valid_json() {
    let mut w = ParametersWriter::new();
    w.record("v", &KeyNoValue, "KeyNoValue");
    let text = w.into_string();
    let parsed: Result<Value, _> = serde_json::from_str(&text);
    assert!(parsed.is_ok(), "invalid JSON written: {text}");
}

#[test]
fn dangling_key_line_is_valid_json() {
    let sub = Dangling { v: &KeyNoValue, label: "x" }.grade(1.0).now().expect("graded");
    assert_eq!(
        sub.info().unwrap()["_parameters"],
        json!({"v": {"a": 1}, "label": "x"}),
        "info differs from the old map path"
    );
}

#[test]
fn dangling_key_line_written() {
    let sub = Dangling { v: &KeyNoValue, label: "x" }.grade(1.0).now().expect("graded");
    let result = Grade::from_subscores([sub]).expect("result");
    let line = Line::graded("s", 0, result, 0.0).to_json_line().expect("line");
    let text = String::from_utf8(line).unwrap();
    let parsed: Result<Value, _> = serde_json::from_str(text.trim_end());
    assert!(parsed.is_ok(), "the output line is not JSON: {text}");
}

/// Value without a key: the Value serializer panics ("serialize_value called before
/// serialize_key"), which failed the grading before.
struct ValueNoKey;
impl Serialize for ValueNoKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_value(&1)?;
        m.end()
    }
}

#[grader]
fn valuenokey(v: &ValueNoKey) -> bool {
    let _ = v;
    true
}

#[test]
fn value_without_key_fails_as_before() {
    let out = Valuenokey { v: &ValueNoKey }.grade(1.0).now();
    match out {
        Err(e) => assert!(matches!(e.failure, Failure::Panicked { .. })),
        Ok(sub) => panic!("graded, info {:?}", sub.info()),
    }
}

/// Panicking Serialize: the grading fails as before.
struct Panics;
impl Serialize for Panics {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        seq.serialize_element(&1)?;
        panic!("boom in serialize");
    }
}

#[grader]
fn panicky(v: &Panics) -> bool {
    let _ = v;
    true
}

#[test]
fn panicking_serialize_is_the_failure() {
    let e = Panicky { v: &Panics }.grade(1.0).now().expect_err("fails");
    assert!(matches!(&e.failure, Failure::Panicked { message } if message.contains("boom")), "{e:?}");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let e = rt.block_on(Panicky { v: &Panics }.grade(1.0)).expect_err("fails");
    assert!(matches!(&e.failure, Failure::Panicked { message } if message.contains("boom")), "{e:?}");
}

fn _assert_send_sync() {
    fn f<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe + Unpin>() {}
    f::<SubScore>();
}
