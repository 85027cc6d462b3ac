//! Inspect AI 0.3.285's scorers (grader-core's `inspect` module): `match`, `includes`,
//! `exact`, `f1`, `answer`, `pattern` and `choice`, each on one completion and its targets.
//!
//! Each returns `(value, answer, reason, unjudgeable)`: the value (1.0 for `CORRECT`, 0.0
//! otherwise; F1 itself for `f1`), the answer Inspect records, its `ScoreReason`, and why the
//! completion could not be judged. `graderkit.scorer` wraps them in a `Score` with Inspect's
//! value letters and explanation. A completion holding a lone surrogate cannot be judged: it
//! scores 0 with the reason `invalid_response_format`.

use grader_core::inspect::{
    self, AnswerKind, ChoiceOptions, Location, MatchOptions, PatternOptions, Reason, Verdict,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::args::{self, Answer};
use crate::error::guard;

/// What a scorer returns to Python: the value, the answer, the reason, why the completion
/// could not be judged (`None` when it was), and, for `pattern` and `answer`, whether the
/// pattern matched (Inspect's explanation says when it did not).
type Scored = (
    f64,
    Option<String>,
    Option<&'static str>,
    Option<String>,
    bool,
);

fn scored(verdict: Verdict) -> Scored {
    (
        verdict.value,
        verdict.answer,
        verdict.reason.map(Reason::as_str),
        None,
        true,
    )
}

/// The verdict on a completion that cannot be judged: 0, no answer, and why.
fn unjudgeable(why: String) -> Scored {
    (
        0.0,
        None,
        Some(Reason::InvalidResponseFormat.as_str()),
        Some(why),
        false,
    )
}

/// Inspect's `Target`: one `str`, or a list (or tuple) of them.
fn targets(value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if value.is_instance_of::<PyString>() {
        return Ok(vec![args::owned(value, "target")?]);
    }
    let items: Vec<Bound<'_, PyAny>> = if let Ok(list) = value.cast::<PyList>() {
        list.iter().collect()
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        tuple.iter().collect()
    } else {
        return Err(PyTypeError::new_err(format!(
            "target must be a str or a list of str, not {}",
            type_name(value)
        )));
    };
    items
        .iter()
        .map(|item| args::owned(item, "each target"))
        .collect()
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "an unknown type".to_owned(), |n| n.to_string())
}

/// Scores a judgeable completion with `score`, off the GIL.
fn score(
    py: Python<'_>,
    completion: &Bound<'_, PyAny>,
    score: impl FnOnce(&str) -> PyResult<Verdict> + Send,
) -> PyResult<Scored> {
    match args::answer(completion, "completion")? {
        Answer::Text(text) => guard(|| py.detach(|| score(&text)).map(scored)),
        Answer::Unjudgeable(why) => Ok(unjudgeable(why)),
    }
}

/// `match(location, ignore_case, numeric)` on one completion.
#[pyfunction(name = "inspect_match")]
#[pyo3(signature = (completion, target, location = "end", ignore_case = true, numeric = false))]
fn match_(
    py: Python<'_>,
    completion: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    location: &str,
    ignore_case: bool,
    numeric: bool,
) -> PyResult<Scored> {
    let location = match location {
        "begin" => Location::Begin,
        "end" => Location::End,
        "any" => Location::Any,
        "exact" => Location::Exact,
        other => {
            return Err(PyValueError::new_err(format!(
                "location must be 'begin', 'end', 'any' or 'exact', not {other:?}"
            )));
        }
    };
    let targets = self::targets(target)?;
    let options = MatchOptions {
        location,
        ignore_case,
        numeric,
    };
    score(py, completion, |text| {
        Ok(inspect::match_targets(text, &targets, options))
    })
}

/// `includes(ignore_case)` on one completion.
#[pyfunction(name = "inspect_includes")]
#[pyo3(signature = (completion, target, ignore_case = true))]
fn includes(
    py: Python<'_>,
    completion: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    ignore_case: bool,
) -> PyResult<Scored> {
    let targets = self::targets(target)?;
    score(py, completion, |text| {
        Ok(inspect::includes(text, &targets, ignore_case))
    })
}

/// `exact()` on one completion.
#[pyfunction(name = "inspect_exact")]
fn exact(
    py: Python<'_>,
    completion: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
) -> PyResult<Scored> {
    let targets = self::targets(target)?;
    score(py, completion, |text| Ok(inspect::exact(text, &targets)))
}

/// `f1(stop_words)` on one answer.
#[pyfunction(name = "inspect_f1")]
#[pyo3(signature = (answer, target, stop_words = None))]
fn f1(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    stop_words: Option<&Bound<'_, PyAny>>,
) -> PyResult<Scored> {
    let targets = self::targets(target)?;
    let stop_words = match stop_words {
        None => Vec::new(),
        Some(words) => {
            let list = words
                .cast::<PyList>()
                .map_err(|_| PyTypeError::new_err("stop_words must be a list of str or None"))?;
            list.iter()
                .map(|word| args::owned(&word, "each stop word"))
                .collect::<PyResult<_>>()?
        }
    };
    score(py, answer, |text| {
        Ok(inspect::f1(text, &targets, &stop_words))
    })
}

