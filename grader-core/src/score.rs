//! The wire format: [`SubScore`], [`EvaluationResult`], and [`Score`], what a scoring
//! computation produces before it is named and weighted.
//!
//! The JSON matches the HUD SDK's `hud.graders.SubScore` and `EvaluationResult`: the same field
//! names, defaults and strictness, so Python reads what Rust writes and the other way round.
//! Where we are stricter: a subscore's value must be a finite number in `[0, 1]`, its weight
//! and a result's reward finite, checked whenever one is built or parsed, so an invalid score
//! never exists. Where we keep more: a result's unknown fields ([`Extra`]) keep their exact
//! JSON text, so integers beyond 64 bits survive a round trip as they do through Python.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::ScoreError;

/// A JSON object: the `info` of a subscore or result. Keys keep insertion order.
///
/// It is `serde_json`'s `Map`, so a `json!({...})` object becomes one with
/// [`info_from_value`] (the `TryFrom<Value>` conversion; Rust's orphan rule keeps this crate
/// from implementing `TryFrom` on another crate's type for another crate's type).
pub type Info = serde_json::Map<String, Value>;

/// A JSON value that cannot be an [`Info`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InfoError {
    /// The value is not a JSON object.
    #[error("info must be a JSON object, not {kind} ({value})")]
    NotAnObject {
        /// What the value is: `"null"`, `"a boolean"`, `"a number"`, `"a string"` or
        /// `"an array"`.
        kind: &'static str,
        /// The value.
        value: Value,
    },
}

/// What kind of JSON value this is, as an error message says it: `null`, `a boolean`,
/// `a number`, `a string`, `an array` or `an object`.
///
/// ```
/// use grader_core::score::json_kind;
///
/// assert_eq!(json_kind(&serde_json::json!([1, 2])), "an array");
/// ```
#[must_use]
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The [`Info`] a JSON object holds, keys in order; any other value is an
/// [`InfoError::NotAnObject`] carrying it and its kind.
///
/// ```
/// use grader_core::{InfoError, Score, info_from_value};
/// use serde_json::json;
///
/// let info = info_from_value(json!({"failed": ["test_a"], "ran": 12}))?;
/// assert_eq!(Score::new(0.5).with_info(info).info.unwrap()["ran"], 12);
///
/// let error = info_from_value(json!([1, 2])).unwrap_err();
/// assert!(matches!(error, InfoError::NotAnObject { kind: "an array", .. }));
/// assert_eq!(error.to_string(), "info must be a JSON object, not an array ([1,2])");
/// # Ok::<(), InfoError>(())
/// ```
///
/// # Errors
/// [`InfoError::NotAnObject`] when `value` is not a JSON object.
pub fn info_from_value(value: Value) -> Result<Info, InfoError> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(InfoError::NotAnObject {
            kind: json_kind(&other),
            value: other,
        }),
    }
}

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
#[derive(Clone, Deserialize)]
#[serde(try_from = "MapOnly<RawSubScore>")]
pub struct SubScore {
    name: String,
    weight: f64,
    value: f64,
    children: Option<Vec<SubScore>>,
    /// The info, without `_parameters` when [`parameters`](Self::parameters) holds them.
    info: Option<Info>,
    /// The recorded `_parameters` as the JSON text of an object, kept as text from the moment
    /// they are recorded until the line is written; they are the info's last key. When set,
    /// `info` has no `_parameters` of its own.
    parameters: Option<Vec<u8>>,
    /// `info` with `parameters` parsed in, made the first time [`info`](Self::info) is asked
    /// for (boxed: most subscores never need it).
    merged: OnceLock<Box<Info>>,
}

impl PartialEq for SubScore {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.weight == other.weight
            && self.value == other.value
            && self.children == other.children
            && match (&self.parameters, &other.parameters) {
                (None, None) => self.info == other.info,
                // The same text is the same object; different text may still be (keys in
                // another order), which comparing the maps decides.
                (Some(mine), Some(theirs)) if mine == theirs && self.info == other.info => true,
                _ => self.info() == other.info(),
            }
    }
}

