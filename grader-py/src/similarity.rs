//! Similarity to a reference, as the anchors compute it: rapidfuzz's edit distances, Google's
//! rouge-score, sacrebleu's sentence BLEU and chrF (grader-core's `similarity` module).
//!
//! The values are the anchors' own, on their scales: `ratio`, `bleu` and `chrf` from 0 to 100,
//! the others from 0 to 1; ROUGE as `(precision, recall, fmeasure)`, which the Python layer
//! wraps in rouge-score's `Score` named tuple.

use grader_core::similarity::{self, SimilarityError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::args;
use crate::error::{LimitError, guard};

/// The Python exception for a similarity error: past a bound, [`LimitError`]; a bad argument,
/// `ValueError`.
fn to_py(error: &SimilarityError) -> PyErr {
    match error {
        SimilarityError::TooLarge { .. } => LimitError::new_err(error.to_string()),
        _ => PyValueError::new_err(error.to_string()),
    }
}

/// Runs `work` on two owned texts without the GIL.
fn two<T: Send>(
    py: Python<'_>,
    (a, a_name): (&Bound<'_, PyAny>, &str),
    (b, b_name): (&Bound<'_, PyAny>, &str),
    work: impl FnOnce(&str, &str) -> Result<T, SimilarityError> + Send,
) -> PyResult<T> {
    let a = args::owned(a, a_name)?;
    let b = args::owned(b, b_name)?;
    guard(|| py.detach(|| work(&a, &b)).map_err(|e| to_py(&e)))
}

/// rapidfuzz's `Levenshtein.distance(a, b)`.
#[pyfunction]
fn levenshtein(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<usize> {
    two(py, (a, "a"), (b, "b"), similarity::levenshtein)
}

/// rapidfuzz's `Levenshtein.normalized_similarity(a, b)`, from 0 to 1.
#[pyfunction]
fn levenshtein_similarity(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    two(py, (a, "a"), (b, "b"), similarity::levenshtein_similarity)
}

/// rapidfuzz's `Indel.distance(a, b)`.
#[pyfunction]
fn indel(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<usize> {
    two(py, (a, "a"), (b, "b"), similarity::indel)
}

/// rapidfuzz's `fuzz.ratio(a, b)`, from 0 to 100.
#[pyfunction]
fn ratio(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<f64> {
    two(py, (a, "a"), (b, "b"), similarity::ratio)
}

/// rouge-score's ROUGE-N of `prediction` against `target`: `(precision, recall, fmeasure)`.
#[pyfunction]
#[pyo3(signature = (target, prediction, n = 1))]
fn rouge_n(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    prediction: &Bound<'_, PyAny>,
    n: usize,
) -> PyResult<(f64, f64, f64)> {
    two(
        py,
        (target, "target"),
        (prediction, "prediction"),
        move |t, p| similarity::rouge_n(t, p, n).map(|s| (s.precision, s.recall, s.fmeasure)),
    )
}

/// rouge-score's ROUGE-L of `prediction` against `target`: `(precision, recall, fmeasure)`.
#[pyfunction]
fn rouge_l(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    prediction: &Bound<'_, PyAny>,
) -> PyResult<(f64, f64, f64)> {
    two(
        py,
        (target, "target"),
        (prediction, "prediction"),
        |t, p| similarity::rouge_l(t, p).map(|s| (s.precision, s.recall, s.fmeasure)),
    )
}

/// The references of BLEU or chrF: a list of `str` (a `TypeError` otherwise).
fn references(value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let list = value
        .cast::<pyo3::types::PyList>()
        .map_err(|_| pyo3::exceptions::PyTypeError::new_err("references must be a list of str"))?;
    list.iter()
        .map(|item| args::owned(&item, "each reference"))
        .collect()
}

/// sacrebleu's `sentence_bleu(hypothesis, references).score`, from 0 to 100.
#[pyfunction]
fn bleu(
    py: Python<'_>,
    hypothesis: &Bound<'_, PyAny>,
    references: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    let hypothesis = args::owned(hypothesis, "hypothesis")?;
    let references = self::references(references)?;
    guard(|| {
        py.detach(|| similarity::bleu(&hypothesis, &references))
            .map_err(|e| to_py(&e))
    })
}

/// sacrebleu's `sentence_chrf(hypothesis, references).score`, from 0 to 100.
#[pyfunction]
fn chrf(
    py: Python<'_>,
    hypothesis: &Bound<'_, PyAny>,
    references: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    let hypothesis = args::owned(hypothesis, "hypothesis")?;
    let references = self::references(references)?;
    guard(|| {
        py.detach(|| similarity::chrf(&hypothesis, &references))
            .map_err(|e| to_py(&e))
    })
}

/// Adds the functions to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(levenshtein, module)?)?;
    module.add_function(wrap_pyfunction!(levenshtein_similarity, module)?)?;
    module.add_function(wrap_pyfunction!(indel, module)?)?;
    module.add_function(wrap_pyfunction!(ratio, module)?)?;
    module.add_function(wrap_pyfunction!(rouge_n, module)?)?;
    module.add_function(wrap_pyfunction!(rouge_l, module)?)?;
    module.add_function(wrap_pyfunction!(bleu, module)?)?;
    module.add_function(wrap_pyfunction!(chrf, module)?)?;
    Ok(())
}
