//! The reference's text helpers (`hud.graders.text`): the same names, keyword options and
//! defaults, the same scores.
//!
//! Where the reference takes `str | Any` and calls `str()` on anything else, these take a `str`
//! only and raise `TypeError` naming the argument: a `None` or a list passed as an answer is a
//! bug in the caller, not an answer to score.

use grader_core::text::{self, ContainsOptions, ExactMatchOptions, NumericMatchOptions};
use pyo3::prelude::*;

use crate::args::{self, Answer};
use crate::error::guard;

/// Scores an agent's text with `score`, or 0.0 where the text cannot be judged.
fn score_answer(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    score: impl FnOnce(&str) -> f64 + Send,
) -> PyResult<f64> {
    match args::answer(answer, "answer")? {
        Answer::Text(text) => guard(|| Ok(py.detach(|| score(&text)))),
        Answer::Unjudgeable(_) => Ok(0.0),
    }
}

/// The strings of a list argument (a `TypeError` naming it for anything but a list of `str`).
fn strings(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<String>> {
    let list = value.cast::<pyo3::types::PyList>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!("{name} must be a list of str"))
    })?;
    list.iter()
        .map(|item| args::owned(&item, &format!("each of {name}")))
        .collect()
}

/// `normalize(text)`: lowercased, punctuation and articles removed, whitespace collapsed.
#[pyfunction]
fn normalize(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = args::owned(text, "text")?;
    guard(|| Ok(py.detach(|| text::normalize(&text))))
}

/// `exact_match(answer, expected, *, normalize_text=True)`.
#[pyfunction]
#[pyo3(signature = (answer, expected, *, normalize_text = true))]
fn exact_match(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    expected: &Bound<'_, PyAny>,
    normalize_text: bool,
) -> PyResult<f64> {
    let expected = args::owned(expected, "expected")?;
    score_answer(py, answer, move |answer| {
        text::exact_match_with(answer, &expected, ExactMatchOptions { normalize_text })
    })
}

/// `contains(answer, substring, *, case_sensitive=False)`.
#[pyfunction]
#[pyo3(signature = (answer, substring, *, case_sensitive = false))]
fn contains(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    substring: &Bound<'_, PyAny>,
    case_sensitive: bool,
) -> PyResult<f64> {
    let substring = args::owned(substring, "substring")?;
    score_answer(py, answer, move |answer| {
        text::contains_with(answer, &substring, ContainsOptions { case_sensitive })
    })
}

/// `contains_any(answer, substrings, *, case_sensitive=False)`.
#[pyfunction]
#[pyo3(signature = (answer, substrings, *, case_sensitive = false))]
fn contains_any(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    substrings: &Bound<'_, PyAny>,
    case_sensitive: bool,
) -> PyResult<f64> {
    let substrings = strings(substrings, "substrings")?;
    score_answer(py, answer, move |answer| {
        text::contains_any_with(answer, &substrings, ContainsOptions { case_sensitive })
    })
}

/// `contains_all(answer, substrings, *, case_sensitive=False)`.
#[pyfunction]
#[pyo3(signature = (answer, substrings, *, case_sensitive = false))]
fn contains_all(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    substrings: &Bound<'_, PyAny>,
    case_sensitive: bool,
) -> PyResult<f64> {
    let substrings = strings(substrings, "substrings")?;
    score_answer(py, answer, move |answer| {
        text::contains_all_with(answer, &substrings, ContainsOptions { case_sensitive })
    })
}

/// `numeric_match(answer, expected, *, tolerance=0.0)`.
#[pyfunction]
#[pyo3(signature = (answer, expected, *, tolerance = 0.0))]
fn numeric_match(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    expected: f64,
    tolerance: f64,
) -> PyResult<f64> {
    score_answer(py, answer, move |answer| {
        text::numeric_match_with(answer, expected, NumericMatchOptions { tolerance })
    })
}

/// `f1_score(answer, reference)`: token-level F1 of the normalized texts.
#[pyfunction]
fn f1_score(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    reference: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    let reference = args::owned(reference, "reference")?;
    score_answer(py, answer, move |answer| text::f1_score(answer, &reference))
}

/// Adds the functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(normalize, module)?)?;
    module.add_function(wrap_pyfunction!(exact_match, module)?)?;
    module.add_function(wrap_pyfunction!(contains, module)?)?;
    module.add_function(wrap_pyfunction!(contains_any, module)?)?;
    module.add_function(wrap_pyfunction!(contains_all, module)?)?;
    module.add_function(wrap_pyfunction!(numeric_match, module)?)?;
    module.add_function(wrap_pyfunction!(f1_score, module)?)?;
    Ok(())
}
