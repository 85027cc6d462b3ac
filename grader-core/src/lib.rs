//! Graders: functions that turn what an AI agent did into a reward with a legible breakdown,
//! checked at compile time.
//!
//! Every check scores in `[0, 1]`; the reward is their weighted sum (positive weights scaled to
//! sum to 1), so it is at most 1 and goes below 0 when penalties (negative weights) outweigh
//! the rest, as in the reference. [`Gather::clamp`] and [`EvaluationResult::clamped`] keep it
//! in `[0, 1]` for consumers that need that, recording the reward before in `info`.
//!
//! - [`SubScore`] and [`EvaluationResult`] are the wire format the HUD platform reads.
//! - [`Grade::from_subscores`] combines weighted subscores (penalties included) into a reward.
//! - [`Grader`] is a reusable check; `#[grader]` makes one from an ordinary function. Its
//!   [`grade`](Grader::grade) is the one grading call for every grader: a [`Grading`] to await,
//!   to run at once ([`Grading::now`], synchronous graders), or to put in a gather or a tree.
//! - [`Gather`] runs graders concurrently and combines what they return; [`any`], [`all`] and
//!   [`cascade`] build grading trees; a [`Limiter`] bounds commands, judge calls and CPU-heavy
//!   checks across every gather that shares it.
//! - `BashGrader` (feature `bash`, off by default) runs a command and scores its exit code,
//!   leaving nothing running.
//! - `Display` for [`EvaluationResult`] prints a readable breakdown ([`report`]).
//! - `LlmJudge` (feature `judge`, off by default) is the reference's `LLMJudgeGrader`: an
//!   answer judged against weighted criteria by a model over an OpenAI-compatible API.
//! - [`text`] compares an answer with a reference answer as the reference's helpers do;
//!   [`inspect`] has Inspect AI's scorers (`match`, `includes`, `exact`, `f1`, `answer`, and with
//!   the feature `pattern`, `pattern` and `choice`); [`json`] checks JSON answers as promptfoo's
//!   `is-json`, `contains-json` and `equals` do; [`similarity`] has rapidfuzz's edit distances,
//!   `rouge-score`'s ROUGE-N and ROUGE-L, and sacrebleu's sentence BLEU and chrF.
//! - [`format`](mod@format) parses and scores tagged sections (`<think>…</think>`,
//!   `<answer>…</answer>`) as the `verifiers` package's `XMLParser` and `ThinkParser` do.
//!
//! Evaluations over many samples (a resumable, shardable runner streaming JSONL, object
//! storage, the summary with Inspect AI's metrics) are the `grader-eval` crate, built on this
//! one; serving graders as a HUD environment is `grader-env`.
//!
//! ```
//! use grader_core::{Grade, SubScore};
//!
//! let result = Grade::from_subscores(vec![
//!     SubScore::new("tests", 1.0)?.with_weight(0.8)?,
//!     SubScore::new("style", 0.5)?.with_weight(0.2)?,
//! ])?;
//! assert!((result.reward() - 0.9).abs() < 1e-12);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Where this crate differs from the Python reference (`hud.graders`), the item's docs say so.
//!
//! Features:
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `macros` | on | the `#[grader]` and `#[derive(Grader)]` re-exports |
//! | `bash` | off | `BashGrader` and the sandbox (tokio's process and I/O support, rustix) |
//! | `schema` | off | `schemars::JsonSchema` for [`SubScore`] and [`EvaluationResult`] |
//! | `judge` | off | `LlmJudge`, with an HTTP client (reqwest with rustls), sha2 and schemars |
//! | `pattern` | off | Inspect AI's `pattern` and `choice` scorers ([`inspect`]), with `regex` |
//! | `json-schema` | off | JSON Schema validation in [`json`], with the `jsonschema` crate |
//! | `math` | off | math-verify's answer extraction and comparison (`math`), with num-bigint and num-rational |
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(all(unix, feature = "bash"))]
pub mod bash;
pub mod combinators;
pub mod cost;
mod derive;
pub mod error;
pub mod format;
pub mod gather;
pub mod grade;
pub mod grader;
pub mod grading;
pub mod inspect;
pub mod json;
#[cfg(feature = "judge")]
pub mod judge;
pub mod limit;
#[cfg(feature = "math")]
pub mod math;
pub mod node;
mod outcome;
pub mod params;
pub mod pyjson;
pub mod report;
#[cfg(all(unix, feature = "bash"))]
pub mod sandbox;
pub mod score;
pub mod similarity;
pub mod text;

#[cfg(all(unix, feature = "bash"))]
pub use bash::BashGrader;
pub use combinators::{Children, Tree, all, any, cascade};
pub use error::{CombineError, Failure, GraderError, OnError, ScoreError};
pub use gather::{Gather, GatherError};
pub use grade::Grade;
pub use grader::{BoxGrader, Grader, IntoScore, PARAMETERS_KEY, SyncGrader};
pub use grading::Grading;
#[cfg(feature = "judge")]
pub use judge::{JudgeConfig, JudgeError, LlmJudge};
pub use limit::{Limiter, Resource};
pub use node::{Earlier, IntoNode, Node};
pub use score::{
    EvaluationResult, Extra, Info, InfoError, RewardError, Score, SubScore, UNCLAMPED_REWARD_KEY,
    info_from_value,
};

