//! [`EvaluationResult`], what a scenario hands back: the reward, always finite, and its
//! breakdown; its JSON, read field by field so that unknown fields keep their exact text; and
//! its JSON Schema.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::extra::{Extra, RESULT_FIELDS, RawSeed};
use super::info::Info;
use super::subscore::{SubScore, find_in};

/// What a scenario hands back: the reward and its breakdown.
///
/// Field names and defaults follow the HUD SDK's `EvaluationResult` (including the camelCase
/// `isError`). Fields this type does not know are kept in [`extra`](Self::extra) as their exact
/// JSON text and written back after the known ones, so a parse and serialize round trip loses
/// nothing (a 30-digit `trace_id` stays 30 digits).
///
/// The reward is always a finite number: it is read with [`reward`](Self::reward) and set only
/// through [`from_reward`](Self::from_reward) or [`set_reward`](Self::set_reward), which refuse
/// NaN and infinities with a [`RewardError`]; parsing a non-finite reward is an error too. The
/// other fields are public.
///
/// ```
/// use grader_core::EvaluationResult;
///
/// let parsed: EvaluationResult =
///     serde_json::from_str(r#"{"reward": 0.5, "trace_id": 123456789012345678901234567890}"#)?;
/// assert_eq!(parsed.reward(), 0.5);
/// assert!(parsed.done);
/// assert_eq!(parsed.extra.get_raw("trace_id").map(|raw| raw.get()), Some("123456789012345678901234567890"));
/// assert!(serde_json::to_string(&parsed)?.ends_with(r#""trace_id":123456789012345678901234567890}"#));
/// assert!(EvaluationResult::from_reward(f64::NAN).is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct EvaluationResult {
    /// The final score, usually in `[0, 1]`; penalties can push it below 0. Always finite.
    pub(crate) reward: f64,
    /// Whether the task is complete.
    pub done: bool,
    /// A human-readable explanation.
    pub content: Option<String>,
    /// Additional details. [`Grade::from_subscores`](crate::Grade::from_subscores) leaves it
    /// empty: each subscore's info stays on that subscore.
    pub info: Info,
    /// Whether the evaluation itself failed (as opposed to the agent scoring low).
    pub is_error: bool,
    /// The breakdown of the reward.
    pub subscores: Option<Vec<SubScore>>,
    /// Fields this type does not know, kept as their JSON text so that nothing is lost on a
    /// round trip.
    pub extra: Extra,
}

/// The key under which [`EvaluationResult::clamped`] (and [`Gather::clamp`](crate::Gather::clamp))
/// records the reward before clamping, in the result's `info`.
pub const UNCLAMPED_REWARD_KEY: &str = "unclamped_reward";

/// A reward that is not a finite number: NaN or an infinity.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("reward {reward:?} is not a finite number")]
pub struct RewardError {
    /// The rejected reward.
    pub reward: f64,
}

fn check_reward(reward: f64) -> Result<f64, RewardError> {
    if reward.is_finite() {
        Ok(reward)
    } else {
        Err(RewardError { reward })
    }
}

impl Default for EvaluationResult {
    fn default() -> Self {
        EvaluationResult {
            reward: 0.0,
            done: true,
            content: None,
            info: Info::new(),
            is_error: false,
            subscores: None,
            extra: Extra::new(),
        }
    }
}

impl EvaluationResult {
    /// A result with this reward and nothing else, like the reference's `from_float`.
    ///
    /// # Errors
    /// [`RewardError`] when `reward` is NaN or infinite.
    pub fn from_reward(reward: f64) -> Result<Self, RewardError> {
        Ok(EvaluationResult {
            reward: check_reward(reward)?,
            ..EvaluationResult::default()
        })
    }

    /// The final score: usually in `[0, 1]`, below 0 when penalties fired, always finite.
    #[must_use]
    pub fn reward(&self) -> f64 {
        self.reward
    }

