//! What `#[derive(Grader)]` graders record and how they grade: the same `_parameters` as the
//! equivalent `#[grader]` function, skipped fields nowhere, every receiver and both kinds of
//! score method.
#![allow(
    missing_docs,
    clippy::float_cmp,
    clippy::needless_pass_by_value,
    clippy::too_many_arguments
)]

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use grader_core::{
    EvaluationResult, Failure, Gather, Grade, Grader, GraderError, Info, SubScore, grader,
};
use serde::Serialize;
use serde_json::{Value, json};

/// Grades under a given name, awaiting.
async fn grade_as<G: Grader + Send>(
    grader: G,
    weight: f64,
    name: &str,
) -> Result<SubScore, GraderError> {
    grader.grade(weight).named(name).await
}

async fn grade<G: Grader + Send>(grader: G, weight: f64) -> Result<SubScore, GraderError> {
    grader.grade(weight).await
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime")
        .block_on(future)
}

fn parameters(sub: &SubScore) -> &Value {
    &sub.info().expect("info")["_parameters"]
}

#[derive(Serialize)]
struct Config {
    retries: u32,
    ratio: f64,
}

struct Opaque;

fn shared_check(
    answer: &str,
    accepted: &HashSet<String>,
    config: &Config,
    path: &Path,
    opaque: &Opaque,
    pair: (u8, &str),
    counts: &BTreeMap<String, u32>,
    maybe: Option<f64>,
) -> f64 {
    let _ = (config, path, opaque, pair, counts, maybe);
    if accepted.contains(answer) { 1.0 } else { 0.25 }
}

#[grader]
fn as_function(
    answer: &str,
    accepted: &HashSet<String>,
    config: &Config,
    path: &Path,
    opaque: &Opaque,
    pair: (u8, &str),
    counts: &BTreeMap<String, u32>,
    maybe: Option<f64>,
) -> f64 {
    shared_check(answer, accepted, config, path, opaque, pair, counts, maybe)
}

#[derive(Grader)]
#[grader(score = check)]
struct AsStruct<'a> {
    answer: &'a str,
    accepted: &'a HashSet<String>,
    config: &'a Config,
    path: &'a Path,
    opaque: &'a Opaque,
    pair: (u8, &'a str),
    counts: &'a BTreeMap<String, u32>,
    maybe: Option<f64>,
}

impl AsStruct<'_> {
    fn check(&self) -> f64 {
        shared_check(
            self.answer,
            self.accepted,
            self.config,
            self.path,
            self.opaque,
            self.pair,
            self.counts,
            self.maybe,
        )
    }
}

#[test]
fn records_exactly_what_the_equivalent_function_records() -> Result<(), GraderError> {
    let accepted: HashSet<String> = ["Paris".to_owned()].into();
    let config = Config {
        retries: 3,
        ratio: f64::INFINITY,
    };
    let counts = BTreeMap::from([("x".to_owned(), 1)]);
    for answer in ["Paris", "Lyon"] {
        let function = AsFunction {
            answer,
            accepted: &accepted,
            config: &config,
            path: Path::new("/srv/repo"),
            opaque: &Opaque,
            pair: (7, "seven"),
            counts: &counts,
            maybe: None,
        };
        let derived = AsStruct {
            answer,
            accepted: &accepted,
            config: &config,
            path: Path::new("/srv/repo"),
            opaque: &Opaque,
            pair: (7, "seven"),
            counts: &counts,
            maybe: None,
        };
        assert_eq!(Grader::parameters(&derived), Grader::parameters(&function));
        let from_function = block_on(grade_as(function, 0.5, "same"))?;
        let from_derive = block_on(grade_as(derived, 0.5, "same"))?;
        assert_eq!(from_derive, from_function);
    }
    let sub = block_on(grade(
        AsStruct {
            answer: "Paris",
            accepted: &accepted,
            config: &config,
            path: Path::new("/srv/repo"),
            opaque: &Opaque,
            pair: (7, "seven"),
            counts: &counts,
            maybe: Some(0.5),
        },
        1.0,
    ))?;
    assert_eq!(sub.name(), "as_struct");
    assert_eq!(
        parameters(&sub),
        &json!({
            "answer": "Paris",
            "accepted": ["Paris"],
            "config": {"retries": 3, "ratio": null},
            "path": "/srv/repo",
            "opaque": "<Opaque: not serializable>",
            "pair": [7, "seven"],
            "counts": {"x": 1},
            "maybe": 0.5,
        })
    );
    Ok(())
}

