//! JSON answers (grader-core's `json` module): promptfoo's `is-json`, `contains-json` and
//! `equals` on JSON, and JSON Schema checks (`matches_schema`, `contains_schema_match`) by
//! the `jsonschema` crate, compiled once in a `JsonSchema`.
//!
//! Python values (an expected value, a schema) cross as JSON text written by Python's
//! `json.dumps` (`allow_nan=False`): what is not JSON is a `TypeError` or `ValueError` naming
//! the argument. An answer that cannot be judged (a lone surrogate, JSON deeper than grader-core
//! compares, a number beyond a double) is not a match, and the schema checks say why.

use grader_core::json::{self, Draft, JsonError, SchemaCheck, SchemaMismatch};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use serde_json::Value;

use crate::args::{self, Answer};
use crate::error::guard;

/// `value` as JSON text, written by Python's `json.dumps(value, allow_nan=False)`.
fn dumps(value: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    let py = value.py();
    let kwargs = PyDict::new(py);
    kwargs.set_item("allow_nan", false)?;
    py.import("json")?
        .call_method("dumps", (value,), Some(&kwargs))
        .and_then(|text| text.extract::<String>())
        .map_err(|error| {
            let message = format!("{name} is not JSON: {error}");
            if error.is_instance_of::<PyTypeError>(py) {
                PyTypeError::new_err(message)
            } else {
                PyValueError::new_err(message)
            }
        })
}

/// `value` (a Python value) as a JSON value.
fn to_value(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    let text = dumps(value, name)?;
    serde_json::from_str(&text)
        .map_err(|error| PyValueError::new_err(format!("{name} cannot be compared: {error}")))
}

/// Whether ``answer`` is JSON, as ``JSON.parse`` reads it (promptfoo's ``is-json``): only
/// space, tab, line feed and carriage return around it, no trailing commas, comments, single
/// quotes or ``NaN``; any depth, in linear time. ``False`` for a text with a lone surrogate.
///
/// >>> is_json('{"a": [1, 2.5, null]}'), is_json("{'a': 1}")
/// (True, False)
#[pyfunction]
fn is_json(py: Python<'_>, answer: &Bound<'_, PyAny>) -> PyResult<bool> {
    match args::answer(answer, "answer")? {
        Answer::Text(text) => guard(|| Ok(py.detach(|| json::is_json(&text)))),
        Answer::Unjudgeable(_) => Ok(false),
    }
}

/// Whether ``answer`` holds a JSON object (promptfoo's ``contains-json``): from each ``{``, the
/// shortest text ``JSON.parse`` accepts, at most 100 000 UTF-16 code units long. ``False``
/// past the search's bound (256 MiB read in all) and for a text with a lone surrogate.
///
/// >>> contains_json('Here it is: {"name": "Ada"}.'), contains_json("[1, 2] is no object")
/// (True, False)
#[pyfunction]
fn contains_json(py: Python<'_>, answer: &Bound<'_, PyAny>) -> PyResult<bool> {
    match args::answer(answer, "answer")? {
        Answer::Text(text) => {
            guard(|| Ok(py.detach(|| json::contains_json(&text).unwrap_or(false))))
        }
        Answer::Unjudgeable(_) => Ok(false),
    }
}

/// Whether ``answer`` is JSON equal to ``expected`` (a Python value written as JSON): objects
/// whatever their key order (the last of duplicate keys counts), arrays in order, numbers by
/// value (``1``, ``1.0``, ``1e0``; ``true`` is not ``1``), strings exactly. An answer nested
/// deeper than 128 levels, or holding a number or string no Python value written as JSON
/// holds, equals none. Raises ``TypeError`` or ``ValueError`` when ``expected`` is not JSON.
///
/// >>> json_equals('{"b": 1.0, "a": [true]}', {"a": [True], "b": 1})
/// True
#[pyfunction]
fn json_equals(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    expected: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let expected = to_value(expected, "expected")?;
    match args::answer(answer, "answer")? {
        Answer::Text(text) => guard(|| {
            // Each error is an answer that no expected value can equal (deeper than any, or a
            // number or string no Python value written as JSON holds): not equal.
            Ok(py.detach(|| json::json_equals(&text, &expected).unwrap_or(false)))
        }),
        Answer::Unjudgeable(_) => Ok(false),
    }
}

/// The draft named as Python's `jsonschema` names its validators' drafts.
fn draft(name: &str) -> PyResult<Draft> {
    Ok(match name {
        "draft4" => Draft::Draft4,
        "draft6" => Draft::Draft6,
        "draft7" => Draft::Draft7,
        "draft2019-09" => Draft::Draft201909,
        "draft2020-12" => Draft::Draft202012,
        other => {
            return Err(PyValueError::new_err(format!(
                "draft must be one of 'draft4', 'draft6', 'draft7', 'draft2019-09', \
                 'draft2020-12' or None, not {other:?}"
            )));
        }
    })
}

/// A JSON Schema, compiled once to check many answers with ``matches_schema`` and
/// ``contains_schema_match``. The draft is the schema's ``$schema`` (draft 4, 6, 7, 2019-09,
/// 2020-12; 2020-12 without one, as Python's ``jsonschema.validators.validator_for``), or
/// ``draft`` (``"draft7"``, ...) whatever the schema says. ``format`` is an annotation, not an
/// assertion; references resolve inside the schema only (nothing is fetched). Raises
/// ``ValueError`` for a schema that is not a valid one of its draft.
///
/// >>> JsonSchema({"type": "object", "required": ["name"]})
/// JsonSchema({"type": "object", "required": ["name"]})
#[pyclass(frozen, module = "graderkit", name = "JsonSchema")]
pub(crate) struct PyJsonSchema {
    compiled: json::JsonSchema,
    /// The schema as JSON text, for `__repr__` and pickling.
    text: String,
    draft: Option<String>,
}

