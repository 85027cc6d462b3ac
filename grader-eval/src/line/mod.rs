//! One line of an evaluation's JSONL file: [`Line`], and reading such files back.
//
// The files: this one holds the line format, at the bottom of the crate with `error.rs`;
// `write.rs` writes a line as JSON (`Line::to_json_line`, and `write_line` for the runner's
// buffers); `read.rs` reads files of lines back (`read_lines`), through the `store` module
// for object store URLs; `form.rs` reads a result's reward from `reward` or hud's `score`.

use serde::{Deserialize, Serialize};

use grader_core::SubScore;
use grader_core::score::EvaluationResult;

mod form;
mod read;
mod write;

pub use crate::error::{FormError, LinesError};
pub use form::{RewardForm, settle_line, settle_result};
pub use read::{Entry, Lines, read_lines};
#[cfg(feature = "run")]
pub(crate) use write::write_line;

/// The version written in every [`Line`]'s `v` field. A reader refuses lines of a version it
/// does not know.
pub const LINE_VERSION: u32 = 1;

/// The outcome of grading one sample once (one epoch): one line of an evaluation's JSONL file.
///
/// On disk, with the keys in this order (`error` is `null` for a graded sample, `result` is
/// `null` for a failed one):
///
/// ```json
/// {"v":1,"id":"q17","epoch":1,"duration_secs":0.0021,"error":null,"result":{"reward":1.0,…}}
/// ```
///
/// After them, each only when there is one (so lines without them are as before, and read
/// as before): `started_at`, when the grading started (the runner records it), and the
/// sample's `input`, `target` and `answer` when the runner's `Sample` gives them.
/// They sit beside `result`, not in it, so a result stays the HUD `EvaluationResult` it is.
///
/// `epoch` counts from 1. A line is *scored* when it has a result whose `isError` is false;
/// anything else counts as errored in a [`Summary`](super::Summary) and is never averaged in
/// as a 0.
///
/// ```
/// use grader_core::EvaluationResult;
/// use grader_eval::Line;
///
/// let line = Line::graded("q17", 1, EvaluationResult::from_reward(0.5)?, 0.25);
/// let text = serde_json::to_string(&line)?;
/// assert!(text.starts_with(r#"{"v":1,"id":"q17","epoch":1,"duration_secs":0.25,"error":null,"#));
/// let back: Line = serde_json::from_str(&text)?;
/// assert_eq!(back, line);
/// assert_eq!(back.reward(), Some(0.5));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// The line format's version, [`LINE_VERSION`].
    #[serde(rename = "v", deserialize_with = "known_version")]
    pub version: u32,
    /// The sample's id, unique within the evaluation.
    pub id: String,
    /// Which grading of the sample this is, from 1.
    pub epoch: u32,
    /// How long the grading took, in seconds, from its future's first poll.
    pub duration_secs: f64,
    /// Why the grading failed, if it did.
    pub error: Option<LineError>,
    /// What the grading returned, if it succeeded.
    pub result: Option<EvaluationResult>,
    /// When the grading started (its future's first poll), in RFC 3339 UTC with microseconds
    /// (`2026-01-02T03:04:05.678901Z`), as the runner records it; lines written before it was
    /// recorded, or by hand, have none. With `duration_secs` it gives the grading's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// What the sample gave the agent (the runner's `Sample::input`), when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// What the sample expected (`Sample::target`), when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// What the agent answered (`Sample::answer`), when the sample says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

fn known_version<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let version = u32::deserialize(deserializer)?;
    if version == LINE_VERSION {
        Ok(version)
    } else {
        Err(serde::de::Error::custom(format!(
            "line format version {version} is not supported (this reader knows {LINE_VERSION})"
        )))
    }
}

/// Why grading a sample failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineError {
    /// What kind of failure it was.
    pub kind: ErrorKind,
    /// The error's message (or the panic's).
    pub message: String,
}

/// What kind of failure a [`LineError`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The grading function returned an error.
    Failed,
    /// The grading function panicked.
    Panicked,
}

impl Line {
    /// The line of a sample graded in `duration_secs` seconds.
    #[must_use]
    pub fn graded(
        id: impl Into<String>,
        epoch: u32,
        result: EvaluationResult,
        duration_secs: f64,
    ) -> Self {
        Line {
            version: LINE_VERSION,
            id: id.into(),
            epoch,
            duration_secs,
            error: None,
            result: Some(result),
            started_at: None,
            input: None,
            target: None,
            answer: None,
        }
    }

