//! The wire format: [`SubScore`], [`EvaluationResult`], and [`Score`], what a scoring
//! computation produces before it is named and weighted.
//!
//! The JSON matches the HUD SDK's `hud.graders.SubScore` and `EvaluationResult`: the same field
//! names, defaults and strictness, so Python reads what Rust writes and the other way round.
//! Where we are stricter: a subscore's value must be a finite number in `[0, 1]` and its weight
//! finite, checked whenever one is built or parsed, so an invalid score never exists.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ScoreError;

/// A JSON object: the `info` of a subscore or result. Keys keep insertion order.
pub type Info = serde_json::Map<String, Value>;

/// One node of a grade's breakdown: a named, weighted value in `[0, 1]`.
///
/// A leaf is a single measurement; a node made by [`any`](crate::any) or [`all`](crate::all)
/// keeps the subscores it was made from as `children`. Its JSON has exactly the fields `name`,
/// `weight`, `value`, `children` and `info` (`metadata` is accepted for `info` on input, as the
/// reference's earlier era wrote it); any other field is rejected.
///
/// ```
/// use grader_core::SubScore;
///
/// let tests = SubScore::new("tests", 1.0)?.with_weight(0.8)?;
/// assert_eq!(tests.weight(), 0.8);
/// assert!(SubScore::new("tests", 1.5).is_err());
/// assert!(SubScore::new("tests", f64::NAN).is_err());
/// # Ok::<(), grader_core::ScoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "MapOnly<RawSubScore>")]
pub struct SubScore {
    name: String,
    weight: f64,
    value: f64,
    children: Option<Vec<SubScore>>,
    info: Option<Info>,
}

/// The unchecked shape of a subscore, as it is read from JSON.
///
/// With the `schema` feature its JSON Schema is [`SubScore`]'s, so the field docs here are the
/// schema's descriptions.
#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        rename = "SubScore",
        description = "One node of a grade's breakdown: a named, weighted value in [0, 1]."
    )
)]
#[serde(deny_unknown_fields)]
struct RawSubScore {
    /// The subscore's name.
    name: String,
    /// Its share of the reward; negative for a penalty.
    #[serde(default = "default_weight")]
    weight: f64,
    /// The value, a finite number in [0, 1].
    #[cfg_attr(feature = "schema", schemars(range(min = 0.0, max = 1.0)))]
    value: f64,
    /// The subscores this one was combined from.
    #[serde(default)]
    children: Option<Vec<SubScore>>,
    /// Grader-specific details (`metadata` is accepted for it on input).
    #[serde(default, alias = "metadata")]
    info: Option<Info>,
}

// The schema of what is accepted: `RawSubScore`'s, since parsing goes through it.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for SubScore {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SubScore".into()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        concat!(module_path!(), "::SubScore").into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        RawSubScore::json_schema(generator)
    }
}

fn default_weight() -> f64 {
    1.0
}

/// Deserializes `T` from a map only: serde's derived structs also accept a sequence of their
/// fields in order (`["a", 1.0, 0.5]`), which the reference rejects.
struct MapOnly<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for MapOnly<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);

        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visit<T> {
            type Value = T;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a subscore object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }

        deserializer
            .deserialize_map(Visit(std::marker::PhantomData))
            .map(MapOnly)
    }
}

impl TryFrom<MapOnly<RawSubScore>> for SubScore {
    type Error = ScoreError;

    fn try_from(MapOnly(raw): MapOnly<RawSubScore>) -> Result<Self, ScoreError> {
        let score = SubScore::new(raw.name, raw.value)?.with_weight(raw.weight)?;
        Ok(SubScore {
            children: raw.children,
            info: raw.info,
            ..score
        })
    }
}

/// Whether `value` is a finite number in `[0, 1]`.
pub(crate) fn is_valid_value(value: f64) -> bool {
    (0.0..=1.0).contains(&value)
}

impl SubScore {
    /// A subscore of weight 1.0 with no info and no children.
    ///
    /// # Errors
    /// [`ScoreError::InvalidValue`] when `value` is NaN, infinite or outside `[0, 1]`.
    pub fn new(name: impl Into<String>, value: f64) -> Result<Self, ScoreError> {
        let name = name.into();
        if !is_valid_value(value) {
            return Err(ScoreError::InvalidValue { name, value });
        }
        Ok(SubScore {
            name,
            weight: 1.0,
            value,
            children: None,
            info: None,
        })
    }

    /// The same subscore with another weight. A negative weight makes it a penalty.
    ///
    /// # Errors
    /// [`ScoreError::InvalidWeight`] when `weight` is NaN or infinite.
    pub fn with_weight(mut self, weight: f64) -> Result<Self, ScoreError> {
        if !weight.is_finite() {
            return Err(ScoreError::InvalidWeight {
                name: self.name,
                weight,
            });
        }
        self.weight = weight;
        Ok(self)
    }

    /// The same subscore with `info` (replacing any it had).
    #[must_use]
    pub fn with_info(mut self, info: Info) -> Self {
        self.info = Some(info);
        self
    }

    /// The same subscore with `children` (replacing any it had).
    #[must_use]
    pub fn with_children(mut self, children: Vec<SubScore>) -> Self {
        self.children = Some(children);
        self
    }

    /// The same subscore under another name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The weight: its share of the reward (negative for a penalty).
    #[must_use]
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// The value, a number in `[0, 1]`.
    #[must_use]
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The subscores this one was combined from, if any.
    #[must_use]
    pub fn children(&self) -> Option<&[SubScore]> {
        self.children.as_deref()
    }

