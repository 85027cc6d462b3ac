//! Inspect AI's `match` and `includes` scorers (`inspect_ai/scorer/_match.py`, `_common.py`):
//! a target found at the beginning, the end, anywhere or exactly in the completion, as text or
//! as a number.

use serde::{Deserialize, Serialize};

use super::number::{normalize_number, parse_number, strip_numeric_punctuation, strip_punctuation};
use super::{Reason, Verdict, is_no_response};
use crate::text::pychar::{casefold, is_space, strip};

/// Where [`match_str`] looks for the target: Inspect's `location`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Location {
    /// The completion starts with the target.
    Begin,
    /// The completion ends with the target (Inspect's default).
    #[default]
    End,
    /// The target is anywhere in the completion.
    Any,
    /// The completion is the target.
    Exact,
}

/// Options of [`match_str`] and [`match_targets`]; the default is Inspect's `match()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MatchOptions {
    /// Where to look (default [`Location::End`]).
    pub location: Location,
    /// Compare after `str.casefold()` (default `true`).
    pub ignore_case: bool,
    /// Compare numbers by value when the target is a number (default `false`).
    pub numeric: bool,
}

impl Default for MatchOptions {
    fn default() -> Self {
        Self {
            location: Location::End,
            ignore_case: true,
            numeric: false,
        }
    }
}

/// Inspect's `match_str`: the answer read from `value` and whether it matches `target`.
///
/// Both sides are stripped (and casefolded with `ignore_case`). Text is compared after
/// stripping ASCII whitespace and punctuation from both ends. With `numeric`, a target that is
/// a number (after removing `$ , £ € * _` and stray dots) is compared with the first
/// (`Begin`), last (`End`) or any (`Any`) whitespace-separated number of the value, each
/// written as `format(x, ".5g")`; `Exact` reads the whole value as one number.
///
/// ```
/// use grader_core::inspect::{Location, MatchOptions, match_str};
///
/// let numeric = MatchOptions { numeric: true, ..MatchOptions::default() };
/// assert_eq!(match_str("The total is $1,000.", "1000", numeric), ("1000".into(), true));
/// assert_eq!(match_str("It is 25", "5", numeric).1, false);
/// assert!(match_str("The answer is Paris.", "paris", MatchOptions::default()).1);
/// let begin = MatchOptions { location: Location::Begin, ..MatchOptions::default() };
/// assert!(!match_str("The answer is Paris.", "paris", begin).1);
/// ```
#[must_use]
pub fn match_str(value: &str, target: &str, options: MatchOptions) -> (String, bool) {
    let stripped = strip(value);
    let (v, mut t) = if options.ignore_case {
        (
            casefold(stripped).into_owned(),
            casefold(strip(target)).into_owned(),
        )
    } else {
        (stripped.to_owned(), strip(target).to_owned())
    };
    if options.numeric {
        t = strip_numeric_punctuation(&t);
        if parse_number(&t, true).is_some() {
            return match_number(&v, &t, stripped, options.location);
        }
    }
    let v = strip_punctuation(&v);
    let t = strip_punctuation(&t);
    let matched = match options.location {
        Location::Begin => v.starts_with(t),
        Location::End => v.ends_with(t),
        Location::Exact => v == t,
        Location::Any => v.contains(t),
    };
    (stripped.to_owned(), matched)
}

/// The numeric branch of `match_str`, for a target that reads as a number.
///
/// `strip_numeric_punctuation` neither adds nor removes whitespace and looks no further than
/// the next character, which is whitespace at a word's end: it is applied word by word, and
/// only to the words read.
fn match_number(v: &str, t: &str, answer: &str, location: Location) -> (String, bool) {
    let t = normalize_number(t, true);
    let mut words = v
        .split(is_space)
        .filter(|word| !word.is_empty())
        .map(strip_numeric_punctuation);
    let number = |word: &String| parse_number(word, true).map(|_| normalize_number(word, true));
    let v = match location {
        Location::Begin => words.find_map(|w| number(&w)),
        Location::End => words.rev().find_map(|w| number(&w)),
        Location::Exact => Some(normalize_number(&strip_numeric_punctuation(v), false)),
        Location::Any => {
            for number in words.filter_map(|w| number(&w)) {
                if number == t {
                    return (number, true);
                }
            }
            return (answer.to_owned(), false);
        }
    }
    .unwrap_or_default();
    let matched = v == t;
    (v, matched)
}

/// Inspect's `match()` scorer: the first target that [`match_str`] matches, or the answer of
/// the last target tried.
///
/// ```
/// use grader_core::inspect::{MatchOptions, match_targets};
///
/// let verdict = match_targets("I think it is B", &["A", "B"], MatchOptions::default());
/// assert!(verdict.is_correct());
/// assert_eq!(verdict.answer.as_deref(), Some("I think it is B"));
/// ```
pub fn match_targets<S: AsRef<str>>(
    completion: &str,
    targets: &[S],
    options: MatchOptions,
) -> Verdict {
    str_match(completion, targets, |value, target| {
        match_str(value, target, options)
    })
}

/// Inspect's `includes()` scorer: correct when a target is contained in the completion
/// (after `str.casefold()` of both with `ignore_case`). The answer is the completion, casefolded
/// when `ignore_case`, as Inspect records it.
///
/// ```
/// use grader_core::inspect::includes;
///
/// assert!(includes("The capital is PARIS.", &["paris"], true).is_correct());
/// assert!(!includes("The capital is PARIS.", &["paris"], false).is_correct());
/// ```
pub fn includes<S: AsRef<str>>(completion: &str, targets: &[S], ignore_case: bool) -> Verdict {
    str_match(completion, targets, |value, target| {
        if ignore_case {
            let value = casefold(value).into_owned();
            let found = value.contains(casefold(target).as_ref());
            (value, found)
        } else {
            (value.to_owned(), value.contains(target))
        }
    })
}

/// Inspect's `str_match_scorer`.
fn str_match<S: AsRef<str>>(
    completion: &str,
    targets: &[S],
    check: impl Fn(&str, &str) -> (String, bool),
) -> Verdict {
    let reason = is_no_response(completion).then_some(Reason::NoResponse);
    let mut answer = None;
    for target in targets {
        let (found, matched) = check(completion, target.as_ref());
        if matched {
            return Verdict::correct(found, reason);
        }
        answer = Some(found);
    }
    Verdict {
        value: 0.0,
        answer,
        reason,
    }
}