impl std::fmt::Debug for SubScore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubScore")
            .field("name", &self.name)
            .field("weight", &self.weight)
            .field("value", &self.value)
            .field("children", &self.children)
            .field("info", &self.info())
            .finish()
    }
}

impl Serialize for SubScore {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;

        // The info as a map, `_parameters` parsed in: the same output as before for every
        // serializer and formatter (raw JSON text written in place would keep its compact form
        // inside a pretty-printed document).
        let mut out = serializer.serialize_struct("SubScore", 5)?;
        out.serialize_field("name", &self.name)?;
        out.serialize_field("weight", &self.weight)?;
        out.serialize_field("value", &self.value)?;
        out.serialize_field("children", &self.children)?;
        out.serialize_field("info", &self.info())?;
        out.end()
    }
}

/// `info` with `_parameters` (the JSON text of an object) appended as its last key.
fn merge_parameters(info: Option<&Info>, parameters: &[u8]) -> Info {
    let mut merged = info.cloned().unwrap_or_else(|| Info::with_capacity(1));
    merged.insert(
        crate::params::PARAMETERS_KEY.to_owned(),
        Value::Object(parse_parameters(parameters)),
    );
    merged
}

/// The object that recorded `_parameters` text holds. The text is always a JSON object
/// written by a [`ParametersWriter`](crate::params::ParametersWriter) or by `serde_json`, so
/// it parses, however deeply nested (as deep as the value it was written from: serde_json's
/// limit of 128 levels is lifted); an empty map stands in if it ever did not.
pub(crate) fn parse_parameters(parameters: &[u8]) -> Info {
    let mut reader = serde_json::Deserializer::from_slice(parameters);
    reader.disable_recursion_limit();
    let parsed = Info::deserialize(&mut reader).and_then(|info| reader.end().map(|()| info));
    debug_assert!(
        parsed.is_ok(),
        "recorded parameters that do not parse: {parsed:?}"
    );
    parsed.unwrap_or_default()
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
            parameters: None,
            merged: OnceLock::new(),
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
        self.parameters = None;
        self.merged = OnceLock::new();
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
    ///
    /// A grader's recorded `_parameters` are kept as JSON text until they are written out; the
    /// first call here parses them into the map (once: later calls return the same map).
    #[must_use]
    pub fn info(&self) -> Option<&Info> {
        match &self.parameters {
            None => self.info.as_ref(),
            Some(parameters) => Some(
                self.merged
                    .get_or_init(|| Box::new(merge_parameters(self.info.as_ref(), parameters))),
            ),
        }
    }

    /// Mutable access to the info, created empty if there was none.
    pub fn info_mut(&mut self) -> &mut Info {
        self.merge_parameters_in();
        self.info.get_or_insert_with(Info::new)
    }

    /// Moves recorded `_parameters` text into the info map, as its last key.
    fn merge_parameters_in(&mut self) {
        if let Some(parameters) = self.parameters.take() {
            let merged = match self.merged.take() {
                Some(merged) => *merged,
                None => merge_parameters(self.info.as_ref(), &parameters),
            };
            self.info = Some(merged);
        }
    }

    /// The info without `_parameters` when they are kept as text, and that text (the JSON of
    /// an object, to be written as the info's last key); otherwise the whole info and `None`.
    ///
    /// For writers that stream a subscore's JSON without building a `Value` of its info (the
    /// evaluation runner's line writer): [`SubScore::info`] gives the merged info instead.
    #[must_use]
    pub fn info_parts(&self) -> (Option<&Info>, Option<&[u8]>) {
        (self.info.as_ref(), self.parameters.as_deref())
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
            parameters: None,
            merged: OnceLock::new(),
        }
    }

    /// As [`from_valid_parts`](Self::from_valid_parts), with `_parameters` as the JSON text of
    /// an object (as `serde_json` writes it), the info's last key; `info` must not have a
    /// `_parameters` of its own.
    pub(crate) fn from_valid_parts_with_parameters(
        name: String,
        weight: f64,
        value: f64,
        children: Option<Vec<SubScore>>,
        info: Option<Info>,
        parameters: Vec<u8>,
    ) -> Self {
        debug_assert!(
            info.as_ref()
                .is_none_or(|info| !info.contains_key(crate::params::PARAMETERS_KEY))
        );
        SubScore {
            parameters: Some(parameters),
            ..SubScore::from_valid_parts(name, weight, value, children, info)
        }
    }

    /// Takes the info and the children out, leaving none.
    pub(crate) fn take_parts(&mut self) -> (Option<Info>, Option<Vec<SubScore>>) {
        self.merge_parameters_in();
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

/// The subscore at `path` among `subscores` (see [`EvaluationResult::find`]).
fn find_in<I>(mut subscores: &[SubScore], path: I) -> Option<&SubScore>
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    let mut found = None;
    for name in path {
        let sub = subscores.iter().find(|sub| sub.name() == name.as_ref())?;
        subscores = sub.children().unwrap_or_default();
        found = Some(sub);
    }
    found
}

