//! What `#[grader]` graders record under `_parameters`, and how they grade.
#![allow(missing_docs, clippy::float_cmp, clippy::needless_pass_by_value)]

use std::collections::BTreeMap;
use std::path::Path;

use grader_core::{Failure, Gather, Grader, GraderError, Info, SubScore, grader};
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Serialize)]
struct Config {
    retries: u32,
    tags: Vec<String>,
    inner: Inner,
}

#[derive(Serialize)]
struct Inner {
    ratio: f64,
}

struct Opaque;

fn parameters(sub: &SubScore) -> &Value {
    &sub.info().expect("info")["_parameters"]
}

#[grader]
fn records_json(
    config: &Config,
    path: &Path,
    pair: (u8, &str),
    counts: BTreeMap<String, u32>,
    maybe: Option<f64>,
) -> f64 {
    let _ = (config, path, pair, counts, maybe);
    1.0
}

#[test]
fn serializable_arguments_are_recorded_as_their_json() -> Result<(), GraderError> {
    let config = Config {
        retries: 3,
        tags: vec!["a".into(), "b".into()],
        inner: Inner { ratio: f64::NAN },
    };
    let counts = BTreeMap::from([("x".to_owned(), 1), ("y".to_owned(), 2)]);
    let sub = RecordsJson {
        config: &config,
        path: Path::new("/srv/repo"),
        pair: (7, "seven"),
        counts,
        maybe: None,
    }
    .grade(1.0)
    .now()?;
    assert_eq!(
        parameters(&sub),
        &json!({
            "config": {"retries": 3, "tags": ["a", "b"], "inner": {"ratio": null}},
            "path": "/srv/repo",
            "pair": [7, "seven"],
            "counts": {"x": 1, "y": 2},
            "maybe": null,
        })
    );
    Ok(())
}

#[grader]
fn ordered(zeta: u8, alpha: u8, middle: u8) -> f64 {
    f64::from(zeta + alpha + middle) / 100.0
}

#[test]
fn keys_follow_parameter_order() -> Result<(), GraderError> {
    let sub = Ordered {
        alpha: 2,
        middle: 3,
        zeta: 1,
    }
    .grade(1.0)
    .now()?;
    let keys: Vec<&String> = parameters(&sub)
        .as_object()
        .expect("object")
        .keys()
        .collect();
    assert_eq!(keys, ["zeta", "alpha", "middle"]);
    Ok(())
}

#[grader]
#[allow(clippy::needless_lifetimes)] // the placeholder strips a named lifetime
fn placeholders<'a>(
    opaque: &'a Opaque,
    list: &mut Vec<Opaque>,
    shown: impl std::fmt::Display,
    bad_map: BTreeMap<Vec<u8>, u8>,
) -> bool {
    let _ = (opaque, list, shown.to_string(), bad_map);
    true
}

#[test]
fn values_without_json_get_the_declared_type_name() -> Result<(), GraderError> {
    let mut list = vec![Opaque];
    let sub = Placeholders {
        opaque: &Opaque,
        list: &mut list,
        shown: 5,
        bad_map: BTreeMap::from([(vec![1], 1)]),
    }
    .grade(1.0)
    .now()?;
    assert_eq!(
        parameters(&sub),
        &json!({
            "opaque": "<Opaque: not serializable>",
            "list": "<Vec<Opaque>: not serializable>",
            "shown": "<impl std::fmt::Display: not serializable>",
            "bad_map": "<BTreeMap<Vec<u8>, u8>: not serializable>",
        })
    );
    Ok(())
}

#[grader]
fn bounded<T: Serialize>(value: T) -> bool {
    let _ = value;
    true
}

#[test]
fn generic_arguments_bounded_by_serialize_are_recorded() -> Result<(), GraderError> {
    let sub = Bounded { value: [1.5, 2.5] }.grade(1.0).now()?;
    assert_eq!(parameters(&sub), &json!({"value": [1.5, 2.5]}));
    Ok(())
}

#[grader(skip(api_key, r#type))]
fn with_secret(api_key: &str, r#type: &str, answer: &str) -> bool {
    !api_key.is_empty() && !r#type.is_empty() && !answer.is_empty()
}

