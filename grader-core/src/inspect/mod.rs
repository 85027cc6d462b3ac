//! Inspect AI's scorers as functions and graders, with Inspect 0.3.285's results: [`match_targets`]
//! and [`match_str`] (`match()`), [`includes`], [`exact`] and [`f1`] (with Inspect's own
//! normalization, [`squad_normalize`]), [`answer`] (`ANSWER:` letter, word or line), and, with
//! the feature `pattern`, `pattern` (a regular expression with groups) and `choice`
//! (multiple choice, shuffled choices included).
//!
//! Each function takes the completion and the targets (Inspect's `Target`, one string or
//! several) and returns a [`Verdict`]: the value (1 for `CORRECT`, 0 for `INCORRECT` and
//! `NOANSWER`, F1 itself for [`f1`]), the answer Inspect records and its `reason`.
//!
//! ```
//! use grader_core::inspect::{self, AnswerKind, MatchOptions};
//!
//! let completion = "Adding them up gives 1,234.\nANSWER: 1234";
//! let numeric = MatchOptions { numeric: true, ..MatchOptions::default() };
//! assert!(inspect::match_targets(completion, &["1234"], numeric).is_correct());
//! assert!(inspect::answer(completion, &["1234"], AnswerKind::Word).is_correct());
//! assert!(inspect::includes(completion, &["1,234"], true).is_correct());
//! assert_eq!(inspect::f1("Paris, France", &["Paris"], &[] as &[&str]).value, 0.67);
//! ```
//!
//! The graders ([`graders`]: [`Match`], [`Includes`], [`Exact`], [`F1`], [`Answer`], and with
//! `pattern` `Pattern` and `Choice`) record their arguments under `_parameters` and the
//! answer and reason under `answer` and `reason`.
//!
//! # Exactly Inspect's, and where not
//!
//! Text is read as Python reads it: `str.strip()`, `str.lower()`, `str.casefold()` and `\w`,
//! `\s` from CPython 3.11's character database ([`text::pychar`](crate::text::pychar)), numbers
//! as `float()` reads them, written as `format(x, ".5g")` or `repr(x)`. The differential tests
//! compare every function with Inspect's own on Inspect's cases and on generated ones. What
//! differs on purpose (each pinned by a test, see `docs/graders.md`):
//!
//! - `match(numeric=True)` does not read Chinese numerals (`三十`) as numbers, which Inspect's
//!   `unicode_number_to_float` does; other scripts' digits, grouping marks, signs, superscript
//!   exponents, vulgar fractions (`2½`) and numeric symbols (`Ⅻ`) it reads as Inspect does.
//! - `pattern` runs on the `regex` crate (linear time): Python syntax it lacks is a typed
//!   `PatternError`; `$` matches only at the very end and `\b` uses the crate's word
//!   characters (see the `pattern` module).
//! - `choice` takes the completion, the number of choices and their shuffled order instead of
//!   Inspect's `TaskState`; target letters are ASCII letters and digits.

mod answer;
#[cfg(feature = "pattern")]
mod choice;
#[cfg(feature = "macros")]
pub mod graders;
mod matching;
mod number;
#[cfg(feature = "pattern")]
pub mod pattern;
mod pattern_match;
mod squad;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use answer::{AnswerKind, answer, extract_answer};
#[cfg(feature = "pattern")]
pub use choice::{ChoiceError, ChoiceOptions, choice};
#[cfg(feature = "macros")]
pub use graders::{Answer, Exact, F1, Includes, Match};
#[cfg(all(feature = "macros", feature = "pattern"))]
pub use graders::{Choice, Pattern};
pub use matching::{Location, MatchOptions, includes, match_str, match_targets};
#[cfg(feature = "pattern")]
pub use pattern::{CompiledPattern, PatternError, pattern};
pub use pattern_match::PatternOptions;
pub use squad::{exact, f1, squad_normalize};

/// Why Inspect records a score as it does: its `ScoreReason`, where the scorers above set one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The completion is empty or only whitespace.
    NoResponse,
    /// The completion is not in the format the scorer reads (no `ANSWER:`, the pattern not
    /// found).
    InvalidResponseFormat,
}

impl Reason {
    /// The name Inspect writes: `no_response` or `invalid_response_format`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Reason::NoResponse => "no_response",
            Reason::InvalidResponseFormat => "invalid_response_format",
        }
    }
}

/// What one of Inspect's scorers decided about a completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[must_use]
pub struct Verdict {
    /// 1.0 for `CORRECT`, 0.0 for `INCORRECT` or `NOANSWER`; [`f1`]'s F1 score.
    pub value: f64,
    /// The answer Inspect records (`Score.answer`), `None` where it records none.
    pub answer: Option<String>,
    /// Inspect's `Score.reason`, where it sets one.
    pub reason: Option<Reason>,
}

impl Verdict {
    fn correct(answer: String, reason: Option<Reason>) -> Self {
        Self {
            value: 1.0,
            answer: Some(answer),
            reason,
        }
    }

    /// Whether the value is 1 (`CORRECT`).
    #[must_use]
    pub fn is_correct(&self) -> bool {
        self.value == 1.0
    }
}

/// Inspect's `no_response`: the completion is empty or only whitespace (`str.strip()`).
fn is_no_response(completion: &str) -> bool {
    crate::text::pychar::strip(completion).is_empty()
}
