//! Reading a verdict out of the judge's reply, strictly, as the reference's `_parse_verdict`
//! (`hud/graders/judge.py` of `hud==0.6.21`) does; and the batched form, which is ours.
//!
//! 1. Strip whitespace (Python's `str.strip`) and one leading `` ```json `` or `` ``` `` and one
//!    trailing `` ``` ``, then strip again.
//! 2. If the text holds `{` … `}` (the first `{` before the last `}`) and that span is a JSON
//!    object, its `criterion_status` must be `MET` or `UNMET` in any case, or the reply is an
//!    error; the explanation is its `explanation` as Python's `str()` prints it.
//! 3. Otherwise the text is searched for `\b(UN[_-]?|(?i:not)[\s_-]+)?MET\b` (uppercase `MET`,
//!    an optional `UN`/`UN_`/`UN-` or `not` plus separators in front): none is an error; the
//!    verdict is MET when no match has a prefix. The explanation is the text's first 200
//!    characters.
//!
//! Nothing else is ever read as a verdict: a reply that says neither is an error, never a
//! guess.

use serde_json::Value;

pub use crate::pyjson::py_float;
use crate::pyjson::{self, LoadError, PyValue};
use crate::text::pychar;

/// How many characters of a reply an explanation or an error keeps (the reference's `[:200]`).
pub const KEEP_CHARS: usize = 200;

/// The judge's decision on one criterion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the thing the criterion describes is present.
    pub met: bool,
    /// Why, as the judge said it.
    pub reason: String,
}

/// A reply with no verdict in it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerdictError {
    /// The reply is a JSON object whose `criterion_status` is missing or not `MET`/`UNMET`.
    #[error("judge reply has no MET/UNMET criterion_status: {reply:?}")]
    BadStatus {
        /// The reply's first 200 characters (after stripping).
        reply: String,
    },
    /// The reply is not a JSON object and has no `MET`, `UNMET` or `NOT MET` in it.
    #[error("judge reply has no MET/UNMET verdict: {reply:?}")]
    NoVerdict {
        /// The reply's first 200 characters (after stripping).
        reply: String,
    },
    /// The reply's JSON object nests deeper than 512 levels. The reference's `json.loads`
    /// raises `RecursionError` near 1 000 levels, which its grader does not catch either.
    #[error("judge reply nests JSON deeper than 512 levels: {reply:?}")]
    TooDeep {
        /// The reply's first 200 characters (after stripping).
        reply: String,
    },
    /// A batched reply gave no verdict for this criterion (its id is 1-based).
    #[error("batched judge reply has no MET/UNMET verdict for criterion {id}: {reply:?}")]
    MissingInBatch {
        /// The criterion's 1-based id in the batch.
        id: usize,
        /// The reply's first 200 characters (after stripping).
        reply: String,
    },
}

