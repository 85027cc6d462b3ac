//! Reading Python arguments: strings that must be strings, and agents' texts, which are read
//! whatever they hold.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// An agent's text as read from Python: its text, or why it cannot be judged.
pub(crate) enum Answer {
    /// The text.
    Text(String),
    /// Why the text cannot be judged (it scores 0 with this reason).
    Unjudgeable(String),
}

/// Reads the argument `name`, which must be a `str` (a `TypeError` naming it otherwise). A
/// `str` holding lone surrogates (which no UTF-8 text holds) is [`Answer::Unjudgeable`].
pub(crate) fn answer(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Answer> {
    let text = string(value, name)?;
    Ok(match text.to_str() {
        Ok(text) => Answer::Text(text.to_owned()),
        Err(_) => Answer::Unjudgeable(format!(
            "the {name} is not valid Unicode: it holds a lone surrogate"
        )),
    })
}

/// The argument `name` as a `str` object (a `TypeError` naming it otherwise).
pub(crate) fn string<'py>(value: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyString>> {
    value.cast::<PyString>().cloned().map_err(|_| {
        PyTypeError::new_err(format!(
            "{name} must be a str, not {}",
            value
                .get_type()
                .name()
                .map_or_else(|_| "an unknown type".to_owned(), |n| n.to_string())
        ))
    })
}

/// The argument `name` as a Rust `String`: a `str` of valid Unicode (a `TypeError` naming the
/// argument otherwise, a `ValueError` for lone surrogates).
pub(crate) fn owned(value: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    let text = string(value, name)?;
    text.to_str().map(str::to_owned).map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "{name} is not valid Unicode: it holds a lone surrogate"
        ))
    })
}