impl SubScore {
    /// The descendant at `path`: a child's name, then its child's name, and so on (see
    /// [`EvaluationResult::find`]). An empty path finds nothing.
    ///
    /// ```
    /// use grader_core::{SubScore, any};
    ///
    /// let either = any("either", [SubScore::new("a", 0.0)?, SubScore::new("b", 1.0)?])
    ///     .grade(1.0)
    ///     .now()?;
    /// assert_eq!(either.find(["b"]).map(SubScore::value), Some(1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn find<I>(&self, path: I) -> Option<&SubScore>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        find_in(self.children().unwrap_or_default(), path)
    }

    /// The subscore as JSON without its `info`, at any depth: `name`, `weight`, `value` and
    /// `children` (`null` or the children's summaries), exactly as the reference's
    /// `SubScore.to_summary()` gives it. This is the breakdown a platform keeps once the
    /// details (a command's output, a judge's reasons) have gone to the trace.
    ///
    /// ```
    /// use grader_core::{Info, SubScore};
    ///
    /// let mut info = Info::new();
    /// info.insert("stdout".into(), "a lot of output".into());
    /// let tests = SubScore::new("tests", 1.0)?.with_info(info);
    /// assert_eq!(
    ///     tests.to_summary(),
    ///     serde_json::json!({"name": "tests", "weight": 1.0, "value": 1.0, "children": null}),
    /// );
    /// # Ok::<(), grader_core::ScoreError>(())
    /// ```
    #[must_use]
    pub fn to_summary(&self) -> Value {
        let mut object = Info::new();
        object.insert("name".into(), self.name.clone().into());
        object.insert("weight".into(), self.weight.into());
        object.insert("value".into(), self.value.into());
        object.insert(
            "children".into(),
            self.children.as_ref().map_or(Value::Null, |children| {
                Value::Array(children.iter().map(SubScore::to_summary).collect())
            }),
        );
        Value::Object(object)
    }
}

/// The JSON names of [`EvaluationResult`]'s own fields, in the order they are written.
const RESULT_FIELDS: [&str; 6] = ["reward", "done", "content", "info", "isError", "subscores"];

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

/// The fields of an [`EvaluationResult`] that it does not know, in the order they came, each as
/// its exact JSON text (whitespace outside strings removed).
///
/// Keeping the text rather than a [`Value`] is what keeps, say, a 30-digit integer exact:
/// `serde_json` reads a number that does not fit 64 bits as a float. [`get`](Self::get) parses a
/// field into a [`Value`] (with that loss) for convenience; [`get_raw`](Self::get_raw) gives the
/// text.
///
/// The exact text is kept when the result is read with `serde_json` directly
/// (`from_str`, `from_slice`, `from_reader`, `from_value`). Where serde buffers the input first
/// (an `EvaluationResult` inside a `#[serde(flatten)]` field or an untagged enum), each unknown
/// field still parses, but goes through a [`Value`] on the way.
///
/// ```
/// use grader_core::EvaluationResult;
///
/// let mut result = EvaluationResult::default();
/// result.extra.insert("trace_id", "abc")?;
/// result.extra.insert("attempt", 2)?;
/// assert_eq!(result.extra.get("attempt"), Some(serde_json::json!(2)));
/// assert_eq!(result.extra.keys().collect::<Vec<_>>(), ["trace_id", "attempt"]);
/// assert!(result.extra.insert("reward", 1.0).is_err()); // a field of its own
/// # Ok::<(), grader_core::score::ExtraError>(())
/// ```
#[derive(Clone, Default)]
pub struct Extra {
    fields: indexmap::IndexMap<String, Box<RawValue>>,
}

