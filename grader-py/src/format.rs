//! verifiers 0.3.1's legacy parsers, the text work of them (grader-core's `format` module):
//! `XMLParser`'s sections, answer and format reward, and `ThinkParser`'s and
//! `MaybeThinkParser`'s answer and format.
//!
//! The classes users see (`graderkit.XMLParser`, `ThinkParser`, `MaybeThinkParser`) are in
//! `python/graderkit/_formats.py`: they read chat messages as verifiers does and hand the
//! messages' texts to these functions. A text holding a lone surrogate cannot be judged: it has
//! no section and no answer, and its format scores 0.

use grader_core::format::{self, Field, FormatError, XmlParser};
use grader_core::grade::neumaier_sum;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::args::{self, Answer};
use crate::error::guard;

/// A bad parser is a programming error: `ValueError` with grader-core's message.
fn to_py(error: &FormatError) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// The texts of a list of messages' contents, each read as an agent's text.
fn texts(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<Answer>> {
    let list = value
        .cast::<PyList>()
        .map_err(|_| PyTypeError::new_err(format!("{name} must be a list of str")))?;
    list.iter()
        .map(|item| args::answer(&item, &format!("each of {name}")))
        .collect()
}

/// The judgeable texts of `answers`, in order.
fn judgeable(answers: &[Answer]) -> Vec<&str> {
    answers
        .iter()
        .filter_map(|answer| match answer {
            Answer::Text(text) => Some(text.as_str()),
            Answer::Unjudgeable(_) => None,
        })
        .collect()
}

/// verifiers' `XMLParser`, without the chat messages (see `graderkit.XMLParser`).
#[pyclass(frozen, module = "graderkit._native", name = "XmlParser")]
pub(crate) struct PyXmlParser {
    parser: XmlParser,
}

#[pymethods]
impl PyXmlParser {
    /// `XmlParser(fields, answer_field)`: each field a list of its tags, its name first.
    #[new]
    fn new(fields: Vec<Vec<String>>, answer_field: String) -> PyResult<Self> {
        guard(|| {
            let parser = XmlParser::new(fields.into_iter().map(Field::any_of))
                .map_err(|e| to_py(&e))?
                .with_answer_field(answer_field);
            Ok(Self { parser })
        })
    }

    /// Each tag with its section's content, or `None`: the first section of each tag, or with
    /// `last` the last.
    fn parse(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        last: bool,
    ) -> PyResult<Vec<(String, Option<String>)>> {
        let text = args::answer(text, "text")?;
        guard(|| {
            Ok(py.detach(|| {
                let text = match &text {
                    Answer::Text(text) => text.as_str(),
                    // No section can be read: every tag without one.
                    Answer::Unjudgeable(_) => "",
                };
                let parsed = if last {
                    self.parser.parse_last(text)
                } else {
                    self.parser.parse(text)
                };
                parsed
                    .iter()
                    .map(|(tag, value)| (tag.to_owned(), value.map(str::to_owned)))
                    .collect()
            }))
        })
    }

    /// The last answer in `text`, or `None`.
    fn parse_answer(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        match args::answer(text, "text")? {
            Answer::Text(text) => {
                guard(|| Ok(py.detach(|| self.parser.parse_answer(&text).map(str::to_owned))))
            }
            Answer::Unjudgeable(_) => Ok(None),
        }
    }

    /// The answer of the assistant messages' texts: the first section of the answer tag in the
    /// last message that has one.
    fn parse_answer_messages(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
    ) -> PyResult<Option<String>> {
        let answers = self::texts(texts, "texts")?;
        guard(|| {
            Ok(py.detach(|| {
                // A text that cannot be judged has no answer: the one before it may.
                let texts = judgeable(&answers);
                self.parser.parse_answer_messages(&texts).map(str::to_owned)
            }))
        })
    }

    /// The format reward of the assistant messages' texts: the mean of each one's format
    /// score (0 for a text that cannot be judged), 0 without any.
    fn format_reward(&self, py: Python<'_>, texts: &Bound<'_, PyAny>) -> PyResult<f64> {
        let answers = self::texts(texts, "texts")?;
        guard(|| {
            Ok(py.detach(|| {
                if answers.iter().all(|a| matches!(a, Answer::Text(_))) {
                    return self.parser.format_reward(&judgeable(&answers));
                }
                let scores = answers.iter().map(|answer| match answer {
                    Answer::Text(text) => self.parser.format_score(text),
                    Answer::Unjudgeable(_) => 0.0,
                });
                #[allow(clippy::cast_precision_loss)] // a count of messages
                let count = answers.len() as f64;
                neumaier_sum(scores) / count
            }))
        })
    }

    /// The fields' names, in order.
    fn fields(&self) -> Vec<String> {
        self.parser
            .fields()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "XmlParser(fields={:?}, answer_field={:?})",
            self.parser.fields(),
            self.parser.answer_field()
        )
    }
}

/// `ThinkParser().parse(text)`: the text after the last `</think>`, stripped; empty without
/// one (or for a text that cannot be judged).
#[pyfunction]
fn think_answer(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<String> {
    match args::answer(text, "text")? {
        Answer::Text(text) => guard(|| Ok(py.detach(|| format::think_answer(&text).to_owned()))),
        Answer::Unjudgeable(_) => Ok(String::new()),
    }
}

/// `MaybeThinkParser().parse(text)`: the text after the last `</think>`, or the whole text,
/// stripped; empty for a text that cannot be judged.
#[pyfunction]
fn maybe_think_answer(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<String> {
    match args::answer(text, "text")? {
        Answer::Text(text) => {
            guard(|| Ok(py.detach(|| format::maybe_think_answer(&text).to_owned())))
        }
        Answer::Unjudgeable(_) => Ok(String::new()),
    }
}

/// Whether `text` follows `ThinkParser`'s format (`False` for a text that cannot be judged).
#[pyfunction]
fn think_format(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<bool> {
    match args::answer(text, "text")? {
        Answer::Text(text) => guard(|| Ok(py.detach(|| format::think_format(&text)))),
        Answer::Unjudgeable(_) => Ok(false),
    }
}

/// `ThinkParser`'s format reward of the assistant messages' texts: the share that follow the
/// format (a text that cannot be judged does not), 0 without any.
#[pyfunction]
fn think_format_reward(py: Python<'_>, texts: &Bound<'_, PyAny>) -> PyResult<f64> {
    let answers = self::texts(texts, "texts")?;
    guard(|| {
        Ok(py.detach(|| {
            if answers.iter().all(|a| matches!(a, Answer::Text(_))) {
                return format::think_format_reward(&judgeable(&answers));
            }
            let good = judgeable(&answers)
                .into_iter()
                .filter(|text| format::think_format(text))
                .count();
            #[allow(clippy::cast_precision_loss)] // counts of messages
            let share = good as f64 / answers.len() as f64;
            share
        }))
    })
}

/// Adds the class and functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyXmlParser>()?;
    module.add_function(wrap_pyfunction!(think_answer, module)?)?;
    module.add_function(wrap_pyfunction!(maybe_think_answer, module)?)?;
    module.add_function(wrap_pyfunction!(think_format, module)?)?;
    module.add_function(wrap_pyfunction!(think_format_reward, module)?)?;
    Ok(())
}
