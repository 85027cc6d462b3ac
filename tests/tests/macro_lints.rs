//! Graders of every shape, compiled with every warning and pedantic lint denied: what
//! `#[grader]` generates must not trip a lint in the user's crate.
#![deny(warnings, clippy::pedantic, missing_docs)]

use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::Path;

use grader_core::{Grader, Info, SubScore, grader};

/// A value with no JSON form.
pub struct Opaque;

/// Owned and borrowed parameters.
#[grader]
pub fn borrowed(repo: &Path, filter: &str, items: &[u32], opaque: &Opaque, count: &mut u32) -> f64 {
    let _ = (repo, filter, items, opaque);
    *count += 1;
    0.5
}

/// Explicit lifetimes, generics with bounds and a where clause.
#[grader(name = "generic_check")]
pub fn generic<'a, T, const N: usize>(values: &'a [T; N], label: &'a str) -> bool
where
    T: serde::Serialize + Clone,
{
    !values.is_empty() && !label.is_empty()
}

/// `impl Trait` and a raw identifier.
///
/// # Errors
/// When either is empty.
#[grader(skip(r#type))]
pub fn with_impl(shown: impl Display, r#type: &str) -> Result<f32, String> {
    if shown.to_string().is_empty() || r#type.is_empty() {
        Err("empty".to_owned())
    } else {
        Ok(1.0)
    }
}

/// Returns info.
#[grader]
pub async fn with_info(map: BTreeMap<String, u32>) -> (f64, Info) {
    tokio::task::yield_now().await;
    let mut info = Info::new();
    info.insert("len".into(), map.len().into());
    (1.0, info)
}

/// Returns a whole subscore.
///
/// # Errors
/// Never.
#[grader(crate = ::grader_core)]
pub(crate) async fn whole(done: bool) -> Result<SubScore, grader_core::ScoreError> {
    tokio::task::yield_now().await;
    SubScore::new("inner", if done { 1.0 } else { 0.0 })
}

/// No parameters at all.
#[grader]
#[must_use]
pub fn constant() -> f64 {
    1.0
}

#[test]
#[allow(clippy::float_cmp)] // exact values are the point
fn every_shape_grades() -> Result<(), Box<dyn std::error::Error>> {
    let mut count = 0;
    let sub = Borrowed {
        repo: Path::new("."),
        filter: "x",
        items: &[1, 2],
        opaque: &Opaque,
        count: &mut count,
    }
    .grade(1.0)
    .now()?;
    assert_eq!(sub.value(), 0.5);
    assert_eq!(count, 1);
    let sub = Generic {
        values: &[1, 2],
        label: "l",
    }
    .grade(1.0)
    .now()?;
    assert_eq!(sub.name(), "generic_check");
    assert_eq!(
        WithImpl {
            shown: 3,
            r#type: "t"
        }
        .grade(1.0)
        .now()?
        .value(),
        1.0
    );
    assert_eq!(Constant {}.grade(1.0).now()?.value(), 1.0);
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let sub = runtime.block_on(
        WithInfo {
            map: BTreeMap::new(),
        }
        .grade(1.0),
    )?;
    assert_eq!(sub.info().map(|info| &info["len"]), Some(&0.into()));
    let sub = runtime.block_on(Grader::grade(Whole { done: true }, 1.0))?;
    assert_eq!(sub.name(), "whole");
    Ok(())
}
