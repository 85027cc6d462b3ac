//! What a judge asks about: a [`Criterion`], a text with a weight (negative for a penalty).

use serde_json::{Value, json};

use crate::params::json_safe;

/// One thing the answer should (positive weight) or should not (negative weight) contain.
///
/// A plain text has weight 1, as in the reference; `(text, weight)` converts too.
///
/// ```
/// use grader_core::judge::Criterion;
///
/// let plain: Criterion = "Names Paris".into();
/// let penalty: Criterion = ("Claims Lyon is the capital", -2.0).into();
/// assert_eq!((plain.weight(), penalty.weight()), (1.0, -2.0));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Criterion {
    pub(super) requirement: String,
    pub(super) weight: f64,
    weighted: bool,
}

impl Criterion {
    /// A criterion of weight 1.
    #[must_use]
    pub fn new(requirement: impl Into<String>) -> Self {
        Criterion {
            requirement: requirement.into(),
            weight: 1.0,
            weighted: false,
        }
    }

    /// A criterion with a weight; negative makes it a penalty (MET means the mistake was made).
    #[must_use]
    pub fn weighted(requirement: impl Into<String>, weight: f64) -> Self {
        Criterion {
            requirement: requirement.into(),
            weight,
            weighted: true,
        }
    }

    /// The text.
    #[must_use]
    pub fn requirement(&self) -> &str {
        &self.requirement
    }

    /// The weight.
    #[must_use]
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// As the reference records it under `_parameters`: the text, or `[text, weight]`.
    pub(super) fn recorded(&self) -> Value {
        if self.weighted {
            json!([self.requirement, json_safe(&self.weight, "f64")])
        } else {
            Value::String(self.requirement.clone())
        }
    }
}

impl From<&str> for Criterion {
    fn from(text: &str) -> Self {
        Criterion::new(text)
    }
}

impl From<String> for Criterion {
    fn from(text: String) -> Self {
        Criterion::new(text)
    }
}

impl<S: Into<String>> From<(S, f64)> for Criterion {
    fn from((text, weight): (S, f64)) -> Self {
        Criterion::weighted(text, weight)
    }
}