    /// Replaces the reward.
    ///
    /// ```
    /// use grader_core::EvaluationResult;
    ///
    /// let mut result = EvaluationResult::default();
    /// result.set_reward(0.25)?;
    /// assert_eq!(result.reward(), 0.25);
    /// assert!(result.set_reward(f64::INFINITY).is_err());
    /// assert_eq!(result.reward(), 0.25);
    /// # Ok::<(), grader_core::RewardError>(())
    /// ```
    ///
    /// # Errors
    /// [`RewardError`] when `reward` is NaN or infinite; the reward is then unchanged.
    pub fn set_reward(&mut self, reward: f64) -> Result<(), RewardError> {
        self.reward = check_reward(reward)?;
        Ok(())
    }

    /// The same result with its reward clamped to `[0, 1]`, for consumers that want a reward
    /// in that range (penalties can push it below 0). When the value changes, the reward before
    /// clamping is kept in `info` under [`UNCLAMPED_REWARD_KEY`], so the breakdown still adds
    /// up; a reward already in range leaves the result unchanged. The reference never clamps.
    ///
    /// ```
    /// use grader_core::{Grade, SubScore};
    ///
    /// let result = Grade::from_subscores([
    ///     SubScore::new("tests", 0.0)?.with_weight(1.0)?,
    ///     SubScore::new("edited tests/", 1.0)?.with_weight(-0.2)?,
    /// ])?;
    /// assert_eq!(result.reward(), -0.2);
    /// let clamped = result.clamped();
    /// assert_eq!(clamped.reward(), 0.0);
    /// assert_eq!(clamped.info["unclamped_reward"], -0.2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn clamped(mut self) -> Self {
        let clamped = self.reward.clamp(0.0, 1.0);
        if clamped != self.reward {
            // The reward is always finite, so this is a JSON number.
            self.info
                .insert(UNCLAMPED_REWARD_KEY.to_owned(), Value::from(self.reward));
            self.reward = clamped;
        }
        self
    }

    /// Whether the evaluation itself failed (as opposed to the agent scoring low): the
    /// [`is_error`](Self::is_error) field (`isError` in JSON), read like
    /// [`reward`](Self::reward).
    ///
    /// ```
    /// use grader_core::EvaluationResult;
    ///
    /// let result: EvaluationResult = serde_json::from_str(r#"{"reward": 0.0, "isError": true}"#)?;
    /// assert!(result.is_error());
    /// assert!(!EvaluationResult::default().is_error());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// The top-level subscores, in order: empty when the result has none (`subscores` absent
    /// or `null` in JSON). The [`subscores`](Self::subscores) field keeps the difference
    /// between none and an empty list, which the JSON writes back as it was read.
    ///
    /// ```
    /// use grader_core::{EvaluationResult, Grade, SubScore};
    ///
    /// let result = Grade::from_subscores([SubScore::new("tests", 1.0)?, SubScore::new("lint", 0.0)?])?;
    /// let names: Vec<&str> = result.subscores().iter().map(SubScore::name).collect();
    /// assert_eq!(names, ["tests", "lint"]);
    /// assert!(EvaluationResult::default().subscores().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn subscores(&self) -> &[SubScore] {
        self.subscores.as_deref().unwrap_or_default()
    }

    /// The top-level subscore named `name` (its final, de-duplicated name), if there is one.
    ///
    /// ```
    /// use grader_core::{Grade, SubScore};
    ///
    /// let result = Grade::from_subscores([SubScore::new("tests", 1.0)?, SubScore::new("tests", 0.0)?])?;
    /// assert_eq!(result.subscore("tests-2").map(SubScore::value), Some(0.0));
    /// assert!(result.subscore("tests").is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn subscore(&self, name: &str) -> Option<&SubScore> {
        self.subscores
            .as_deref()?
            .iter()
            .find(|sub| sub.name() == name)
    }

    /// The subscore at `path`: a top-level subscore's name, then a child's name, and so on.
    ///
    /// The path is a list of names, not one string split at `/`, because a name may hold any
    /// character (`"src/lib.rs"` is one name). At each level the first subscore with that name
    /// is taken; names made by [`Grade`](crate::Grade), [`any`](crate::any) and
    /// [`all`](crate::all) are unique among siblings. An empty path finds nothing.
    ///
    /// ```
    /// use grader_core::{Grade, SubScore, all};
    ///
    /// let quality = [SubScore::new("lint", 0.0)?, SubScore::new("src/lib.rs", 1.0)?];
    /// let result = Grade::from_subscores([
    ///     SubScore::new("tests", 1.0)?,
    ///     all("quality", quality).grade(1.0).now()?,
    /// ])?;
    /// assert_eq!(result.find(["quality", "lint"]).map(SubScore::value), Some(0.0));
    /// assert_eq!(result.find(["quality", "src/lib.rs"]).map(SubScore::value), Some(1.0));
    /// assert!(result.find(["quality", "types"]).is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn find<I>(&self, path: I) -> Option<&SubScore>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        find_in(self.subscores.as_deref().unwrap_or_default(), path)
    }

    /// The result as JSON with every subscore (at every depth) summarized by
    /// [`SubScore::to_summary`]: no subscore keeps its `info`. The result's own fields, `info`
    /// and unknown fields included, are kept, as the reference's `hud.eval` records a grade's
    /// `evaluation`. (Unknown fields become [`Value`]s here, so an integer beyond 64 bits
    /// becomes a float; serialize the result itself to keep them exact.)
    ///
    /// ```
    /// use grader_core::{Grade, Info, SubScore};
    ///
    /// let mut info = Info::new();
    /// info.insert("stdout".into(), "12 passed".into());
    /// let result = Grade::from_subscores([SubScore::new("tests", 1.0)?.with_info(info)])?;
    /// let summary = result.to_summary();
    /// assert_eq!(
    ///     summary["subscores"][0],
    ///     serde_json::json!({"name": "tests", "weight": 1.0, "value": 1.0, "children": null}),
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn to_summary(&self) -> Value {
        let mut object = Info::new();
        object.insert("reward".into(), self.reward.into());
        object.insert("done".into(), self.done.into());
        object.insert("content".into(), self.content.clone().into());
        object.insert("info".into(), Value::Object(self.info.clone()));
        object.insert("isError".into(), self.is_error.into());
        object.insert(
            "subscores".into(),
            self.subscores.as_ref().map_or(Value::Null, |subs| {
                Value::Array(subs.iter().map(SubScore::to_summary).collect())
            }),
        );
        for (key, raw) in self.extra.iter() {
            // The raw text is JSON read by serde_json or written by it, so it parses.
            if let Ok(value) = serde_json::from_str(raw.get()) {
                object.insert(key.to_owned(), value);
            }
        }
        Value::Object(object)
    }
}

