//! What graded items produce and what later items see of it: an item's [`Outcome`] once
//! [`Finished`], the [`Earlier`] results a conditional grading looks at, and the subscore of an
//! item that did not run (`info.skipped`), scored at the worst value for the agent.
//!
//! Below both the gradings that make outcomes and the gathers and trees that run them
//! together ([`node`](crate::node)), so that neither imports the other for them.

use std::fmt;

use serde_json::Value;

use crate::error::GraderError;
use crate::score::{Info, SubScore};

/// What a grading produces.
pub(crate) type Outcome = Result<SubScore, GraderError>;

/// The results of the items added before a conditional grading ([`Grading::when`]), by the
/// names they were given (before names are made unique).
///
/// [`Grading::when`]: crate::Grading::when
#[derive(Clone, Copy)]
pub struct Earlier<'r> {
    pub(crate) items: &'r [Option<Finished>],
}

impl fmt::Debug for Earlier<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'r> Earlier<'r> {
    pub(crate) fn none() -> Self {
        Earlier { items: &[] }
    }

    /// The first earlier item named `name`, unless it failed (a skipped one included, marked
    /// by `info.skipped`). A later item of the same name never stands in for a failed one.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&'r SubScore> {
        self.first(name)?.outcome.as_ref().ok()
    }

    /// The value of [`get`](Self::get)`(name)`, unless it was skipped.
    #[must_use]
    pub fn value(&self, name: &str) -> Option<f64> {
        let item = self.first(name).filter(|item| !item.skipped)?;
        item.outcome.as_ref().ok().map(SubScore::value)
    }

    fn first(&self, name: &str) -> Option<&'r Finished> {
        self.items.iter().flatten().find(|item| item.name == name)
    }

    /// Whether `name` ran, did not fail, and scored 1.0.
    #[must_use]
    pub fn passed(&self, name: &str) -> bool {
        self.value(name) == Some(1.0)
    }

    /// Whether every earlier item ran, did not fail, and scored 1.0 (true when there are none).
    #[must_use]
    pub fn all_passed(&self) -> bool {
        self.items
            .iter()
            .flatten()
            .all(|item| !item.skipped && item.outcome.as_ref().is_ok_and(|sub| sub.value() == 1.0))
    }

    /// Every earlier item: its given name and outcome, in input order.
    pub fn iter(&self) -> impl Iterator<Item = (&'r str, &'r Outcome)> + 'r {
        self.items
            .iter()
            .flatten()
            .map(|item| (item.name.as_str(), &item.outcome))
    }
}

/// The info key that marks a skipped grading, with the reason as its value.
pub const SKIPPED_KEY: &str = "skipped";

/// An item once it has finished (or been skipped).
pub(crate) struct Finished {
    pub(crate) name: String,
    pub(crate) required: Option<f64>,
    pub(crate) outcome: Outcome,
    /// Whether it was skipped rather than run. Kept apart from the subscore, whose info is the
    /// grader's to fill (a test runner may well report how many tests it `skipped`).
    pub(crate) skipped: bool,
}

/// The value that is worst for the agent: 1.0 (fired) for what counts against it, else 0.0.
pub(crate) fn worst(against: bool) -> f64 {
    if against { 1.0 } else { 0.0 }
}

/// Whether a subscore's value counts against the agent in the scope it is scored in: as the
/// enclosing tree's does, or (in a gather) when its weight is negative.
pub(crate) fn counts_against(against: Option<bool>, weight: f64) -> bool {
    against.unwrap_or(weight < 0.0)
}

/// The subscore of a grading that did not run, with the reason in `info.skipped`: the worst
/// value for the agent, 0.0 for what counts for it and fired (1.0) for what counts against it.
pub(crate) fn skipped_subscore(name: String, weight: f64, reason: &str, against: bool) -> SubScore {
    let mut info = Info::new();
    info.insert(SKIPPED_KEY.to_owned(), Value::String(reason.to_owned()));
    let weight = if weight.is_finite() { weight } else { 0.0 };
    SubScore::from_valid_parts(name, weight, worst(against), None, Some(info))
}