/// `answer(pattern)` on one completion: `pattern` is `"letter"`, `"word"` or `"line"`.
#[pyfunction(name = "inspect_answer")]
fn answer(
    py: Python<'_>,
    completion: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    pattern: &str,
) -> PyResult<Scored> {
    let kind = match pattern {
        "letter" => AnswerKind::Letter,
        "word" => AnswerKind::Word,
        "line" => AnswerKind::Line,
        other => {
            return Err(PyValueError::new_err(format!(
                "pattern must be 'letter', 'word' or 'line', not {other:?}"
            )));
        }
    };
    let targets = self::targets(target)?;
    let mut scored = score(py, completion, |text| {
        Ok(inspect::answer(text, &targets, kind))
    })?;
    // Inspect's answer patterns capture one group, which takes part in every match.
    scored.4 = scored.3.is_none() && scored.1.is_some();
    Ok(scored)
}

/// Whether `pattern` matches `text` at all, where the verdict does not say: on a blank
/// completion, a match whose groups all took no part reads as no match. The pattern is searched
/// with an empty group after it, which takes part in every match.
fn matches_at_all(text: &str, pattern: &str, ignore_case: bool) -> bool {
    // A pattern that starts verbose (`(?x)`) treats `#` as a comment to the end of the line:
    // a line break (nothing, in verbose mode) ends it before the group.
    let verbose = pattern
        .strip_prefix("(?")
        .and_then(|rest| rest.split_once(')'))
        .is_some_and(|(flags, _)| {
            flags.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
                && flags.split('-').next().is_some_and(|on| on.contains('x'))
        });
    let probe = format!("(?:{pattern}{})()", if verbose { "\n" } else { "" });
    let options = PatternOptions {
        ignore_case,
        match_all: false,
    };
    inspect::pattern(text, &probe, &[""], options).is_ok_and(|verdict| verdict.answer.is_some())
}

/// `pattern(pattern, ignore_case, match_all)` on one completion. A pattern the `regex` crate
/// cannot run (lookaround, backreferences) is a `ValueError`.
#[pyfunction(name = "inspect_pattern")]
#[pyo3(signature = (completion, target, pattern, ignore_case = true, match_all = false))]
fn pattern(
    py: Python<'_>,
    completion: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    pattern: &Bound<'_, PyAny>,
    ignore_case: bool,
    match_all: bool,
) -> PyResult<Scored> {
    let pattern = args::owned(pattern, "pattern")?;
    let targets = self::targets(target)?;
    let options = PatternOptions {
        ignore_case,
        match_all,
    };
    let completion_text = match args::answer(completion, "completion")? {
        Answer::Text(text) => text,
        Answer::Unjudgeable(why) => {
            // The pattern is still checked: a bad pattern is the caller's error, whatever the
            // completion.
            guard(|| {
                py.detach(|| inspect::CompiledPattern::new(&pattern, ignore_case))
                    .map(drop)
                    .map_err(|e| PyValueError::new_err(e.to_string()))
            })?;
            return Ok(unjudgeable(why));
        }
    };
    guard(|| {
        py.detach(|| {
            let verdict = inspect::pattern(&completion_text, &pattern, &targets, options)?;
            let matched = match verdict.reason {
                None => true,
                Some(Reason::InvalidResponseFormat) => false,
                Some(Reason::NoResponse) => {
                    verdict.answer.is_some()
                        || matches_at_all(&completion_text, &pattern, ignore_case)
                }
            };
            let mut scored = scored(verdict);
            scored.4 = matched;
            Ok(scored)
        })
        .map_err(|e: inspect::PatternError| PyValueError::new_err(e.to_string()))
    })
}

/// `choice()` after the `multiple_choice` solver, on one completion: `choices` is how many
/// there were, `shuffled` where each choice shown was in the sample. Inspect's `ValueError`s
/// (no choices, a bad shuffle, a target naming no choice) are `ValueError`s.
#[pyfunction(name = "inspect_choice")]
#[pyo3(signature = (completion, target, choices, shuffled = None, multiple_correct = false))]
fn choice(
    py: Python<'_>,
    completion: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    choices: usize,
    shuffled: Option<Vec<usize>>,
    multiple_correct: bool,
) -> PyResult<Scored> {
    let targets = self::targets(target)?;
    let options = ChoiceOptions {
        choices,
        shuffled: shuffled.as_deref(),
        multiple_correct,
    };
    let text = match args::answer(completion, "completion")? {
        Answer::Text(text) => text,
        // An empty completion is checked as Inspect checks the question and the targets.
        Answer::Unjudgeable(why) => {
            guard(|| {
                py.detach(|| inspect::choice("", &targets, options))
                    .map(drop)
                    .map_err(|e| PyValueError::new_err(e.to_string()))
            })?;
            return Ok(unjudgeable(why));
        }
    };
    guard(|| {
        py.detach(|| inspect::choice(&text, &targets, options))
            .map(scored)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    })
}

/// Adds the functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(match_, module)?)?;
    module.add_function(wrap_pyfunction!(includes, module)?)?;
    module.add_function(wrap_pyfunction!(exact, module)?)?;
    module.add_function(wrap_pyfunction!(f1, module)?)?;
    module.add_function(wrap_pyfunction!(answer, module)?)?;
    module.add_function(wrap_pyfunction!(pattern, module)?)?;
    module.add_function(wrap_pyfunction!(choice, module)?)?;
    Ok(())
}
