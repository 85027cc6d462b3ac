//! One line of a results file, whoever wrote it.
//!
//! This is the one place that knows what a line holds; `show`, `summary`, `diff` and `report`
//! see only [`Record`]. Today a line is an `EvaluationResult` (what the grader crates and the
//! HUD Python SDK write); its sample id, when it has one, is its `sample_id` field.

use grader_core::EvaluationResult;
use serde_json::Value;

/// What one line says about one sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The sample's id, when the line names it.
    pub sample: Option<String>,
    /// The epoch (repetition) of the sample, when the line says.
    pub epoch: Option<u64>,
    /// The result, unless grading failed.
    pub result: Option<EvaluationResult>,
    /// Why grading failed, when it did.
    pub error: Option<String>,
}

/// Reads one line.
///
/// ```
/// let record = grader_cli::records::parse(br#"{"reward": 0.5, "sample_id": "q1"}"#)?;
/// assert_eq!(record.sample.as_deref(), Some("q1"));
/// assert_eq!(record.result.map(|r| r.reward), Some(0.5));
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// # Errors
/// When the line is not a result.
pub fn parse(bytes: &[u8]) -> Result<Record, serde_json::Error> {
    let result: EvaluationResult = serde_json::from_slice(bytes)?;
    let sample = result.extra.get("sample_id").and_then(id_text);
    let epoch = result.extra.get("epoch").and_then(Value::as_u64);
    Ok(Record {
        sample,
        epoch,
        result: Some(result),
        error: None,
    })
}

/// An id as text: a string as it is, a number in decimal.
fn id_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}
