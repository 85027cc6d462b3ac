//! Which field of a result holds its reward: `reward`, as grader's `EvaluationResult` and the
//! HUD SDK's write it, or `score`, as hud's grade frame (the reply to `tasks.grade`) and
//! `run.evaluation` (what hud keeps of a rollout) carry it. [`settle_result`] and
//! [`settle_line`] read a parsed result in whichever form its JSON has.
//!
//! `EvaluationResult` reads a missing `reward` as 0.0 (the reference's default) and keeps an
//! unknown `score` among its extra fields: a grade frame would read as a reward of 0. Settling
//! moves `score` into the reward when there is no `reward`, and refuses a result with neither
//! that is not marked `isError`.

use serde::Deserialize;
use serde::de::IgnoredAny;

use grader_core::EvaluationResult;

use super::Line;
use crate::error::FormError;

/// The field a result's reward was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum RewardForm {
    /// `reward`: grader's and the HUD SDK's `EvaluationResult`.
    Reward,
    /// `score`, with no `reward`: hud's grade frame and `run.evaluation`.
    Score,
}

impl RewardForm {
    /// The form in a few words, for messages.
    ///
    /// ```
    /// use grader_eval::line::RewardForm;
    ///
    /// assert_eq!(RewardForm::Score.describe(), "hud's grade frame (`score`)");
    /// ```
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            RewardForm::Reward => "EvaluationResult (`reward`)",
            RewardForm::Score => "hud's grade frame (`score`)",
        }
    }
}

/// The top-level keys of a result that settling needs to see.
#[derive(Deserialize)]
struct ResultKeys {
    reward: Option<IgnoredAny>,
}

/// An evaluation line's `result`, as far as settling needs to see it.
#[derive(Deserialize)]
struct LineKeys {
    result: Option<ResultKeys>,
}

/// Settles a bare result read from `json` (its own JSON text): a `score` without `reward`
/// becomes the reward (and leaves the extra fields). Returns the form read, or `None` for a
/// result marked `isError` with neither field (a failure, which needs no reward).
///
/// ```
/// use grader_core::EvaluationResult;
/// use grader_eval::line::{RewardForm, settle_result};
///
/// let json = br#"{"done": true, "isError": false, "score": 0.75}"#;
/// let mut result: EvaluationResult = serde_json::from_slice(json)?;
/// assert_eq!(result.reward(), 0.0); // what the type alone reads
/// assert_eq!(settle_result(json, &mut result)?, Some(RewardForm::Score));
/// assert_eq!(result.reward(), 0.75);
/// assert!(!result.extra.contains_key("score"));
///
/// let json = br#"{"content": "no reward here"}"#;
/// let mut result: EvaluationResult = serde_json::from_slice(json)?;
/// assert!(settle_result(json, &mut result).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`FormError`] when the result has neither `reward` nor `score` (and is not marked
/// `isError`), or its `score` is not a finite number.
pub fn settle_result(
    json: &[u8],
    result: &mut EvaluationResult,
) -> Result<Option<RewardForm>, FormError> {
    settle(result, || {
        serde_json::from_slice::<ResultKeys>(json).is_ok_and(|keys| keys.reward.is_some())
    })
}

/// Settles the result of an evaluation line read from `json` (the line's JSON text), as
/// [`settle_result`] does; `None` also for a line without a result.
///
/// ```
/// use grader_eval::Line;
/// use grader_eval::line::{RewardForm, settle_line};
///
/// let json = br#"{"v":1,"id":"q1","epoch":1,"duration_secs":0,"error":null,"result":{"score":0.5}}"#;
/// let mut line: Line = serde_json::from_slice(json)?;
/// assert_eq!(settle_line(json, &mut line)?, Some(RewardForm::Score));
/// assert_eq!(line.reward(), Some(0.5));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`settle_result`].
pub fn settle_line(json: &[u8], line: &mut Line) -> Result<Option<RewardForm>, FormError> {
    match &mut line.result {
        Some(result) => settle(result, || {
            serde_json::from_slice::<LineKeys>(json)
                .is_ok_and(|keys| keys.result.is_some_and(|result| result.reward.is_some()))
        }),
        None => Ok(None),
    }
}

