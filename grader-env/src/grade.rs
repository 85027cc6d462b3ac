//! The grade frame: what a template returns, written as the reference's `TaskRunner.grade`
//! writes it.
//!
//! An [`EvaluationResult`] is sent as its JSON with `reward` moved to the end as `score`
//! (every other field kept, unknown ones included); a number as `{"score": x}`; a JSON object
//! as itself once it has a numeric `score`. A non-finite score is refused.
//!
//! Where this differs from the reference: a [`SubScore`] is accepted and sent as the result
//! [`Grade::from_subscores`] makes of it alone (the reference refuses an object without a
//! `reward`), and an `Err` is the template's failure, answered with its message.

use std::fmt::Display;

use grader_core::{EvaluationResult, Grade, SubScore};
use serde_json::{Map, Value};

use crate::pyfmt::{py_float, py_str_repr};

/// Why a template's return value cannot become a grade frame. The messages name the task
/// (`{id}` is replaced with it when the frame is made) as the reference's do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GradeError {
    /// The score is NaN or an infinity.
    #[error("graded with a non-finite score ({}): yield a finite number", py_float(*.0))]
    NonFinite(f64),
    /// A JSON object without a numeric `score`; the keys it had, sorted.
    #[error("graded with a dict missing a numeric 'score' (keys: [{}])", .0.iter().map(|k| py_str_repr(k)).collect::<Vec<_>>().join(", "))]
    MissingScore(Vec<String>),
    /// The template failed; its message.
    #[error("{0}")]
    Failed(String),
}

/// A value a template may return: it becomes the grade frame.
///
/// Implemented for [`EvaluationResult`], [`SubScore`], `f64`, `f32`, `bool` (1.0 or 0.0, as
/// Python counts it), a JSON object with a numeric `score`, and `Result<T, E>` of any of these
/// (an `Err` fails the task with its message).
///
/// ```
/// use grader_env::IntoGrade;
///
/// let frame = 0.25.into_grade().unwrap();
/// assert_eq!(serde_json::Value::Object(frame).to_string(), r#"{"score":0.25}"#);
/// assert!(f64::NAN.into_grade().is_err());
/// ```
#[diagnostic::on_unimplemented(
    message = "a template cannot return `{Self}`",
    label = "a template returns what becomes its grade",
    note = "return an `EvaluationResult`, a `SubScore`, an `f64`, or a `Result` of one of these"
)]
pub trait IntoGrade {
    /// The grade frame.
    ///
    /// # Errors
    /// [`GradeError`] when the value cannot be graded.
    fn into_grade(self) -> Result<Map<String, Value>, GradeError>;
}

fn score_frame(score: f64) -> Result<Map<String, Value>, GradeError> {
    if !score.is_finite() {
        return Err(GradeError::NonFinite(score));
    }
    let mut frame = Map::new();
    frame.insert("score".to_owned(), Value::from(score));
    Ok(frame)
}

impl IntoGrade for f64 {
    fn into_grade(self) -> Result<Map<String, Value>, GradeError> {
        score_frame(self)
    }
}

impl IntoGrade for f32 {
    fn into_grade(self) -> Result<Map<String, Value>, GradeError> {
        score_frame(f64::from(self))
    }
}

impl IntoGrade for bool {
    fn into_grade(self) -> Result<Map<String, Value>, GradeError> {
        score_frame(if self { 1.0 } else { 0.0 })
    }
}

impl IntoGrade for EvaluationResult {
    fn into_grade(self) -> Result<Map<String, Value>, GradeError> {
        let value = serde_json::to_value(&self).map_err(|e| GradeError::Failed(e.to_string()))?;
        let Value::Object(mut frame) = value else {
            return Err(GradeError::Failed(
                "a result is not a JSON object".to_owned(),
            ));
        };
        let score = frame.shift_remove("reward").unwrap_or(Value::from(0.0));
        frame.insert("score".to_owned(), score);
        Ok(frame)
    }
}

impl IntoGrade for SubScore {
    fn into_grade(self) -> Result<Map<String, Value>, GradeError> {
        Grade::from_subscores(vec![self])
            .map_err(|e| GradeError::Failed(e.to_string()))?
            .into_grade()
    }
}

impl IntoGrade for Map<String, Value> {
    fn into_grade(self) -> Result<Map<String, Value>, GradeError> {
        match self.get("score") {
            Some(Value::Number(n)) => match n.as_f64() {
                Some(x) if x.is_finite() => Ok(self),
                Some(x) => Err(GradeError::NonFinite(x)),
                None => Err(GradeError::NonFinite(f64::NAN)),
            },
            _ => {
                let mut keys: Vec<String> = self.keys().cloned().collect();
                keys.sort();
                Err(GradeError::MissingScore(keys))
            }
        }
    }
}

impl<T: IntoGrade, E: Display> IntoGrade for Result<T, E> {
    fn into_grade(self) -> Result<Map<String, Value>, GradeError> {
        self.map_err(|e| GradeError::Failed(e.to_string()))?
            .into_grade()
    }
}

/// The message the reference sends for a grade that failed, naming the task.
pub(crate) fn grade_message(task_id: &str, error: &GradeError) -> String {
    match error {
        GradeError::Failed(message) => message.clone(),
        other => format!("task {} {other}", py_str_repr(task_id)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;

    #[test]
    fn reward_becomes_a_trailing_score() {
        let mut result = EvaluationResult::from_reward(0.5).unwrap();
        result.content = Some("ok".to_owned());
        let frame = result.into_grade().unwrap();
        let keys: Vec<&str> = frame.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["done", "content", "info", "isError", "subscores", "score"]
        );
        assert_eq!(frame["score"], 0.5);
    }

    #[test]
    fn bad_scores_are_refused_with_the_reference_messages() {
        let error = f64::INFINITY.into_grade().unwrap_err();
        assert_eq!(
            grade_message("t", &error),
            "task 't' graded with a non-finite score (inf): yield a finite number"
        );
        let mut map = Map::new();
        map.insert("b".to_owned(), Value::from(1));
        map.insert("a".to_owned(), Value::from("x"));
        let error = map.into_grade().unwrap_err();
        assert_eq!(
            grade_message("t", &error),
            "task 't' graded with a dict missing a numeric 'score' (keys: ['a', 'b'])"
        );
    }
}
