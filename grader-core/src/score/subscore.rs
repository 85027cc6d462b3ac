//! [`SubScore`], one node of a grade's breakdown, with its JSON and its recorded
//! `_parameters` kept as text; and [`Score`], what a scoring computation produces before it is
//! named and weighted into one.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ScoreError;

use super::info::Info;

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

/// The subscore at `path` among `subscores` (see [`EvaluationResult::find`]).
///
/// [`EvaluationResult::find`]: super::EvaluationResult::find
pub(super) fn find_in<I>(mut subscores: &[SubScore], path: I) -> Option<&SubScore>
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
    ///
    /// [`EvaluationResult::find`]: super::EvaluationResult::find
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

#[cfg(test)]
mod parameters_tests {
    use super::*;
    use crate::grader::{PARAMETERS_KEY, package, package_recorded};
    use crate::params::ParametersWriter;
    use crate::score::info_from_value;
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