/// Any error of this crate, so that `?` works across all of them in one function.
///
/// ```
/// use grader_core::{Error, Gather, Grade, SubScore};
///
/// fn combine() -> Result<f64, Error> {
///     let tests = SubScore::new("tests", 1.0)?; // ScoreError
///     let result = Grade::from_subscores([tests])?; // CombineError
///     Ok(result.reward())
/// }
/// assert_eq!(combine().unwrap(), 1.0);
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A subscore would be invalid.
    #[error(transparent)]
    Score(#[from] error::ScoreError),
    /// Subscores could not be combined.
    #[error(transparent)]
    Combine(#[from] error::CombineError),
    /// A grading failed.
    #[error(transparent)]
    Grader(#[from] error::GraderError),
    /// A gathering failed.
    #[error(transparent)]
    Gather(#[from] gather::GatherError),
}

/// Turns a scoring function into a [`Grader`] type. See the `grader-macros` crate.
#[cfg(feature = "macros")]
#[doc(inline)]
pub use grader_macros::grader;

/// Derives [`Grader`] for a struct whose fields are the grader's inputs. See the
/// `grader-macros` crate.
#[cfg(feature = "macros")]
#[doc(inline)]
pub use grader_macros::Grader;

/// Support for code that `#[grader]` generates. Not public API: it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use serde_json::Value;

    use crate::params::ParametersWriter;

    pub use crate::derive::{
        AsyncScoreMethodOutput, ScoreMethodOutput, score_method, score_method_async,
    };

    use serde::Serialize;

    use crate::{Failure, GraderError, Info, Score, SubScore};

    /// Packages a synchronous grader's outcome exactly as [`Grader::grade`](crate::Grader::grade)
    /// does.
    ///
    /// # Errors
    /// As [`Grader::grade`](crate::Grader::grade).
    pub fn package(
        name: String,
        weight: f64,
        parameters: Info,
        outcome: Result<Score, Failure>,
    ) -> Result<SubScore, GraderError> {
        crate::grader::package(name, weight, parameters, outcome)
    }

    /// Wraps a reference to an argument so that method resolution picks how to record it:
    /// `(&Capture(&arg)).__grader_capture(name)` finds [`CaptureSerialize`] when the argument's
    /// type implements `Serialize`, and [`CapturePlaceholder`] (one autoref further) when not.
    pub struct Capture<'a, T: ?Sized>(pub &'a T);

    /// Records a serializable argument as its JSON.
    pub trait CaptureSerialize {
        /// The argument's JSON, or the placeholder if serializing fails.
        fn __grader_capture(&self, type_name: &'static str) -> Value;

        /// Records what [`__grader_capture`](Self::__grader_capture) returns in `out`, under
        /// the key given as its JSON text and a colon (`"\"name\":"`).
        fn __grader_write(
            &self,
            out: &mut ParametersWriter,
            json_key: &'static str,
            type_name: &'static str,
        );
    }

    impl<T: Serialize + ?Sized> CaptureSerialize for Capture<'_, T> {
        fn __grader_capture(&self, type_name: &'static str) -> Value {
            crate::params::json_safe(self.0, type_name)
        }

        fn __grader_write(
            &self,
            out: &mut ParametersWriter,
            json_key: &'static str,
            type_name: &'static str,
        ) {
            out.record_keyed(json_key, self.0, type_name);
        }
    }

    /// Records an argument with no JSON form as `"<TypeName: not serializable>"`.
    pub trait CapturePlaceholder {
        /// The placeholder.
        fn __grader_capture(&self, type_name: &'static str) -> Value;

        /// Records the placeholder in `out`, under the key given as its JSON text and a
        /// colon.
        fn __grader_write(
            &self,
            out: &mut ParametersWriter,
            json_key: &'static str,
            type_name: &'static str,
        );
    }

    impl<T: ?Sized> CapturePlaceholder for &Capture<'_, T> {
        fn __grader_capture(&self, type_name: &'static str) -> Value {
            crate::params::placeholder(type_name)
        }

        fn __grader_write(
            &self,
            out: &mut ParametersWriter,
            json_key: &'static str,
            type_name: &'static str,
        ) {
            out.record_placeholder_keyed(json_key, type_name);
        }
    }
}

#[cfg(test)]
#[allow(clippy::needless_borrow)] // the explicit `&` is the autoref being tested
mod capture_tests {
    use super::__private::{Capture, CapturePlaceholder as _, CaptureSerialize as _};
    use std::collections::BTreeMap;

    struct Opaque;

    #[test]
    fn serializable_values_are_recorded_as_json() {
        let list = vec![1, 2];
        assert_eq!(
            (&Capture(&list)).__grader_capture("Vec<i32>"),
            serde_json::json!([1, 2])
        );
        let text: &str = "hi";
        assert_eq!((&Capture(&text)).__grader_capture("str"), "hi");
        assert_eq!(
            (&Capture(&(1, f64::INFINITY))).__grader_capture("(i32, f64)"),
            serde_json::json!([1, null])
        );
    }

    #[test]
    fn other_values_get_the_placeholder() {
        assert_eq!(
            (&Capture(&Opaque)).__grader_capture("Opaque"),
            "<Opaque: not serializable>"
        );
    }

    #[test]
    fn serialization_failing_at_run_time_gets_the_placeholder() {
        let mut map = BTreeMap::new();
        map.insert(vec![1], "non-string key");
        assert_eq!(
            (&Capture(&map)).__grader_capture("BTreeMap"),
            "<BTreeMap: not serializable>"
        );
    }
}