    /// The line of a sample whose grading failed.
    #[must_use]
    pub fn failed(
        id: impl Into<String>,
        epoch: u32,
        kind: ErrorKind,
        message: impl Into<String>,
        duration_secs: f64,
    ) -> Self {
        Line {
            version: LINE_VERSION,
            id: id.into(),
            epoch,
            duration_secs,
            error: Some(LineError {
                kind,
                message: message.into(),
            }),
            result: None,
            started_at: None,
            input: None,
            target: None,
            answer: None,
        }
    }

    /// The line's [`outcome_fingerprint`]: equal for two lines that say the same about a
    /// grading.
    #[must_use]
    pub fn fingerprint(&self) -> u64 {
        outcome_fingerprint(
            self.error
                .as_ref()
                .map(|error| (error.kind, error.message.as_str())),
            self.result.as_ref(),
        )
    }

    /// The reward, when the line is scored: a result without `isError` and no error.
    #[must_use]
    pub fn reward(&self) -> Option<f64> {
        match (&self.error, &self.result) {
            (None, Some(result)) if !result.is_error && result.reward().is_finite() => {
                Some(result.reward())
            }
            _ => None,
        }
    }
}

/// A fingerprint of a grading's outcome: its error (kind and message), or its result's reward,
/// `isError` and subscores (each one's name, weight, value and children, in order). Info,
/// content, duration and extra fields are left out. Two lines of one (sample, epoch) with
/// different fingerprints are a *conflict*: they say different things about the same grading,
/// and which one counts changes what a summary says.
///
/// ```
/// use grader_core::{EvaluationResult, Grade, SubScore};
/// use grader_eval::line::outcome_fingerprint;
///
/// let result = |value| -> Result<EvaluationResult, Box<dyn std::error::Error>> {
///     Ok(Grade::from_subscores([SubScore::new("tests", value)?])?)
/// };
/// let mut noted = result(1.0)?;
/// noted.content = Some("a note".into());
/// assert_eq!(outcome_fingerprint(None, Some(&result(1.0)?)), outcome_fingerprint(None, Some(&noted)));
/// assert_ne!(outcome_fingerprint(None, Some(&result(1.0)?)), outcome_fingerprint(None, Some(&result(0.5)?)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn outcome_fingerprint(
    error: Option<(ErrorKind, &str)>,
    result: Option<&EvaluationResult>,
) -> u64 {
    use std::hash::{BuildHasher as _, Hasher as _};

    fn hash_subscores(hasher: &mut impl std::hash::Hasher, subscores: Option<&[SubScore]>) {
        let Some(subscores) = subscores else {
            hasher.write_u8(0);
            return;
        };
        hasher.write_u8(1);
        hasher.write_usize(subscores.len());
        for sub in subscores {
            hasher.write_usize(sub.name().len());
            hasher.write(sub.name().as_bytes());
            hasher.write_u64(sub.weight().to_bits());
            hasher.write_u64(sub.value().to_bits());
            hash_subscores(hasher, sub.children());
        }
    }

    let mut hasher = foldhash::fast::FixedState::with_seed(0x6772_6164_6572).build_hasher();
    match (error, result) {
        (Some((kind, message)), _) => {
            hasher.write_u8(1);
            hasher.write_u8(kind as u8);
            hasher.write(message.as_bytes());
        }
        (None, Some(result)) => {
            hasher.write_u8(2);
            hasher.write_u64(result.reward().to_bits());
            hasher.write_u8(u8::from(result.is_error));
            hash_subscores(&mut hasher, result.subscores.as_deref());
        }
        (None, None) => hasher.write_u8(3),
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_lines_have_no_reward_nor_do_error_results() {
        let failed = Line::failed("a", 2, ErrorKind::Panicked, "boom", 0.0);
        assert_eq!(failed.reward(), None);
        let text = String::from_utf8(failed.to_json_line().expect("serializes")).expect("UTF-8");
        assert_eq!(
            text,
            "{\"v\":1,\"id\":\"a\",\"epoch\":2,\"duration_secs\":0.0,\
             \"error\":{\"kind\":\"panicked\",\"message\":\"boom\"},\"result\":null}\n"
        );
        let mut result = EvaluationResult::from_reward(0.0).expect("a finite reward");
        result.is_error = true;
        assert_eq!(Line::graded("a", 1, result, 0.0).reward(), None);
    }

    #[test]
    fn unknown_versions_are_refused() {
        let error = serde_json::from_str::<Line>(
            r#"{"v":2,"id":"a","epoch":1,"duration_secs":0,"error":null,"result":null}"#,
        )
        .expect_err("version 2 is refused");
        assert!(error.to_string().contains("version 2"), "{error}");
    }
}
