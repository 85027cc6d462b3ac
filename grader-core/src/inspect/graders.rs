//! Inspect AI's scorers as graders, made with `#[grader]`: each records its arguments under
//! `_parameters`, and Inspect's answer and reason under `answer` and `reason` (when it sets
//! them), and runs in a [`Gather`](crate::Gather) or a tree like any grader.
//!
//! ```
//! use grader_core::Grade;
//! use grader_core::inspect::{AnswerKind, Answer, F1, Location, Match};
//!
//! let completion = "The capital is Paris.\nANSWER: Paris";
//! let result = Grade::from_subscores([
//!     Answer { completion, targets: &["paris"], kind: AnswerKind::Word }.grade(0.5).now()?,
//!     Match {
//!         completion,
//!         targets: &["Paris"],
//!         location: Location::End,
//!         ignore_case: true,
//!         numeric: false,
//!     }
//!     .grade(0.3)
//!     .now()?,
//!     F1 { completion, targets: &["Paris"], stop_words: &[] as &[&str] }.grade(0.2).now()?,
//! ])?;
//! let subscores = result.subscores.as_deref().unwrap();
//! assert_eq!(subscores[0].name(), "answer");
//! assert_eq!(subscores[0].info().unwrap()["answer"], "Paris");
//! assert_eq!(subscores[1].info().unwrap()["_parameters"]["location"], "end");
//! assert_eq!(subscores[2].value(), 0.33);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::Serialize;

use super::{AnswerKind, Location, MatchOptions, Verdict};
use crate::{Info, Score, grader};

impl From<Verdict> for Score {
    /// The value, with `answer` and `reason` in `info` where Inspect records them.
    fn from(verdict: Verdict) -> Self {
        let mut info = Info::new();
        if let Some(answer) = verdict.answer {
            info.insert("answer".into(), answer.into());
        }
        if let Some(reason) = verdict.reason {
            info.insert("reason".into(), reason.as_str().into());
        }
        let score = Score::new(verdict.value);
        if info.is_empty() {
            score
        } else {
            score.with_info(info)
        }
    }
}

/// Inspect's `match(location, ignore_case, numeric)`. See [`match_targets`](super::match_targets).
#[grader(crate = crate, name = "match", type = Match)]
pub fn match_grader<S: AsRef<str> + Serialize>(
    completion: &str,
    targets: &[S],
    location: Location,
    ignore_case: bool,
    numeric: bool,
) -> Score {
    let options = MatchOptions {
        location,
        ignore_case,
        numeric,
    };
    super::match_targets(completion, targets, options).into()
}

/// Inspect's `includes(ignore_case)`. See [`includes`](super::includes).
#[grader(crate = crate, name = "includes", type = Includes)]
pub fn includes_grader<S: AsRef<str> + Serialize>(
    completion: &str,
    targets: &[S],
    ignore_case: bool,
) -> Score {
    super::includes(completion, targets, ignore_case).into()
}

/// Inspect's `exact()`. See [`exact`](super::exact).
#[grader(crate = crate, name = "exact", type = Exact)]
pub fn exact_grader<S: AsRef<str> + Serialize>(completion: &str, targets: &[S]) -> Score {
    super::exact(completion, targets).into()
}

/// Inspect's `f1(stop_words=…)`. See [`f1`](super::f1).
#[grader(crate = crate, name = "f1", type = F1)]
pub fn f1_grader<S: AsRef<str> + Serialize, W: AsRef<str> + Serialize>(
    completion: &str,
    targets: &[S],
    stop_words: &[W],
) -> Score {
    super::f1(completion, targets, stop_words).into()
}

/// Inspect's `answer(kind)`. See [`answer`](super::answer).
#[grader(crate = crate, name = "answer", type = Answer)]
pub fn answer_grader<S: AsRef<str> + Serialize>(
    completion: &str,
    targets: &[S],
    kind: AnswerKind,
) -> Score {
    super::answer(completion, targets, kind).into()
}

/// Inspect's `pattern(pattern, ignore_case, match_all)`. See [`pattern`](super::pattern()).
/// A pattern the `regex` crate cannot run is the grader's error.
#[cfg(feature = "pattern")]
#[grader(crate = crate, name = "pattern", type = Pattern)]
pub fn pattern_grader<S: AsRef<str> + Serialize>(
    completion: &str,
    targets: &[S],
    pattern: &str,
    ignore_case: bool,
    match_all: bool,
) -> Result<Score, super::PatternError> {
    let options = super::PatternOptions {
        ignore_case,
        match_all,
    };
    super::pattern(completion, pattern, targets, options).map(Score::from)
}

/// Inspect's `choice()` after its `multiple_choice` solver. See [`choice`](super::choice).
/// A question Inspect would refuse (no choices, a target naming no choice) is the grader's
/// error.
#[cfg(feature = "pattern")]
#[grader(crate = crate, name = "choice", type = Choice)]
pub fn choice_grader<S: AsRef<str> + Serialize>(
    completion: &str,
    targets: &[S],
    choices: usize,
    shuffled: Option<&[usize]>,
    multiple_correct: bool,
) -> Result<Score, super::ChoiceError> {
    let options = super::ChoiceOptions {
        choices,
        shuffled,
        multiple_correct,
    };
    super::choice(completion, targets, options).map(Score::from)
}