impl Serialize for EvaluationResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeMap as _};

        if !self.reward.is_finite() {
            // Unreachable through the public API; refused rather than written as `null`.
            return Err(S::Error::custom(RewardError {
                reward: self.reward,
            }));
        }
        let mut map = serializer.serialize_map(Some(RESULT_FIELDS.len() + self.extra.len()))?;
        map.serialize_entry("reward", &self.reward)?;
        map.serialize_entry("done", &self.done)?;
        map.serialize_entry("content", &self.content)?;
        map.serialize_entry("info", &self.info)?;
        map.serialize_entry("isError", &self.is_error)?;
        map.serialize_entry("subscores", &self.subscores)?;
        for (key, raw) in self.extra.iter() {
            map.serialize_entry(key, raw)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for EvaluationResult {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ResultVisitor)
    }
}

/// Reads an [`EvaluationResult`] from a JSON object, field by field, so that each unknown
/// field's value can be kept as raw JSON text (serde's `flatten` buffers values and would turn
/// them into numbers first).
struct ResultVisitor;

impl<'de> serde::de::Visitor<'de> for ResultVisitor {
    type Value = EvaluationResult;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an evaluation result object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        use serde::de::Error as _;

        fn once<T, E: serde::de::Error>(
            slot: &mut Option<T>,
            field: &'static str,
            value: T,
        ) -> Result<(), E> {
            if slot.replace(value).is_some() {
                return Err(E::duplicate_field(field));
            }
            Ok(())
        }