impl PyJsonSchema {
    fn compile(py: Python<'_>, schema: &Bound<'_, PyAny>, draft: Option<String>) -> PyResult<Self> {
        let text = dumps(schema, "schema")?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|error| PyValueError::new_err(format!("schema cannot be read: {error}")))?;
        let chosen = draft.as_deref().map(self::draft).transpose()?;
        let compiled = guard(|| {
            py.detach(|| match chosen {
                Some(draft) => json::JsonSchema::with_draft(&value, draft),
                None => json::JsonSchema::new(&value),
            })
            .map_err(|error| PyValueError::new_err(error.to_string()))
        })?;
        Ok(Self {
            compiled,
            text,
            draft,
        })
    }
}

#[pymethods]
impl PyJsonSchema {
    #[new]
    #[pyo3(signature = (schema, *, draft = None))]
    fn new(py: Python<'_>, schema: &Bound<'_, PyAny>, draft: Option<String>) -> PyResult<Self> {
        Self::compile(py, schema, draft)
    }

    /// The schema, as the Python value it was made from (read back from its JSON).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?.call_method1("loads", (&self.text,))
    }

    /// The draft chosen, or `None` for the schema's own.
    #[getter]
    fn draft(&self) -> Option<String> {
        self.draft.clone()
    }

    fn __repr__(&self) -> String {
        match &self.draft {
            Some(draft) => format!("JsonSchema({}, draft={draft:?})", self.text),
            None => format!("JsonSchema({})", self.text),
        }
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let this = slf.get();
        let partial = py.import("functools")?.getattr("partial")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("draft", this.draft.clone())?;
        let make = partial.call((slf.get_type(),), Some(&kwargs))?;
        Ok((make, PyTuple::new(py, [this.schema(py)?])?))
    }
}

/// What a schema check returns to Python: `(matched, found_json, span, mismatches, reason)`.
type Checked = (
    bool,
    bool,
    Option<(usize, usize)>,
    Vec<(String, String, String, String)>,
    Option<String>,
);

/// The compiled schema: `schema` itself, or `schema` compiled now.
fn schema_of<'py>(
    py: Python<'py>,
    schema: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyJsonSchema>> {
    if let Ok(compiled) = schema.cast::<PyJsonSchema>() {
        return Ok(compiled.clone());
    }
    Bound::new(py, PyJsonSchema::compile(py, schema, None)?)
}

fn mismatches(found: Vec<SchemaMismatch>) -> Vec<(String, String, String, String)> {
    found
        .into_iter()
        .map(|m| (m.keyword, m.instance_path, m.schema_path, m.message))
        .collect()
}

/// The verdict for Python: byte ranges become `str` indices.
fn checked(text: &str, check: Result<SchemaCheck, JsonError>) -> Checked {
    match check {
        Ok(SchemaCheck::Match(range)) => {
            let start = text[..range.start].chars().count();
            let end = start + text[range].chars().count();
            (true, true, Some((start, end)), Vec::new(), None)
        }
        Ok(SchemaCheck::Mismatch(found)) => (false, true, None, mismatches(found), None),
        Ok(_) => (false, false, None, Vec::new(), None),
        // JSON too deep or holding what cannot be compared, or too much work to search: the
        // answer cannot be judged, and scores 0 with the reason.
        Err(error) => {
            let json = !matches!(error, JsonError::TooMuchWork { .. });
            (false, json, None, Vec::new(), Some(error.to_string()))
        }
    }
}

fn check(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    schema: &Bound<'_, PyAny>,
    run: fn(&str, &json::JsonSchema) -> Result<SchemaCheck, JsonError>,
) -> PyResult<Checked> {
    let schema = schema_of(py, schema)?;
    let compiled = &schema.get().compiled;
    match args::answer(answer, "answer")? {
        Answer::Text(text) => guard(|| Ok(py.detach(|| checked(&text, run(&text, compiled))))),
        Answer::Unjudgeable(reason) => Ok((false, false, None, Vec::new(), Some(reason))),
    }
}

/// `matches_schema(answer, schema)`: whether the answer is JSON matching the schema.
#[pyfunction]
fn matches_schema(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    schema: &Bound<'_, PyAny>,
) -> PyResult<Checked> {
    check(py, answer, schema, json::matches_schema)
}

/// `contains_schema_match(answer, schema)`: whether the answer holds a JSON object matching
/// the schema (the first one that does).
#[pyfunction]
fn contains_schema_match(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    schema: &Bound<'_, PyAny>,
) -> PyResult<Checked> {
    check(py, answer, schema, json::first_schema_match)
}

/// Adds the class and functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyJsonSchema>()?;
    module.add_function(wrap_pyfunction!(is_json, module)?)?;
    module.add_function(wrap_pyfunction!(contains_json, module)?)?;
    module.add_function(wrap_pyfunction!(json_equals, module)?)?;
    module.add_function(wrap_pyfunction!(matches_schema, module)?)?;
    module.add_function(wrap_pyfunction!(contains_schema_match, module)?)?;
    Ok(())
}