/// The first `n` characters of `text` (Python's `text[:n]`).
#[must_use]
pub fn head(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// The reference's clean-up of a reply: strip, drop one code fence at each end, strip.
fn clean(content: &str) -> &str {
    let text = pychar::strip(content);
    let text = text.strip_prefix("```json").unwrap_or(text);
    let text = text.strip_prefix("```").unwrap_or(text);
    let text = text.strip_suffix("```").unwrap_or(text);
    pychar::strip(text)
}

/// The JSON object between the first `{` and the last `}`, read as Python's `json.loads` reads
/// it: `Ok(None)` when there is no such span or it does not parse (Python's `ValueError`).
fn json_object(text: &str) -> Result<Option<PyValue>, VerdictError> {
    let (Some(start), Some(end)) = (text.find('{'), text.rfind('}')) else {
        return Ok(None);
    };
    if end <= start {
        return Ok(None);
    }
    match pyjson::loads(&text[start..=end]) {
        Ok(object @ PyValue::Dict(_)) => Ok(Some(object)),
        Ok(_) | Err(LoadError::Invalid) => Ok(None),
        Err(LoadError::TooDeep) => Err(VerdictError::TooDeep {
            reply: head(text, KEEP_CHARS).to_owned(),
        }),
    }
}

/// `str(data.get(key)).upper() in ("MET", "UNMET")`.
fn status_of(object: &PyValue, key: &str) -> Option<bool> {
    match object.get(key) {
        Some(PyValue::Str(status)) => match status.to_uppercase().as_str() {
            "MET" => Some(true),
            "UNMET" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// `str(data.get("explanation", ""))`.
fn explanation_of(object: &PyValue) -> String {
    object
        .get("explanation")
        .map_or_else(String::new, PyValue::to_py_str)
}

/// Parses one reply as the reference's `_parse_verdict` does.
///
/// # Errors
/// [`VerdictError::BadStatus`] for a JSON object without a `MET`/`UNMET` status,
/// [`VerdictError::NoVerdict`] for text with no verdict in it.
///
/// ```
/// use grader_core::judge::verdict::parse_verdict;
///
/// assert!(parse_verdict(r#"{"criterion_status": "met", "explanation": "ok"}"#)?.met);
/// assert!(!parse_verdict("The answer is NOT MET.")?.met);
/// assert!(parse_verdict("It is met.").is_err()); // lowercase prose is no verdict
/// # Ok::<(), grader_core::judge::verdict::VerdictError>(())
/// ```
pub fn parse_verdict(content: &str) -> Result<Verdict, VerdictError> {
    let text = clean(content);
    if let Some(object) = json_object(text)? {
        let Some(met) = status_of(&object, "criterion_status") else {
            return Err(VerdictError::BadStatus {
                reply: head(text, KEEP_CHARS).to_owned(),
            });
        };
        let reason = explanation_of(&object);
        return Ok(Verdict { met, reason });
    }
    let chars: Vec<char> = text.chars().collect();
    let prefixes = find_verdicts(&chars);
    if prefixes.is_empty() {
        return Err(VerdictError::NoVerdict {
            reply: head(text, KEEP_CHARS).to_owned(),
        });
    }
    Ok(Verdict {
        met: !prefixes.iter().any(|&negated| negated),
        reason: head(text, KEEP_CHARS).to_owned(),
    })
}

/// Parses a batched reply: `{"verdicts": [{"id": 1, "criterion_status": …, "explanation": …},
/// …]}` with ids from 1 to `count`. Each criterion gets its own outcome: a missing, repeated or
/// unreadable entry is an error for that criterion only.
#[must_use]
pub fn parse_batch(content: &str, count: usize) -> Vec<Result<Verdict, VerdictError>> {
    let text = clean(content);
    let missing = |id: usize| VerdictError::MissingInBatch {
        id,
        reply: head(text, KEEP_CHARS).to_owned(),
    };
    let mut found: Vec<Option<Result<Verdict, VerdictError>>> = vec![None; count];
    let object = match json_object(text) {
        Ok(object) => object,
        Err(error) => return vec![Err(error); count],
    };
    if let Some(PyValue::List(items)) = object.as_ref().and_then(|o| o.get("verdicts")) {
        for entry in items {
            let Some(id) = (match entry.get("id") {
                Some(PyValue::Int(digits)) => digits.parse::<usize>().ok(),
                _ => None,
            })
            .filter(|id| (1..=count).contains(id)) else {
                continue;
            };
            let outcome = match status_of(entry, "criterion_status") {
                Some(met) => Ok(Verdict {
                    met,
                    reason: explanation_of(entry),
                }),
                None => Err(missing(id)),
            };
            // A criterion answered twice is not answered.
            found[id - 1] = match found[id - 1] {
                None => Some(outcome),
                Some(_) => Some(Err(missing(id))),
            };
        }
    }
    found
        .into_iter()
        .enumerate()
        .map(|(index, outcome)| outcome.unwrap_or_else(|| Err(missing(index + 1))))
        .collect()
}

/// Every match of the reference's verdict pattern, left to right and not overlapping, as
/// `true` where the match has a negating prefix.
fn find_verdicts(chars: &[char]) -> Vec<bool> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        if let Some((end, negated)) = verdict_at(chars, at) {
            found.push(negated);
            at = end;
        } else {
            at += 1;
        }
    }
    found
}

fn is_word_at(chars: &[char], at: usize) -> bool {
    chars.get(at).is_some_and(|&c| pychar::is_word(c))
}

/// `\b` at `at`: a word character on exactly one side.
fn boundary(chars: &[char], at: usize) -> bool {
    let before = at > 0 && is_word_at(chars, at - 1);
    before != is_word_at(chars, at)
}

/// `MET\b` at `at`: the end of the match.
fn met_at(chars: &[char], at: usize) -> Option<usize> {
    let end = at + 3;
    (chars.get(at..end) == Some(&['M', 'E', 'T'][..]) && boundary(chars, end)).then_some(end)
}

/// The match of `\b(UN[_-]?|(?i:not)[\s_-]+)?MET\b` starting at `at`, trying the alternatives
/// in the pattern's order: its end and whether the prefix group took part.
fn verdict_at(chars: &[char], at: usize) -> Option<(usize, bool)> {
    if !boundary(chars, at) {
        return None;
    }
    if chars.get(at..at + 2) == Some(&['U', 'N'][..]) {
        let after = at + 2;
        if matches!(chars.get(after), Some('_' | '-'))
            && let Some(end) = met_at(chars, after + 1)
        {
            return Some((end, true));
        }
        if let Some(end) = met_at(chars, after) {
            return Some((end, true));
        }
    }
    if chars.get(at..at + 3).is_some_and(|word| {
        word.iter()
            .map(char::to_ascii_lowercase)
            .eq(['n', 'o', 't'])
    }) {
        let mut after = at + 3;
        while chars
            .get(after)
            .is_some_and(|&c| pychar::is_space(c) || c == '_' || c == '-')
        {
            after += 1;
        }
        if after > at + 3
            && let Some(end) = met_at(chars, after)
        {
            return Some((end, true));
        }
    }
    met_at(chars, at).map(|end| (end, false))
}

/// Python's `str()` of a value `json.loads` made: a string as itself, `None`, `True`, `False`,
/// numbers and containers as Python prints them (an integer with all its digits).
#[must_use]
pub fn py_str(value: &Value) -> String {
    crate::pyjson::py_str(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn met(text: &str) -> bool {
        parse_verdict(text)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"))
            .met
    }

    #[test]
    fn json_replies() {
        assert!(met(r#"{"criterion_status": "MET", "explanation": "x"}"#));
        assert!(!met(r#"{"criterion_status": "unmet", "explanation": "x"}"#));
        assert!(met("```json\n{\"criterion_status\": \"Met\"}\n```"));
        assert!(met("Sure: {\"criterion_status\": \"MET\"} done"));
        assert_eq!(
            parse_verdict(r#"{"criterion_status": "MET"}"#).map(|v| v.reason),
            Ok(String::new())
        );
        assert!(matches!(
            parse_verdict(r#"{"criterion_status": "PARTIAL"}"#),
            Err(VerdictError::BadStatus { .. })
        ));
        assert!(matches!(
            parse_verdict(r#"{"criterion_status": ["MET"]}"#),
            Err(VerdictError::BadStatus { .. })
        ));
        // Not JSON: the text search decides.
        assert!(met("{criterion_status: MET}"));
        // Python's json reads NaN; serde_json does not, so the text search decides (the same
        // verdict; the reason is the reply's start, where the reference's is the explanation).
        assert!(met(r#"{"criterion_status": "MET", "score": NaN}"#));
        assert!(!met(r#"{"criterion_status": "UNMET", "score": NaN}"#));
        assert!(!met("{criterion_status: UNMET}"));
    }

    #[test]
    fn text_replies() {
        for yes in [
            "MET",
            "The criterion is MET.",
            "MET (clearly)",
            "x MET y MET",
        ] {
            assert!(met(yes), "{yes}");
        }
        for no in [
            "UNMET",
            "UN_MET",
            "UN-MET",
            "NOT MET",
            "not met? NOT MET",
            "Not_MET",
            "not - MET",
            "MET but also UNMET",
            "NOT\n\tMET",
        ] {
            assert!(!met(no), "{no}");
        }
        for none in [
            "met",
            "Met",
            "METHOD",
            "UNMETHODICAL",
            "XMET",
            "NOTMET",
            "",
            "   ",
            "UN MET?",
        ] {
            if none == "UN MET?" {
                // `UN MET`: no prefix form fits, but `MET` alone is a whole word.
                assert!(met(none));
                continue;
            }
            assert!(
                matches!(parse_verdict(none), Err(VerdictError::NoVerdict { .. })),
                "{none}"
            );
        }
    }

    #[test]
    fn explanations_print_as_python_str() {
        let reason = |json: &str| parse_verdict(json).map(|v| v.reason);
        assert_eq!(
            reason(r#"{"criterion_status":"MET","explanation":null}"#),
            Ok("None".into())
        );
        assert_eq!(
            reason(r#"{"criterion_status":"MET","explanation":1.0}"#),
            Ok("1.0".into())
        );
        assert_eq!(
            reason(r#"{"criterion_status":"MET","explanation":true}"#),
            Ok("True".into())
        );
        assert_eq!(
            reason(r#"{"criterion_status":"MET","explanation":["a",1,{"b":null}]}"#),
            Ok("['a', 1, {'b': None}]".into())
        );
        // What `json.loads` reads and `serde_json` would not.
        assert_eq!(
            reason(r#"{"criterion_status":"MET","explanation":NaN}"#),
            Ok("nan".into())
        );
        assert_eq!(
            reason(r#"{"criterion_status":"MET","explanation":1e400}"#),
            Ok("inf".into())
        );
        assert_eq!(
            reason(r#"{"criterion_status":"MET","explanation":12345678901234567890123}"#),
            Ok("12345678901234567890123".into())
        );
        assert_eq!(
            reason(r#"{"criterion_status":"MET","explanation":{"z":1,"a":-0,"z":[-Infinity]}}"#),
            Ok("{'z': [-inf], 'a': 0}".into())
        );
        assert_eq!(
            reason(r#"{"criterion_status":"MET","explanation":"\ud83d\ude00\ud800x"}"#),
            Ok("\u{1f600}\u{fffd}x".into())
        );
    }

    #[test]
    fn json_that_python_refuses_falls_back_to_the_text() {
        // A raw tab inside a string, a trailing comma, a bare `1.`: not JSON to `json.loads`,
        // so the reason is the text and the verdict is searched for in it.
        for reply in [
            "{\"criterion_status\": \"MET\", \"explanation\": \"a\tb\"}",
            r#"{"criterion_status": "MET", "explanation": [1,]}"#,
            r#"{"criterion_status": "MET", "explanation": 1.}"#,
        ] {
            assert_eq!(parse_verdict(reply).map(|v| v.reason), Ok(reply.into()));
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_fallback() {
        let deep = format!(
            r#"{{"criterion_status": "MET", "explanation": {}{}}}"#,
            "[".repeat(600),
            "]".repeat(600)
        );
        assert!(matches!(
            parse_verdict(&deep),
            Err(VerdictError::TooDeep { .. })
        ));
        let results = parse_batch(&deep, 2);
        assert!(
            results
                .iter()
                .all(|r| matches!(r, Err(VerdictError::TooDeep { .. })))
        );
        let fine = format!(
            r#"{{"criterion_status": "MET", "explanation": {}{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert!(parse_verdict(&fine).is_ok());
    }

    #[test]
    fn floats_print_as_python_repr() {
        for (x, text) in [
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (123.456, "123.456"),
            // Halfway between two shortest strings: Python rounds to the even digit.
            (2_f64.powi(49) + 0.25, "562949953421312.2"),
            (-(2_f64.powi(49) + 0.75), "-562949953421312.8"),
            (0.5, "0.5"),
            (1.2345e300, "1.2345e+300"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
        ] {
            assert_eq!(py_float(x), text);
        }
    }

    #[test]
    fn batches() {
        let out = parse_batch(
            r#"{"verdicts": [{"id": 2, "criterion_status": "UNMET", "explanation": "b"},
                            {"id": 1, "criterion_status": "MET", "explanation": "a"},
                            {"id": 3, "criterion_status": "MET"}, {"id": 3, "criterion_status": "MET"}]}"#,
            4,
        );
        assert_eq!(out[0].as_ref().map(|v| v.met), Ok(true));
        assert_eq!(
            out[1].as_ref().map(|v| (v.met, v.reason.as_str())),
            Ok((false, "b"))
        );
        assert!(matches!(
            out[2],
            Err(VerdictError::MissingInBatch { id: 3, .. })
        ));
        assert!(matches!(
            out[3],
            Err(VerdictError::MissingInBatch { id: 4, .. })
        ));
    }
}