/// A field that cannot be added to [`Extra`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExtraError {
    /// The key is one of [`EvaluationResult`]'s own fields (`reward`, `isError`, …): set that
    /// field instead, or the JSON written would have the key twice.
    #[error("`{key}` is a field of EvaluationResult itself, not an extra field")]
    KnownField {
        /// The key.
        key: String,
    },
    /// The value has no JSON form.
    #[error("extra field `{key}`: {source}")]
    Json {
        /// The key.
        key: String,
        /// Why it could not be serialized.
        #[source]
        source: serde_json::Error,
    },
}

impl Extra {
    /// No fields.
    #[must_use]
    pub fn new() -> Self {
        Extra::default()
    }

    /// How many fields there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The field `key` parsed as a [`Value`] (an integer beyond 64 bits becomes a float; see
    /// [`get_raw`](Self::get_raw) for the exact text).
    #[must_use]
    pub fn get(&self, key: &str) -> Option<Value> {
        serde_json::from_str(self.fields.get(key)?.get()).ok()
    }

    /// The field `key` as its exact JSON text.
    #[must_use]
    pub fn get_raw(&self, key: &str) -> Option<&RawValue> {
        self.fields.get(key).map(AsRef::as_ref)
    }

    /// Whether there is a field `key`.
    #[must_use]
    pub fn contains_key(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }

    /// Sets the field `key` to the JSON form of `value`, keeping its place if it was there.
    ///
    /// # Errors
    /// [`ExtraError::KnownField`] when `key` is one of [`EvaluationResult`]'s own fields;
    /// [`ExtraError::Json`] when `value` fails to serialize.
    pub fn insert<T: Serialize>(
        &mut self,
        key: impl Into<String>,
        value: T,
    ) -> Result<(), ExtraError> {
        let key = key.into();
        match serde_json::value::to_raw_value(&value) {
            Ok(raw) => self.insert_raw(key, raw),
            Err(source) => Err(ExtraError::Json { key, source }),
        }
    }

    /// Sets the field `key` to this JSON text, keeping its place if it was there.
    ///
    /// # Errors
    /// [`ExtraError::KnownField`] when `key` is one of [`EvaluationResult`]'s own fields.
    pub fn insert_raw(
        &mut self,
        key: impl Into<String>,
        raw: Box<RawValue>,
    ) -> Result<(), ExtraError> {
        let key = key.into();
        if RESULT_FIELDS.contains(&key.as_str()) {
            return Err(ExtraError::KnownField { key });
        }
        self.fields.insert(key, compact(raw));
        Ok(())
    }

    /// Removes the field `key`, keeping the others in order; returns its text if it was there.
    pub fn remove(&mut self, key: &str) -> Option<Box<RawValue>> {
        self.fields.shift_remove(key)
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.keys().map(String::as_str)
    }

    /// The fields, in order, each with its JSON text.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &RawValue)> {
        self.fields.iter().map(|(key, raw)| (key.as_str(), &**raw))
    }
}

impl PartialEq for Extra {
    /// The same keys with the same JSON text (in any order, as for [`Info`]).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .fields
                .iter()
                .all(|(key, raw)| other.fields.get(key).is_some_and(|o| o.get() == raw.get()))
    }
}

impl std::fmt::Debug for Extra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.fields.iter().map(|(key, raw)| (key, raw.get())))
            .finish()
    }
}

/// `raw` without whitespace outside strings (the JSON text is otherwise unchanged).
fn compact(raw: Box<RawValue>) -> Box<RawValue> {
    let text = raw.get();
    let mut in_string = false;
    let mut escaped = false;
    let has_space = text.bytes().any(|byte| {
        let space = !in_string && matches!(byte, b' ' | b'\t' | b'\n' | b'\r');
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
        } else if byte == b'"' {
            in_string = true;
        }
        space
    });
    if !has_space {
        return raw;
    }
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        out.push(c);
    }
    // Removing insignificant whitespace from valid JSON leaves valid JSON.
    RawValue::from_string(out).unwrap_or(raw)
}

