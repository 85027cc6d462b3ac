//! `any` and `all`: one subscore summarizing several, keeping them as its children.

use crate::error::{CombineError, ScoreError};
use crate::grade::dedupe_names;
use crate::score::SubScore;

/// Why [`any`] or [`all`] could not build its node.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CombinatorError {
    /// No input subscores.
    #[error(transparent)]
    Combine(#[from] CombineError),
    /// The weight given for the node is not finite.
    #[error(transparent)]
    Score(#[from] ScoreError),
}

/// A subscore named `name` that passes if any input passes: its value is the maximum of the
/// inputs' values. The inputs are kept, in order, as its `children`, with names made unique as
/// [`Grade::from_subscores`](crate::Grade::from_subscores) does. The reference's default name
/// is `"any"`.
///
/// ```
/// use grader_core::{any, SubScore};
///
/// let node = any("tests-or-lint", 0.5, vec![SubScore::new("check", 0.0)?, SubScore::new("check", 1.0)?])?;
/// assert_eq!(node.value(), 1.0);
/// let names: Vec<&str> = node.children().unwrap().iter().map(|c| c.name()).collect();
/// assert_eq!(names, ["check-1", "check-2"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`CombineError::Empty`] when `subscores` is empty; [`ScoreError::InvalidWeight`] when
/// `weight` is not finite.
pub fn any(
    name: impl Into<String>,
    weight: f64,
    subscores: impl IntoIterator<Item = SubScore>,
) -> Result<SubScore, CombinatorError> {
    combine_node(name.into(), weight, subscores, f64::max)
}

/// A subscore named `name` that passes only if all inputs pass: its value is the minimum of the
/// inputs' values. Otherwise as [`any`]; the reference's default name is `"all"`.
///
/// ```
/// use grader_core::{all, SubScore};
///
/// let node = all("all", 1.0, vec![SubScore::new("a", 0.2)?, SubScore::new("b", 1.0)?])?;
/// assert_eq!(node.value(), 0.2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`any`].
pub fn all(
    name: impl Into<String>,
    weight: f64,
    subscores: impl IntoIterator<Item = SubScore>,
) -> Result<SubScore, CombinatorError> {
    combine_node(name.into(), weight, subscores, f64::min)
}

fn combine_node(
    name: String,
    weight: f64,
    subscores: impl IntoIterator<Item = SubScore>,
    pick: fn(f64, f64) -> f64,
) -> Result<SubScore, CombinatorError> {
    let mut children: Vec<SubScore> = subscores.into_iter().collect();
    let Some(value) = children.iter().map(SubScore::value).reduce(pick) else {
        return Err(CombineError::Empty { what: name }.into());
    };
    dedupe_names(&mut children);
    Ok(SubScore::new(name, value)?
        .with_weight(weight)?
        .with_children(children))
}