    /// Grader-specific details (`_parameters`, a command's output, …), if any.
    #[must_use]
    pub fn info(&self) -> Option<&Info> {
        self.info.as_ref()
    }

    /// Mutable access to the info, created empty if there was none.
    pub fn info_mut(&mut self) -> &mut Info {
        self.info.get_or_insert_with(Info::new)
    }

    /// Builds a subscore from parts already checked: `value` in `[0, 1]`, `weight` finite.
    pub(crate) fn from_valid_parts(
        name: String,
        weight: f64,
        value: f64,
        children: Option<Vec<SubScore>>,
        info: Option<Info>,
    ) -> Self {
        debug_assert!(is_valid_value(value) && weight.is_finite());
        SubScore {
            name,
            weight,
            value,
            children,
            info,
        }
    }

    /// Takes the info and the children out, leaving none.
    pub(crate) fn take_parts(&mut self) -> (Option<Info>, Option<Vec<SubScore>>) {
        (self.info.take(), self.children.take())
    }

    /// Sets the weight of a subscore already known to be valid; `weight` must be finite.
    pub(crate) fn set_weight_unchecked(&mut self, weight: f64) {
        debug_assert!(weight.is_finite());
        self.weight = weight;
    }

    /// Renames in place.
    pub(crate) fn set_name(&mut self, name: String) {
        self.name = name;
    }
}

/// What a scoring computation produces before it is named and weighted: a value, and
/// optionally info and children.
///
/// A [`Grader`](crate::Grader) returns one; [`Grader::grade`](crate::Grader::grade) checks the
/// value and packages it as a [`SubScore`] with the grader's name, the weight and
/// `_parameters`. It converts from the plain score types a scoring function may return:
///
/// ```
/// use grader_core::{Info, Score};
///
/// assert_eq!(Score::from(true).value, 1.0);
/// assert_eq!(Score::from(0.25_f32).value, 0.25);
/// let mut info = Info::new();
/// info.insert("why".into(), "close enough".into());
/// assert_eq!(Score::from((0.5, info)).info.unwrap()["why"], "close enough");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Score {
    /// The value; checked to be in `[0, 1]` when it becomes a [`SubScore`].
    pub value: f64,
    /// Grader-specific details.
    pub info: Option<Info>,
    /// The subscores this score was derived from.
    pub children: Option<Vec<SubScore>>,
}

impl Score {
    /// A score with only a value.
    #[must_use]
    pub fn new(value: f64) -> Self {
        Score {
            value,
            info: None,
            children: None,
        }
    }

    /// The same score with `info`.
    #[must_use]
    pub fn with_info(mut self, info: Info) -> Self {
        self.info = Some(info);
        self
    }
}

impl From<f64> for Score {
    fn from(value: f64) -> Self {
        Score::new(value)
    }
}

impl From<f32> for Score {
    fn from(value: f32) -> Self {
        Score::new(f64::from(value))
    }
}

impl From<bool> for Score {
    /// `true` is 1.0 and `false` is 0.0, as the reference coerces booleans.
    fn from(passed: bool) -> Self {
        Score::new(if passed { 1.0 } else { 0.0 })
    }
}

impl From<(f64, Info)> for Score {
    fn from((value, info): (f64, Info)) -> Self {
        Score::new(value).with_info(info)
    }
}

impl From<SubScore> for Score {
    /// Keeps the value, info and children; the name and weight are replaced when graded.
    fn from(mut sub: SubScore) -> Self {
        let (info, children) = sub.take_parts();
        Score {
            value: sub.value,
            info,
            children,
        }
    }
}

/// What a scenario hands back: the reward and its breakdown.
///
/// Field names and defaults follow the HUD SDK's `EvaluationResult` (including the camelCase
/// `isError`). Fields this type does not know are kept in [`extra`](Self::extra) and written
/// back, so a parse and serialize round trip loses nothing.
///
/// ```
/// use grader_core::EvaluationResult;
///
/// let parsed: EvaluationResult =
///     serde_json::from_str(r#"{"reward": 0.5, "trace_id": "abc"}"#)?;
/// assert!(parsed.done);
/// assert_eq!(parsed.extra["trace_id"], "abc");
/// assert!(serde_json::to_string(&parsed)?.contains(r#""trace_id":"abc""#));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(description = "What a scenario hands back: the reward and its breakdown.")
)]
pub struct EvaluationResult {
    /// The final score, usually in `[0, 1]`; penalties can push it below 0.
    #[serde(default)]
    pub reward: f64,
    /// Whether the task is complete.
    #[serde(default = "default_done")]
    pub done: bool,
    /// A human-readable explanation.
    #[serde(default)]
    pub content: Option<String>,
    /// Additional details: `from_subscores` copies each subscore's info here under its name.
    #[serde(default)]
    pub info: Info,
    /// Whether the evaluation itself failed (as opposed to the agent scoring low).
    #[serde(default, rename = "isError")]
    pub is_error: bool,
    /// The breakdown of the reward.
    #[serde(default)]
    pub subscores: Option<Vec<SubScore>>,
    /// Fields this type does not know, kept so that nothing is lost on a round trip.
    #[serde(flatten)]
    pub extra: Info,
}

fn default_done() -> bool {
    true
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
            extra: Info::new(),
        }
    }
}

impl EvaluationResult {
    /// The subscore named `name` (its final, de-duplicated name), if there is one.
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

    /// A result with this reward and nothing else, like the reference's `from_float`.
    #[must_use]
    pub fn from_reward(reward: f64) -> Self {
        EvaluationResult {
            reward,
            ..EvaluationResult::default()
        }
    }
}