#[test]
fn skipped_arguments_are_not_recorded_and_raw_names_lose_their_prefix() -> Result<(), GraderError> {
    let sub = WithSecret {
        api_key: "sk-secret",
        r#type: "t",
        answer: "yes",
    }
    .grade(1.0)
    .now()?;
    assert_eq!(parameters(&sub), &json!({"answer": "yes"}));
    assert!(
        !serde_json::to_string(&sub)
            .expect("json")
            .contains("sk-secret")
    );
    Ok(())
}

#[grader]
fn r#raw_params(r#type: u8, r#match: bool) -> bool {
    r#type > 0 && r#match
}

#[test]
fn raw_identifiers_are_recorded_without_r_hash() -> Result<(), GraderError> {
    let sub = RawParams {
        r#type: 1,
        r#match: true,
    }
    .grade(1.0)
    .now()?;
    assert_eq!(sub.name(), "raw_params");
    assert_eq!(parameters(&sub), &json!({"type": 1, "match": true}));
    Ok(())
}

#[grader]
fn bumps(counter: &mut Vec<u32>) -> f64 {
    counter.push(99);
    1.0
}

#[test]
fn arguments_are_recorded_as_they_were_on_entry() -> Result<(), GraderError> {
    let mut counter = vec![1];
    let sub = Bumps {
        counter: &mut counter,
    }
    .grade(1.0)
    .now()?;
    assert_eq!(parameters(&sub), &json!({"counter": [1]}));
    assert_eq!(counter, [1, 99]);
    Ok(())
}

#[grader(name = "judged")]
fn with_info(verdict: &str) -> (f64, Info) {
    let mut info = Info::new();
    info.insert("verdict".into(), verdict.into());
    (0.25, info)
}

#[test]
fn info_keeps_what_the_function_returned_then_parameters() -> Result<(), GraderError> {
    let sub = WithInfo { verdict: "close" }.grade(0.4).now()?;
    assert_eq!(
        (sub.name(), sub.value(), sub.weight()),
        ("judged", 0.25, 0.4)
    );
    let info = sub.info().expect("info");
    assert_eq!(info.keys().collect::<Vec<_>>(), ["verdict", "_parameters"]);
    let renamed = WithInfo { verdict: "close" }
        .grade(0.4)
        .named("override")
        .now()?;
    assert_eq!(renamed.name(), "override");
    Ok(())
}

#[grader]
fn returns(value: f64) -> f64 {
    value
}

#[grader]
fn fails(reason: &str) -> Result<bool, String> {
    Err(reason.to_owned())
}

#[test]
fn invalid_values_and_errors_are_typed_errors_naming_the_grader() {
    for bad in [f64::NAN, f64::INFINITY, -0.5, 1.5] {
        let error = Returns { value: bad }
            .grade(0.5)
            .now()
            .expect_err("invalid");
        assert_eq!(error.grader, "returns");
        assert!(
            matches!(error.failure, Failure::InvalidScore { value } if value.to_bits() == bad.to_bits())
        );
    }
    let error = Fails { reason: "no tests" }
        .grade(0.5)
        .now()
        .expect_err("err");
    assert_eq!(error.grader, "fails");
    assert!(matches!(&error.failure, Failure::Message(m) if m == "no tests"));
    assert_eq!(error.to_string(), "grader `fails` failed: no tests");
    let error = Returns { value: 0.5 }
        .grade(f64::NAN)
        .now()
        .expect_err("weight");
    assert!(matches!(error.failure, Failure::InvalidWeight { .. }));
}

#[grader]
async fn later(answer: String, delay_ms: u64) -> Result<f64, std::io::Error> {
    tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
    Ok(if answer.is_empty() { 0.0 } else { 1.0 })
}

#[tokio::test]
async fn async_graders_gather_beside_sync_and_ready_ones() -> Result<(), Box<dyn std::error::Error>>
{
    let result = Gather::new()
        .add(
            Later {
                answer: "x".into(),
                delay_ms: 5,
            }
            .grade(0.5),
        )
        .add(Grader::grade(Returns { value: 0.0 }, 0.25))
        .add(Returns { value: 1.0 }.grade(0.25).named("ready"))
        .await?;
    let subs = result.subscores.as_deref().expect("subscores");
    let names: Vec<&str> = subs.iter().map(SubScore::name).collect();
    assert_eq!(names, ["later", "returns", "ready"]);
    assert_eq!(parameters(&subs[0]), &json!({"answer": "x", "delay_ms": 5}));
    assert!((result.reward() - 0.75).abs() < 1e-12);
    Ok(())
}