/// Settles `result`; `has_reward` says whether its JSON has a `reward` key (asked only when
/// the answer matters: a `score` is there, or the reward read is 0).
fn settle(
    result: &mut EvaluationResult,
    has_reward: impl FnOnce() -> bool,
) -> Result<Option<RewardForm>, FormError> {
    if let Some(raw) = result.extra.get_raw("score") {
        if has_reward() {
            return Ok(Some(RewardForm::Reward));
        }
        let text = raw.get().to_owned();
        let text = text.as_str();
        let score = match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Number(number)) => number.as_f64(),
            Ok(other) => {
                return Err(FormError::ScoreNotANumber {
                    kind: grader_core::score::json_kind(&other),
                    text: shortened(text),
                });
            }
            Err(_) => None,
        };
        let Some(score) = score.filter(|score| score.is_finite()) else {
            return Err(FormError::ScoreNotFinite {
                text: shortened(text),
            });
        };
        result
            .set_reward(score)
            .map_err(|_| FormError::ScoreNotFinite {
                text: shortened(text),
            })?;
        result.extra.remove("score");
        return Ok(Some(RewardForm::Score));
    }
    if result.reward() == 0.0 && !has_reward() {
        return if result.is_error {
            Ok(None)
        } else {
            Err(FormError::NoReward)
        };
    }
    Ok(Some(RewardForm::Reward))
}

/// At most 80 bytes of `text`, cut at a character boundary, `…` marking a cut.
fn shortened(text: &str) -> String {
    if text.len() <= 80 {
        return text.to_owned();
    }
    let mut end = 80;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled(json: &str) -> (Result<Option<RewardForm>, FormError>, EvaluationResult) {
        let mut result: EvaluationResult = serde_json::from_str(json).expect("a result");
        let form = settle_result(json.as_bytes(), &mut result);
        (form, result)
    }

    #[test]
    fn each_form_reads_its_reward() {
        let (form, result) = settled(r#"{"reward": 0.0}"#);
        assert_eq!((form, result.reward()), (Ok(Some(RewardForm::Reward)), 0.0));
        let (form, result) = settled(r#"{"score": 0.0, "isError": true, "answer": "x"}"#);
        assert_eq!((form, result.reward()), (Ok(Some(RewardForm::Score)), 0.0));
        assert!(result.is_error);
        assert_eq!(result.extra.keys().collect::<Vec<_>>(), ["answer"]);
        // Both: `reward` is the reward, `score` one more field.
        let (form, result) = settled(r#"{"reward": 1, "score": 0.25}"#);
        assert_eq!((form, result.reward()), (Ok(Some(RewardForm::Reward)), 1.0));
        assert!(result.extra.contains_key("score"));
        let (form, _) = settled(r#"{"isError": true, "content": "grading broke"}"#);
        assert_eq!(form, Ok(None));
    }

    #[test]
    fn a_result_without_a_readable_reward_is_refused_with_what_it_holds() {
        assert_eq!(settled(r#"{"done": true}"#).0, Err(FormError::NoReward));
        let (form, _) = settled(r#"{"score": "0.5"}"#);
        assert_eq!(
            form.map_err(|error| error.to_string()),
            Err("`score` must be a finite number, found a string: \"0.5\"".to_owned())
        );
        let (form, _) = settled(r#"{"score": true}"#);
        assert!(matches!(
            form,
            Err(FormError::ScoreNotANumber {
                kind: "a boolean",
                ..
            })
        ));
        let (form, _) = settled(r#"{"score": 1e999}"#);
        assert_eq!(
            form,
            Err(FormError::ScoreNotFinite {
                text: "1e999".to_owned()
            })
        );
        let (form, _) = settled(&format!(r#"{{"score": "{}"}}"#, "é".repeat(60)));
        let Err(FormError::ScoreNotANumber { text, .. }) = form else {
            panic!("refused");
        };
        assert!(text.len() <= 83 && text.ends_with('…'), "{text}");
    }

    #[test]
    fn lines_settle_their_result() {
        let json =
            br#"{"v":1,"id":"a","epoch":2,"duration_secs":0,"error":null,"result":{"reward":0}}"#;
        let mut line: Line = serde_json::from_slice(json).expect("a line");
        assert_eq!(settle_line(json, &mut line), Ok(Some(RewardForm::Reward)));
        let json = br#"{"v":1,"id":"a","epoch":2,"duration_secs":0,"error":null,"result":{}}"#;
        let mut line: Line = serde_json::from_slice(json).expect("a line");
        assert_eq!(settle_line(json, &mut line), Err(FormError::NoReward));
        let json = br#"{"v":1,"id":"a","epoch":2,"duration_secs":0,"error":{"kind":"failed","message":"x"},"result":null}"#;
        let mut line: Line = serde_json::from_slice(json).expect("a line");
        assert_eq!(settle_line(json, &mut line), Ok(None));
    }
}
