//! How Inspect AI's `pattern` scorer (`inspect_ai/scorer/_pattern.py`) compares what a regular
//! expression captured with the targets: shared by [`pattern`](super::pattern) and
//! [`answer`](super::answer).

use serde::{Deserialize, Serialize};

use super::{Reason, Verdict, is_no_response};
use crate::text::pychar::lower;

/// Options of Inspect's `pattern` scorer (feature `pattern`); the default is Inspect's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PatternOptions {
    /// Match ignoring case, and compare captures with targets after `str.lower()` (default
    /// `true`).
    pub ignore_case: bool,
    /// With several groups, every group that took part must equal a target (default `false`:
    /// one is enough).
    pub match_all: bool,
}

impl Default for PatternOptions {
    fn default() -> Self {
        Self {
            ignore_case: true,
            match_all: false,
        }
    }
}

/// Inspect's scoring of a match whose groups (`None` for a group that took no part) are
/// `groups`: `match_first` or `match_all_groups`, then `CORRECT` when the result is a
/// non-empty string.
pub(crate) fn score_groups<S: AsRef<str>>(
    completion: &str,
    groups: &[Option<&str>],
    targets: &[S],
    options: PatternOptions,
) -> Verdict {
    let lowered: Vec<String> = if options.ignore_case {
        targets
            .iter()
            .map(|t| lower(t.as_ref()).into_owned())
            .collect()
    } else {
        targets.iter().map(|t| t.as_ref().to_owned()).collect()
    };
    let in_target = |found: &str| {
        if options.ignore_case {
            lowered.iter().any(|t| *t == lower(found))
        } else {
            lowered.iter().any(|t| t == found)
        }
    };
    let present = groups.iter().flatten();
    let (found, answer) = if options.match_all {
        let mut any = false;
        let mut all = true;
        for group in present {
            any = true;
            if !in_target(group) {
                all = false;
                break;
            }
        }
        let text: String = targets.iter().map(AsRef::as_ref).collect();
        let found = (any && all).then_some(text);
        (found.clone(), found)
    } else {
        let found = present
            .copied()
            .find(|group| in_target(group))
            .map(str::to_owned);
        let answer = match (&found, groups) {
            (None, [only]) => only.map(str::to_owned),
            _ => found.clone(),
        };
        (found, answer)
    };
    let correct = found.is_some_and(|found| !found.is_empty());
    Verdict {
        value: if correct { 1.0 } else { 0.0 },
        answer,
        reason: is_no_response(completion).then_some(Reason::NoResponse),
    }
}
