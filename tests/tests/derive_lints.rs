//! Derived graders of every shape, compiled with every warning and pedantic lint denied: what
//! `#[derive(Grader)]` generates must not trip a lint in the user's crate.
#![deny(warnings, clippy::pedantic, missing_docs)]

use std::collections::{BTreeMap, HashSet};
use std::fmt::Display;
use std::path::Path;

use grader_core::{Grader, Info, SubScore};

/// A value with no JSON form.
pub struct Opaque;

/// Borrowed fields with explicit lifetimes, scored through `&self`.
#[derive(Grader)]
#[grader(score = check)]
pub struct Borrowed<'a, 'b: 'a> {
    /// Where the repository is.
    pub repo: &'a Path,
    /// Accepted answers.
    pub accepted: &'b HashSet<&'a str>,
    /// The answer.
    pub answer: &'a str,
    /// Not serializable.
    pub opaque: &'a Opaque,
}

impl Borrowed<'_, '_> {
    fn check(&self) -> f64 {
        let _ = (self.repo, self.opaque);
        if self.accepted.contains(self.answer) {
            1.0
        } else {
            0.5
        }
    }
}

/// Generics with bounds, a const parameter and a where clause, scored through `self`.
#[derive(Grader)]
#[grader(score = check, name = "within_limit")]
pub struct Generic<T, const N: usize>
where
    T: serde::Serialize + PartialOrd + Display,
{
    /// The values.
    pub values: [T; N],
    /// The bound.
    pub limit: T,
}

impl<T, const N: usize> Generic<T, N>
where
    T: serde::Serialize + PartialOrd + Display,
{
    fn check(self) -> Result<f32, String> {
        match self.values.iter().find(|value| **value > self.limit) {
            Some(value) => Err(format!("{value} is above {}", self.limit)),
            None => Ok(1.0),
        }
    }
}

/// Skipped fields, a raw identifier, and `&mut self`.
#[derive(Grader)]
#[grader(score = check, skip(client))]
pub struct Skips {
    /// A secret.
    #[grader(skip)]
    pub api_key: String,
    /// A client.
    pub client: Opaque,
    /// A keyword as a name.
    pub r#type: String,
    /// Counted calls.
    pub calls: u32,
}

impl Skips {
    fn check(&mut self) -> bool {
        self.calls += 1;
        let _ = &self.client;
        !self.api_key.is_empty() && !self.r#type.is_empty()
    }
}

/// An async score method through `&self`, returning info.
#[derive(Grader)]
#[grader(score = async check, crate = ::grader_core)]
pub struct AsyncInfo {
    /// Counts.
    pub map: BTreeMap<String, u32>,
}

impl AsyncInfo {
    async fn check(&self) -> (f64, Info) {
        tokio::task::yield_now().await;
        let mut info = Info::new();
        info.insert("len".into(), self.map.len().into());
        (1.0, info)
    }
}

/// An async score method through `self`, returning a whole subscore.
#[derive(Grader)]
#[grader(score = async check)]
pub(crate) struct AsyncWhole {
    /// Done or not.
    pub done: bool,
}

impl AsyncWhole {
    async fn check(self) -> Result<SubScore, grader_core::ScoreError> {
        tokio::task::yield_now().await;
        SubScore::new("inner", if self.done { 1.0 } else { 0.0 })
    }
}

/// No fields at all.
#[derive(Grader)]
#[grader(score = always)]
pub struct Unit;

impl Unit {
    #[allow(clippy::unused_self)] // a unit grader's score method has nothing to read
    fn always(self) -> f64 {
        1.0
    }
}

#[test]
#[allow(clippy::float_cmp)] // exact values are the point
fn every_shape_grades() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let accepted = HashSet::from(["yes"]);
    let sub = runtime.block_on(
        Borrowed {
            repo: Path::new("."),
            accepted: &accepted,
            answer: "no",
            opaque: &Opaque,
        }
        .grade(1.0),
    )?;
    assert_eq!(sub.value(), 0.5);
    let sub = runtime.block_on(
        Generic {
            values: [1, 2],
            limit: 3,
        }
        .grade(1.0),
    )?;
    assert_eq!(sub.name(), "within_limit");
    let skips = Skips {
        api_key: "k".into(),
        client: Opaque,
        r#type: "t".into(),
        calls: 0,
    };
    assert_eq!(
        skips.parameters(),
        serde_json::json!({"type": "t", "calls": 0})
            .as_object()
            .cloned()
            .unwrap_or_default()
    );
    assert_eq!(runtime.block_on(skips.grade(1.0))?.value(), 1.0);
    let sub = runtime.block_on(
        AsyncInfo {
            map: BTreeMap::new(),
        }
        .grade(1.0),
    )?;
    assert_eq!(sub.info().map(|info| &info["len"]), Some(&0.into()));
    let sub = runtime.block_on(AsyncWhole { done: true }.grade(1.0))?;
    assert_eq!(sub.name(), "async_whole");
    assert_eq!(runtime.block_on(Unit.grade(1.0))?.value(), 1.0);
    Ok(())
}

/// Its only recorded field is compiled out.
#[derive(Grader)]
#[grader(score = check)]
pub struct OnlyCompiledOut {
    /// Never compiled.
    #[cfg(any())]
    pub hidden: u32,
    /// Not recorded.
    #[grader(skip)]
    pub shown: u32,
}

impl OnlyCompiledOut {
    fn check(&self) -> bool {
        self.shown > 0
    }
}

#[test]
fn compiled_out_fields_are_not_recorded() {
    assert!(OnlyCompiledOut { shown: 1 }.parameters().is_empty());
}