        let mut reward = None;
        let mut done = None;
        let mut content = None;
        let mut info = None;
        let mut is_error = None;
        let mut subscores = None;
        let mut extra = Extra::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "reward" => once(&mut reward, "reward", map.next_value::<f64>()?)?,
                "done" => once(&mut done, "done", map.next_value::<bool>()?)?,
                "content" => once(&mut content, "content", map.next_value::<Option<String>>()?)?,
                "info" => once(&mut info, "info", map.next_value::<Info>()?)?,
                "isError" => once(&mut is_error, "isError", map.next_value::<bool>()?)?,
                "subscores" => once(
                    &mut subscores,
                    "subscores",
                    map.next_value::<Option<Vec<SubScore>>>()?,
                )?,
                _ => {
                    let raw = map.next_value_seed(RawSeed)?;
                    extra.fields.insert(key, raw);
                }
            }
        }
        let reward = check_reward(reward.unwrap_or(0.0)).map_err(A::Error::custom)?;
        Ok(EvaluationResult {
            reward,
            done: done.unwrap_or(true),
            content: content.flatten(),
            info: info.unwrap_or_default(),
            is_error: is_error.unwrap_or(false),
            subscores: subscores.flatten(),
            extra,
        })
    }
}

/// The wire shape of [`EvaluationResult`], for its JSON Schema only (reading and writing are
/// written by hand, to keep unknown fields as their exact text).
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[schemars(
    rename = "EvaluationResult",
    description = "What a scenario hands back: the reward and its breakdown."
)]
#[allow(dead_code)] // never built: only its schema is used
struct WireEvaluationResult {
    /// The final score, usually in [0, 1]; penalties can push it below 0. Always finite.
    #[schemars(default = "zero")]
    reward: f64,
    /// Whether the task is complete.
    #[schemars(default = "yes")]
    done: bool,
    /// A human-readable explanation.
    #[schemars(default)]
    content: Option<String>,
    /// Additional details.
    #[schemars(default)]
    info: Info,
    /// Whether the evaluation itself failed (as opposed to the agent scoring low).
    #[schemars(rename = "isError", default)]
    is_error: bool,
    /// The breakdown of the reward.
    #[schemars(default)]
    subscores: Option<Vec<SubScore>>,
    /// Fields this type does not know are allowed, and kept.
    #[schemars(flatten)]
    extra: Info,
}

#[cfg(feature = "schema")]
fn zero() -> f64 {
    0.0
}

#[cfg(feature = "schema")]
fn yes() -> bool {
    true
}

// Unknown fields are allowed (and kept), so the schema does not forbid them.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for EvaluationResult {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EvaluationResult".into()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        concat!(module_path!(), "::EvaluationResult").into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        WireEvaluationResult::json_schema(generator)
    }
}

#[cfg(test)]
mod accessor_tests {
    use super::*;

    #[test]
    fn the_accessors_read_the_fields_and_leave_the_json_unchanged() {
        for text in [
            r#"{"reward":0.5,"done":true,"content":null,"info":{},"isError":true,"subscores":null}"#,
            r#"{"reward":0.5,"done":true,"content":null,"info":{},"isError":false,"subscores":[]}"#,
            r#"{"reward":1.0,"done":true,"content":null,"info":{},"isError":false,"subscores":[{"name":"a","weight":1.0,"value":1.0,"children":null,"info":null}]}"#,
        ] {
            let result: EvaluationResult = serde_json::from_str(text).expect("parses");
            assert_eq!(result.is_error(), result.is_error);
            assert_eq!(
                result.subscores(),
                result.subscores.as_deref().unwrap_or(&[])
            );
            let again: Value = serde_json::to_value(&result).expect("serializes");
            let original: Value = serde_json::from_str(text).expect("json");
            assert_eq!(again, original, "{text}");
        }
    }
}
