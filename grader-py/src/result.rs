//! Combining subscores into the platform's `EvaluationResult`, as grader-core does: the
//! reward is the weighted sum with the positive weights scaled to sum to 1, penalties (negative
//! weights) subtracted, and `any`/`all` nodes whose value is the best or worst of their
//! children's.
//!
//! Subscores and results cross as the wire format's JSON (the Python layer passes dicts through
//! `json`), so a dict here has exactly the keys Rust writes, `_parameters` included, and the HUD
//! SDK reads it as its own.

use grader_core::{Grade, SubScore, all, any};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::error::guard;

/// The subscores of a JSON array.
fn subscores(json: &str) -> PyResult<Vec<SubScore>> {
    serde_json::from_str(json)
        .map_err(|error| PyValueError::new_err(format!("not a list of subscores: {error}")))
}

fn to_json(value: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(value).map_err(|error| PyValueError::new_err(error.to_string()))
}

/// `subscore(name, value, weight, info_json)`: one subscore in the wire format, its value
/// checked (in `[0, 1]`, finite) and its weight finite.
#[pyfunction]
#[pyo3(signature = (name, value, weight = 1.0, info = None))]
fn subscore(name: String, value: f64, weight: f64, info: Option<&str>) -> PyResult<String> {
    guard(|| {
        let mut sub = SubScore::new(name, value)
            .and_then(|sub| sub.with_weight(weight))
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        if let Some(info) = info {
            let info = serde_json::from_str(info).map_err(|error| {
                PyValueError::new_err(format!("info is not an object: {error}"))
            })?;
            sub = sub.with_info(info);
        }
        to_json(&sub)
    })
}

/// `combine(subscores_json)`: the `EvaluationResult` of weighted subscores.
#[pyfunction]
fn combine(py: Python<'_>, subscores: &str) -> PyResult<String> {
    let subs = self::subscores(subscores)?;
    guard(|| {
        let result = py
            .detach(|| Grade::from_subscores(subs))
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        to_json(&result)
    })
}

/// `node(kind, name, weight, subscores_json)`: an `any` or `all` node over the subscores.
#[pyfunction]
fn node(kind: &str, name: String, weight: f64, subscores: &str) -> PyResult<String> {
    let children = self::subscores(subscores)?;
    guard(|| {
        let tree = match kind {
            "any" => any(name, children),
            "all" => all(name, children),
            other => return Err(PyValueError::new_err(format!("no node kind {other:?}"))),
        };
        let node = tree
            .grade(weight)
            .now()
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        to_json(&node)
    })
}

/// Adds the functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(subscore, module)?)?;
    module.add_function(wrap_pyfunction!(combine, module)?)?;
    module.add_function(wrap_pyfunction!(node, module)?)?;
    Ok(())
}