const SECRET: &str = "sk-live-5ecret-do-not-record";

#[derive(Grader)]
#[grader(score = check, skip(token))]
struct UsesSecrets {
    #[grader(skip)]
    api_key: String,
    token: String,
    answer: String,
    fail: bool,
}

impl UsesSecrets {
    fn check(self) -> Result<f64, String> {
        if self.api_key.is_empty() || self.token.is_empty() {
            return Ok(0.0);
        }
        if self.fail {
            Err("the service refused the answer".to_owned())
        } else {
            Ok(1.0)
        }
    }
}

fn uses_secrets(fail: bool) -> UsesSecrets {
    UsesSecrets {
        api_key: SECRET.to_owned(),
        token: SECRET.to_owned(),
        answer: "yes".to_owned(),
        fail,
    }
}

#[test]
fn skipped_fields_appear_nowhere() -> Result<(), Box<dyn std::error::Error>> {
    let grader = uses_secrets(false);
    let recorded = Grader::parameters(&grader);
    assert_eq!(
        Value::from(recorded),
        json!({"answer": "yes", "fail": false})
    );

    let sub = block_on(grade(grader, 1.0))?;
    assert_eq!(sub.value(), 1.0);
    let result: EvaluationResult = Grade::from_subscores(vec![sub.clone()])?;
    assert!(serde_json::to_string(&sub)?.contains(r#""answer":"yes""#));
    for shown in [
        serde_json::to_string(&sub)?,
        format!("{sub:?}"),
        format!("{sub}"),
        serde_json::to_string(&result)?,
        format!("{result:?}"),
        format!("{result}"),
    ] {
        assert!(!shown.contains(SECRET), "a skipped field leaked: {shown}");
    }

    let error = block_on(grade(uses_secrets(true), 1.0)).expect_err("the check fails");
    assert_eq!(error.grader, "uses_secrets");
    assert!(matches!(&error.failure, Failure::Message { .. }));
    for shown in [
        error.to_string(),
        format!("{error:?}"),
        serde_json::to_string(&Value::from((*error.parameters).clone()))?,
    ] {
        assert!(!shown.contains(SECRET), "a skipped field leaked: {shown}");
    }
    assert_eq!(error.parameters.get("answer"), Some(&json!("yes")));
    Ok(())
}

#[derive(Grader)]
#[grader(score = check, name = "by_value")]
struct ByValue {
    answer: String,
}

impl ByValue {
    fn check(self) -> bool {
        self.answer == "ok"
    }
}

#[derive(Grader)]
#[grader(score = check)]
struct ByMutRef {
    seen: Vec<String>,
}

impl ByMutRef {
    fn check(&mut self) -> f64 {
        self.seen.push("checked".to_owned());
        if self.seen.len() == 2 { 1.0 } else { 0.0 }
    }
}

#[derive(Grader)]
#[grader(score = async check)]
struct AsyncByRef {
    answer: String,
    delay_ms: u64,
}

impl AsyncByRef {
    async fn check(&self) -> Result<(f64, Info), std::io::Error> {
        tokio::time::sleep(std::time::Duration::from_millis(self.delay_ms)).await;
        let mut info = Info::new();
        info.insert("length".into(), self.answer.len().into());
        Ok((0.5, info))
    }
}

#[derive(Grader)]
#[grader(score = async check)]
struct AsyncByValue {
    path: PathBuf,
}

impl AsyncByValue {
    async fn check(self) -> Result<bool, std::io::Error> {
        tokio::task::yield_now().await;
        Ok(std::fs::metadata(&self.path)?.is_file())
    }
}

#[test]
fn every_receiver_and_both_kinds_of_method_grade() -> Result<(), Box<dyn std::error::Error>> {
    block_on(async {
        let file = std::env::current_exe()?;
        let sub = grade(
            ByValue {
                answer: "ok".into(),
            },
            0.5,
        )
        .await?;
        assert_eq!(
            (sub.name(), sub.value(), sub.weight()),
            ("by_value", 1.0, 0.5)
        );

        let sub = grade(
            ByMutRef {
                seen: vec!["before".into()],
            },
            1.0,
        )
        .await?;
        assert_eq!((sub.name(), sub.value()), ("by_mut_ref", 1.0));
        assert_eq!(
            parameters(&sub),
            &json!({"seen": ["before"]}),
            "recorded before the check"
        );

        let sub = grade(
            AsyncByRef {
                answer: "four".into(),
                delay_ms: 5,
            },
            1.0,
        )
        .await?;
        assert_eq!((sub.name(), sub.value()), ("async_by_ref", 0.5));
        assert_eq!(sub.info().expect("info")["length"], 4);
        assert_eq!(parameters(&sub), &json!({"answer": "four", "delay_ms": 5}));

        let sub = grade(AsyncByValue { path: file.clone() }, 1.0).await?;
        assert_eq!(sub.value(), 1.0);
        assert_eq!(parameters(&sub)["path"], json!(file));

        let error = grade(
            AsyncByValue {
                path: file.join("missing"),
            },
            1.0,
        )
        .await
        .expect_err("a missing file is an error, not a zero");
        assert_eq!(error.grader, "async_by_value");
        assert!(matches!(error.failure, Failure::Message { .. }));

        let result = Gather::new()
            .add(
                ByValue {
                    answer: "no".into(),
                }
                .grade(0.5),
            )
            .add(
                AsyncByRef {
                    answer: "x".into(),
                    delay_ms: 1,
                }
                .grade(0.5),
            )
            .await?;
        assert_eq!(result.reward(), 0.25);
        Ok(())
    })
}

#[derive(Grader)]
#[grader(score = check)]
struct Within<T: PartialOrd + Serialize, U> {
    value: T,
    limit: T,
    unbounded: U,
}

impl<T: PartialOrd + Serialize, U> Within<T, U> {
    fn check(&self) -> bool {
        self.value <= self.limit
    }
}

#[derive(Grader)]
#[grader(score = check)]
struct OutOfRange {
    value: f64,
}

impl OutOfRange {
    fn check(&self) -> f64 {
        self.value
    }
}

#[test]
fn generic_fields_and_invalid_scores() {
    let sub = block_on(grade(
        Within {
            value: 2,
            limit: 3,
            unbounded: Opaque,
        },
        1.0,
    ))
    .expect("valid");
    assert_eq!(
        parameters(&sub),
        &json!({"value": 2, "limit": 3, "unbounded": "<U: not serializable>"}),
        "a field of an unbounded type parameter gets the placeholder with the parameter's name"
    );
    let error = block_on(grade(OutOfRange { value: 1.5 }, 1.0)).expect_err("out of range");
    assert_eq!(error.grader, "out_of_range");
    assert!(matches!(error.failure, Failure::InvalidScore { value } if value == 1.5));
    let error = block_on(grade(OutOfRange { value: f64::NAN }, 1.0)).expect_err("NaN");
    assert!(matches!(error.failure, Failure::InvalidScore { .. }));
}

#[test]
fn a_synchronous_score_method_grades_without_a_runtime() -> Result<(), GraderError> {
    let sub = ByValue {
        answer: "ok".into(),
    }
    .grade(0.5)
    .now()?;
    assert_eq!(
        (sub.name(), sub.value(), sub.weight()),
        ("by_value", 1.0, 0.5)
    );
    let error = OutOfRange { value: -0.5 }
        .grade(1.0)
        .named("renamed")
        .now()
        .expect_err("out of range");
    assert_eq!(error.grader, "renamed");
    let sub = Within {
        value: 1.5,
        limit: 1.0,
        unbounded: (),
    }
    .grade(1.0)
    .now()?;
    assert_eq!(sub.value(), 0.0);
    Ok(())
}

#[derive(Grader)]
#[grader(score = check)]
struct Configured {
    #[cfg(not(test))] // not compiled in this test
    hidden: u32,
    #[cfg(test)] // compiled in this test
    shown: u32,
}

impl Configured {
    fn check(&self) -> bool {
        self.shown > 0
    }
}

#[test]
fn fields_compiled_out_are_not_recorded() {
    let grader = Configured { shown: 2 };
    assert_eq!(Value::from(grader.parameters()), json!({"shown": 2}));
}