/// Reads one value as raw JSON text. Directly from `serde_json` this is the exact text; from a
/// deserializer that buffered its input (serde's `flatten`, untagged enums), which cannot give
/// raw text, the value is read as a [`Value`] and written back out.
struct RawSeed;

impl<'de> serde::de::DeserializeSeed<'de> for RawSeed {
    type Value = Box<RawValue>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        let raw = Box::<RawValue>::deserialize(BufferedFallback(deserializer))?;
        Ok(compact(raw))
    }
}

/// Passes everything to the deserializer inside, except that when asked for `serde_json`'s raw
/// value by a deserializer that does not know it (it answers `visit_newtype_struct`), it reads a
/// [`Value`] and hands its text to the raw value's visitor as `serde_json` itself would.
struct BufferedFallback<D>(D);

impl<'de, D: serde::Deserializer<'de>> serde::Deserializer<'de> for BufferedFallback<D> {
    type Error = D::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(visitor)
    }

    fn deserialize_newtype_struct<V: serde::de::Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_newtype_struct(name, FallbackVisitor { name, visitor })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct FallbackVisitor<V> {
    name: &'static str,
    visitor: V,
}

impl<'de, V: serde::de::Visitor<'de>> serde::de::Visitor<'de> for FallbackVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.visitor.expecting(f)
    }

    /// `serde_json`'s own answer: the raw text, handed over as a one-entry map.
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(map)
    }

    /// A buffering deserializer's answer: the value itself.
    fn visit_newtype_struct<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<V::Value, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let entry = std::iter::once((self.name, value.to_string()));
        self.visitor
            .visit_map(serde::de::value::MapDeserializer::new(entry))
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
    use serde_json::json;

    #[test]
    fn every_non_object_is_refused_with_its_kind_and_value() {
        let cases = [
            (json!(null), "null"),
            (json!(true), "a boolean"),
            (json!(1.5), "a number"),
            (json!("text"), "a string"),
            (json!([1, {"a": 2}]), "an array"),
        ];
        for (value, expected) in cases {
            match info_from_value(value.clone()) {
                Err(InfoError::NotAnObject { kind, value: kept }) => {
                    assert_eq!((kind, &kept), (expected, &value));
                }
                other => panic!("{value}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_object_becomes_the_info_with_its_keys_in_order() {
        let info = info_from_value(json!({"z": 1, "a": [2], "m": {"n": null}})).expect("object");
        assert_eq!(info.keys().collect::<Vec<_>>(), ["z", "a", "m"]);
        assert_eq!(info["a"], json!([2]));
    }

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

#[cfg(test)]
mod parameters_tests {
    use super::*;
    use crate::grader::{PARAMETERS_KEY, package, package_recorded};
    use crate::params::ParametersWriter;
    use serde_json::json;

    fn parameters() -> Info {
        info_from_value(json!({
            "answer": "tab\t\"quoted\" é 😀",
            "tolerance": null,
            "nested": {"b": [1.5, {"c": "\u{1}"}], "a": {}},
        }))
        .expect("an object")
    }

    fn text(parameters: &Info) -> Vec<u8> {
        let mut writer = ParametersWriter::new();
        for (key, value) in parameters {
            writer.record_json(key, value);
        }
        writer.into_bytes()
    }

    /// The same outcome packaged with its parameters kept as text, and as a map.
    fn both(score: Score) -> (SubScore, SubScore) {
        let raw = package_recorded("check".into(), 0.5, text(&parameters()), Ok(score.clone()))
            .expect("valid");
        let map = package("check".into(), 0.5, parameters(), Ok(score)).expect("valid");
        (raw, map)
    }

    fn scores() -> Vec<Score> {
        let mut info = Info::new();
        info.insert("why".into(), "close".into());
        info.insert("z".into(), json!([1]));
        vec![
            Score::new(1.0),
            Score::new(0.25).with_info(info),
            Score::new(0.0).with_info(Info::new()),
            Score {
                children: Some(vec![SubScore::new("child", 1.0).expect("valid")]),
                ..Score::new(0.5)
            },
        ]
    }

    #[test]
    fn parameters_kept_as_text_look_the_same_as_a_map() {
        for score in scores() {
            let (raw, map) = both(score);
            assert!(raw.parameters.is_some() && map.parameters.is_none());
            assert_eq!(raw.info(), map.info());
            let info = raw.info().expect("info");
            assert_eq!(
                info.keys().next_back().map(String::as_str),
                Some(PARAMETERS_KEY)
            );
            assert_eq!(info[PARAMETERS_KEY], Value::Object(parameters()));
            assert_eq!(raw, map);
            assert_eq!(map, raw);
            assert_eq!(raw.clone(), map);
            assert_eq!(format!("{raw:?}"), format!("{map:?}"));
            assert_eq!(format!("{raw:#?}"), format!("{map:#?}"));
            assert_eq!(raw.to_string(), map.to_string());
            assert_eq!(raw.to_summary(), map.to_summary());
            let json = serde_json::to_string(&raw).expect("serializes");
            assert_eq!(json, serde_json::to_string(&map).expect("serializes"));
            assert_eq!(
                serde_json::to_string_pretty(&raw).expect("serializes"),
                serde_json::to_string_pretty(&map).expect("serializes")
            );
            assert_eq!(
                serde_json::to_value(&raw).expect("serializes"),
                serde_json::to_value(&map).expect("serializes")
            );
            let back: SubScore = serde_json::from_str(&json).expect("parses");
            assert_eq!(back, raw);
            assert_eq!(Score::from(raw), Score::from(map));
        }
    }

    #[test]
    fn changing_the_info_works_as_on_a_map() {
        for score in scores() {
            let (mut raw, mut map) = both(score);
            let _ = raw.info();
            raw.info_mut().insert("after".into(), json!(1));
            map.info_mut().insert("after".into(), json!(1));
            assert_eq!(raw.info(), map.info());
            assert_eq!(
                serde_json::to_string(&raw).expect("serializes"),
                serde_json::to_string(&map).expect("serializes")
            );
            let (raw, _) = both(Score::new(1.0));
            let replaced = raw.with_info(Info::new());
            assert_eq!(replaced.info(), Some(&Info::new()));
            assert_eq!(
                replaced,
                SubScore::new("check", 1.0)
                    .and_then(|s| s.with_weight(0.5))
                    .expect("valid")
                    .with_info(Info::new())
            );
        }
    }

    #[test]
    fn different_parameters_are_not_equal() {
        let (raw, _) = both(Score::new(1.0));
        let mut other = parameters();
        other.insert("answer".into(), "else".into());
        let different =
            package_recorded("check".into(), 0.5, text(&other), Ok(Score::new(1.0))).expect("ok");
        assert_ne!(raw, different);
        // The same object in another key order is equal, as maps are.
        let mut reordered = Info::new();
        for (key, value) in parameters().into_iter().rev() {
            reordered.insert(key, value);
        }
        let reordered =
            package_recorded("check".into(), 0.5, text(&reordered), Ok(Score::new(1.0)))
                .expect("ok");
        assert_eq!(raw, reordered);
    }

    #[test]
    fn a_score_with_parameters_of_its_own_has_them_replaced_in_place() {
        let mut info = Info::new();
        info.insert(PARAMETERS_KEY.into(), json!("old"));
        info.insert("after".into(), json!(2));
        let (raw, map) = both(Score::new(1.0).with_info(info));
        assert_eq!(raw.info(), map.info());
        let keys: Vec<&String> = raw.info().expect("info").keys().collect();
        assert_eq!(keys, [PARAMETERS_KEY, "after"]);
    }

    #[test]
    fn a_failure_carries_the_parameters_as_a_map() {
        let error = package_recorded(
            "check".into(),
            f64::NAN,
            text(&parameters()),
            Ok(Score::new(1.0)),
        )
        .expect_err("the weight is not finite");
        assert_eq!(*error.parameters, parameters());
        let error = package_recorded(
            "check".into(),
            1.0,
            text(&parameters()),
            Ok(Score::new(2.0)),
        )
        .expect_err("the value is out of range");
        assert_eq!(*error.parameters, parameters());
    }
}
