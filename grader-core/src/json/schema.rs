//! JSON Schema: an answer that is JSON matching a schema, or a text holding a JSON object that
//! matches one (promptfoo's `is-json` and `contains-json` with a `value` schema), validated by
//! the `jsonschema` crate (feature `json-schema`).
//!
//! The draft is the schema's `$schema` (draft 4, 6, 7, 2019-09 or 2020-12), 2020-12 without
//! one, as Python's `jsonschema.validators.validator_for` picks it. `format` is an annotation,
//! not an assertion, as in Python's `jsonschema` without a format checker. A schema that is not
//! one (it fails its meta-schema, or nests deeper than [`MAX_SCHEMA_DEPTH`]) is
//! [`JsonError::InvalidSchema`], naming the grader. References are resolved inside the schema
//! and to the bundled meta-schemas only: nothing is fetched.

use std::fmt;
use std::ops::Range;

use serde::Serialize;
use serde_json::Value;

use super::bounds::{Cost, Estimate, Index, MAX_PAIRS, MAX_REGEX_STEPS, Past};
use super::{JsonError, MAX_DEPTH, json_objects, scan};

/// The deepest schema compiled (deeper is [`JsonError::InvalidSchema`]).
pub const MAX_SCHEMA_DEPTH: usize = 256;

/// The most mismatches one check reports (the verdict does not depend on it).
pub const MAX_MISMATCHES: usize = 20;

/// The most steps one match of a `pattern` may backtrack, by how many such matches one
/// validation may make: their sum stays within [`MAX_REGEX_STEPS`]. Past the last tier the
/// validation is refused.
const BACKTRACK_TIERS: [usize; 4] = [1_000_000, 100_000, 10_000, 1_000];

/// A draft of JSON Schema, to read a schema as whatever its `$schema` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum Draft {
    /// Draft 4.
    Draft4,
    /// Draft 6.
    Draft6,
    /// Draft 7.
    Draft7,
    /// Draft 2019-09.
    Draft201909,
    /// Draft 2020-12.
    Draft202012,
}

impl From<Draft> for jsonschema::Draft {
    fn from(draft: Draft) -> Self {
        match draft {
            Draft::Draft4 => Self::Draft4,
            Draft::Draft6 => Self::Draft6,
            Draft::Draft7 => Self::Draft7,
            Draft::Draft201909 => Self::Draft201909,
            Draft::Draft202012 => Self::Draft202012,
        }
    }
}

/// A compiled JSON Schema.
///
/// ```
/// use grader_core::json::JsonSchema;
/// use serde_json::json;
///
/// let schema = JsonSchema::new(&json!({"type": "object", "required": ["name"]}))?;
/// assert!(schema.is_valid(&json!({"name": "Ada"}))?);
/// let mismatches = schema.mismatches(&json!({"age": 36}))?;
/// assert_eq!(mismatches[0].keyword, "required");
/// assert_eq!(mismatches[0].instance_path, "");
/// # Ok::<(), grader_core::json::JsonError>(())
/// ```
pub struct JsonSchema {
    /// The schema, boxed so that the index's addresses of its parts stay valid.
    schema: Box<Value>,
    index: Index,
    draft: Option<Draft>,
    /// The validator whose patterns may backtrack `BACKTRACK_TIERS[i]` steps a match.
    validators: [std::sync::OnceLock<jsonschema::Validator>; 4],
}

impl fmt::Debug for JsonSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonSchema").finish_non_exhaustive()
    }
}

/// Why a JSON value does not match a schema: which keyword failed, at which place of the
/// value and of the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaMismatch {
    /// The keyword that failed (`type`, `required`, `minimum`, …).
    pub keyword: String,
    /// Where in the value, as a JSON Pointer (`""` for the whole value, `/items/0/name`).
    pub instance_path: String,
    /// Where in the schema, as a JSON Pointer (`/properties/items/type`).
    pub schema_path: String,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for SchemaMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.instance_path.is_empty() {
            "/"
        } else {
            &self.instance_path
        };
        write!(f, "at {at}: {} failed: {}", self.keyword, self.message)
    }
}

/// The verdict of a schema check on a text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaCheck {
    /// JSON that matches, at this byte range of the text.
    Match(Range<usize>),
    /// JSON that does not match, and why (for a search, the last object tried, as promptfoo
    /// reports it); at most [`MAX_MISMATCHES`].
    Mismatch(Vec<SchemaMismatch>),
    /// The text is not JSON, or holds no JSON object.
    NoJson,
}

impl SchemaCheck {
    /// Whether JSON matched.
    #[must_use]
    pub fn is_match(&self) -> bool {
        matches!(self, Self::Match(_))
    }
}

/// The depth of `value`, counted without recursion; stops counting past `limit`.
fn depth_over(value: &Value, limit: usize) -> Option<usize> {
    let mut stack = vec![(value, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        if depth > limit {
            return Some(depth);
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|child| (child, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|child| (child, depth + 1))),
            _ => {}
        }
    }
    None
}

impl JsonSchema {
    /// Compiles `schema`.
    ///
    /// ```
    /// use grader_core::json::{JsonError, JsonSchema};
    /// use serde_json::json;
    ///
    /// assert!(JsonSchema::new(&json!({"minimum": 1})).is_ok());
    /// assert!(matches!(
    ///     JsonSchema::new(&json!({"type": 12})),
    ///     Err(JsonError::InvalidSchema { grader: "json_schema", .. })
    /// ));
    /// ```
    ///
    /// # Errors
    /// [`JsonError::InvalidSchema`] when `schema` is not a valid schema of its draft, refers
    /// to a schema it does not hold, or nests deeper than [`MAX_SCHEMA_DEPTH`].
    pub fn new(schema: &Value) -> Result<Self, JsonError> {
        Self::compile("json_schema", schema, None)
    }

    /// Compiles `schema` as a schema of `draft`, whatever its `$schema` says (Python's
    /// `Draft7Validator(schema)` and its kin).
    ///
    /// ```
    /// use grader_core::json::{Draft, JsonSchema};
    /// use serde_json::json;
    ///
    /// // `items` as a list is draft 7's tuple validation, and no longer a keyword in 2020-12.
    /// let schema = json!({"items": [{"type": "string"}]});
    /// assert!(!JsonSchema::with_draft(&schema, Draft::Draft7)?.is_valid(&json!([1]))?);
    /// # Ok::<(), grader_core::json::JsonError>(())
    /// ```
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_draft(schema: &Value, draft: Draft) -> Result<Self, JsonError> {
        Self::compile("json_schema", schema, Some(draft))
    }

    pub(crate) fn compile(
        grader: &'static str,
        schema: &Value,
        draft: Option<Draft>,
    ) -> Result<Self, JsonError> {
        if let Some(depth) = depth_over(schema, MAX_SCHEMA_DEPTH) {
            return Err(JsonError::InvalidSchema {
                grader,
                reason: format!("nested {depth} deep, deeper than {MAX_SCHEMA_DEPTH}"),
            });
        }
        let validator = build(schema, draft, BACKTRACK_TIERS[0])
            .map_err(|reason| JsonError::InvalidSchema { grader, reason })?;
        let schema = Box::new(schema.clone());
        let index = Index::new(&schema);
        let compiled = Self {
            schema,
            index,
            draft,
            validators: Default::default(),
        };
        let _ = compiled.validators[0].set(validator);
        Ok(compiled)
    }

    /// What validating `value` may cost at most, counted without validating: the
    /// (subschema, part of the value) pairs the validator may visit, following references,
    /// and the matches of patterns that need a backtracking engine.
    ///
    /// ```
    /// use grader_core::json::JsonSchema;
    /// use serde_json::json;
    ///
    /// let schema = JsonSchema::new(&json!({"type": "array", "items": {"type": "integer"}}))?;
    /// assert_eq!(schema.cost(&json!([1, 2, 3]))?.pairs, 4);
    /// # Ok::<(), grader_core::json::JsonError>(())
    /// ```
    ///
    /// # Errors
    /// [`JsonError::ValidationTooLarge`] where the count passes
    /// [`MAX_PAIRS`] or references chain too deep.
    pub fn cost(&self, value: &Value) -> Result<Cost, JsonError> {
        self.cost_as("json_schema", value)
    }

    fn cost_as(&self, grader: &'static str, value: &Value) -> Result<Cost, JsonError> {
        Estimate::new(&self.schema, &self.index)
            .of(value)
            .map_err(|past| JsonError::ValidationTooLarge {
                grader,
                what: match past {
                    Past::Pairs => format!("more than {MAX_PAIRS} subschema checks"),
                    Past::Chain => "references chained too deep".to_owned(),
                },
            })
    }

    /// The validator for `value`: after counting what validating it may cost (SPEC D35),
    /// one whose patterns backtrack few enough steps a match that their sum stays bounded.
    fn validator(
        &self,
        grader: &'static str,
        value: &Value,
    ) -> Result<&jsonschema::Validator, JsonError> {
        let cost = self.cost_as(grader, value)?;
        let steps = |tier: usize| (BACKTRACK_TIERS[tier] as u64).saturating_mul(cost.backtracking);
        let Some(tier) = (0..BACKTRACK_TIERS.len()).find(|&t| steps(t) <= MAX_REGEX_STEPS) else {
            return Err(JsonError::ValidationTooLarge {
                grader,
                what: format!(
                    "{} matches of backtracking patterns, more than {} steps",
                    cost.backtracking, MAX_REGEX_STEPS
                ),
            });
        };
        if let Some(validator) = self.validators[tier].get() {
            return Ok(validator);
        }
        let built = build(&self.schema, self.draft, BACKTRACK_TIERS[tier])
            .map_err(|reason| JsonError::InvalidSchema { grader, reason })?;
        Ok(self.validators[tier].get_or_init(|| built))
    }

    /// Whether `value` matches.
    ///
    /// # Errors
    /// [`JsonError::ValidationTooLarge`] where validating `value` could visit more than
    /// [`MAX_PAIRS`] (subschema, part of the value) pairs, or make more
    /// matches of backtracking patterns than [`MAX_REGEX_STEPS`]
    /// allows at a thousand steps each.
    pub fn is_valid(&self, value: &Value) -> Result<bool, JsonError> {
        Ok(self.validator("json_schema", value)?.is_valid(value))
    }

    /// Why `value` does not match (empty when it does), at most [`MAX_MISMATCHES`].
    ///
    /// # Errors
    /// As [`is_valid`](Self::is_valid).
    pub fn mismatches(&self, value: &Value) -> Result<Vec<SchemaMismatch>, JsonError> {
        Ok(mismatches_of(self.validator("json_schema", value)?, value))
    }

    /// The verdict on one value found at `range`.
    fn check(
        &self,
        grader: &'static str,
        value: &Value,
        range: Range<usize>,
    ) -> Result<SchemaCheck, JsonError> {
        let validator = self.validator(grader, value)?;
        Ok(if validator.is_valid(value) {
            SchemaCheck::Match(range)
        } else {
            SchemaCheck::Mismatch(mismatches_of(validator, value))
        })
    }
}

/// Compiles `schema` with patterns that may backtrack `limit` steps a match.
fn build(
    schema: &Value,
    draft: Option<Draft>,
    limit: usize,
) -> Result<jsonschema::Validator, String> {
    let mut options = jsonschema::options();
    if let Some(draft) = draft {
        options = options.with_draft(draft.into());
    }
    options
        .should_validate_formats(false)
        .with_pattern_options(jsonschema::PatternOptions::fancy_regex().backtrack_limit(limit))
        .build(schema)
        .map_err(|error| describe(&error))
}

fn mismatches_of(validator: &jsonschema::Validator, value: &Value) -> Vec<SchemaMismatch> {
    validator
        .iter_errors(value)
        .take(MAX_MISMATCHES)
        .map(|error| SchemaMismatch {
            keyword: error.kind().keyword().to_owned(),
            instance_path: error.instance_path().as_str().to_owned(),
            schema_path: error.schema_path().as_str().to_owned(),
            message: error.to_string(),
        })
        .collect()
}

/// An error of the crate, with where in the schema it is.
fn describe(error: &jsonschema::ValidationError<'_>) -> String {
    let path = error.instance_path().as_str();
    if path.is_empty() {
        error.to_string()
    } else {
        format!("at {path}: {error}")
    }
}

/// `text[range]`, known to be JSON nested `depth` deep, as a value.
fn read(grader: &'static str, text: &str, depth: usize) -> Result<Value, JsonError> {
    if depth > MAX_DEPTH {
        return Err(JsonError::TooDeep {
            grader,
            depth,
            limit: MAX_DEPTH,
        });
    }
    serde_json::from_str(text).map_err(|e| JsonError::Unsupported {
        grader,
        reason: e.to_string(),
    })
}

/// Whether `text` is JSON matching `schema` (promptfoo's `is-json` with a schema).
///
/// ```
/// use grader_core::json::{JsonSchema, SchemaCheck, matches_schema};
/// use serde_json::json;
///
/// let schema = JsonSchema::new(&json!({
///     "type": "object",
///     "properties": {"age": {"type": "integer", "minimum": 0}},
/// }))?;
/// assert!(matches_schema(r#"{"age": 36}"#, &schema)?.is_match());
/// let SchemaCheck::Mismatch(why) = matches_schema(r#"{"age": -1}"#, &schema)? else {
///     unreachable!()
/// };
/// assert_eq!((why[0].keyword.as_str(), why[0].instance_path.as_str()), ("minimum", "/age"));
/// assert_eq!(matches_schema("{age: 36}", &schema)?, SchemaCheck::NoJson);
/// # Ok::<(), grader_core::json::JsonError>(())
/// ```
///
/// # Errors
/// As [`json_equals`](super::json_equals): [`JsonError::TooDeep`] past [`MAX_DEPTH`],
/// [`JsonError::Unsupported`] for JSON `serde_json` cannot hold.
pub fn matches_schema(text: &str, schema: &JsonSchema) -> Result<SchemaCheck, JsonError> {
    matches_schema_as("matches_schema", text, schema)
}

pub(crate) fn matches_schema_as(
    grader: &'static str,
    text: &str,
    schema: &JsonSchema,
) -> Result<SchemaCheck, JsonError> {
    let Some(depth) = scan::whole(text) else {
        return Ok(SchemaCheck::NoJson);
    };
    let value = read(grader, text, depth)?;
    schema.check(grader, &value, 0..text.len())
}

/// The first JSON object in `text` that matches `schema`, among those [`json_objects`] finds
/// (promptfoo's `contains-json` with a schema).
///
/// ```
/// use grader_core::json::{JsonSchema, SchemaCheck, first_schema_match};
/// use serde_json::json;
///
/// let schema = JsonSchema::new(&json!({"required": ["city"]}))?;
/// let text = r#"First {"name": "Ada"}, then {"city": "Paris"}."#;
/// let SchemaCheck::Match(range) = first_schema_match(text, &schema)? else { unreachable!() };
/// assert_eq!(&text[range], r#"{"city": "Paris"}"#);
/// assert!(!first_schema_match(r#"{"name": "Ada"}"#, &schema)?.is_match());
/// # Ok::<(), grader_core::json::JsonError>(())
/// ```
///
/// # Errors
/// As [`json_objects`], and as [`matches_schema`] for each object tried.
pub fn first_schema_match(text: &str, schema: &JsonSchema) -> Result<SchemaCheck, JsonError> {
    first_schema_match_as("first_schema_match", text, schema)
}

pub(crate) fn first_schema_match_as(
    grader: &'static str,
    text: &str,
    schema: &JsonSchema,
) -> Result<SchemaCheck, JsonError> {
    let mut verdict = SchemaCheck::NoJson;
    for range in json_objects(text).map_err(|error| match error {
        JsonError::TooMuchWork { length, limit, .. } => JsonError::TooMuchWork {
            grader,
            length,
            limit,
        },
        other => other,
    })? {
        let object = &text[range.clone()];
        let depth = scan::whole(object).unwrap_or(0);
        let value = read(grader, object, depth)?;
        verdict = schema.check(grader, &value, range)?;
        if verdict.is_match() {
            break;
        }
    }
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deep_schemas_are_refused_without_recursion() {
        let mut schema = json!(true);
        for _ in 0..100_000 {
            let mut map = serde_json::Map::new();
            map.insert("items".to_owned(), schema);
            schema = Value::Object(map);
        }
        let error = JsonSchema::new(&schema).expect_err("too deep");
        assert!(matches!(error, JsonError::InvalidSchema { .. }), "{error}");
        // serde_json drops a deep value recursively: take it apart by hand.
        let mut next = Some(schema);
        while let Some(Value::Object(mut map)) = next {
            next = map.remove("items");
        }
    }

    #[test]
    fn mismatches_name_keyword_and_paths() {
        let schema = JsonSchema::new(&json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "string"}}}
        }))
        .expect("valid");
        let why = schema
            .mismatches(&json!({"items": ["a", 2]}))
            .expect("small");
        assert_eq!(why.len(), 1);
        assert_eq!(why[0].keyword, "type");
        assert_eq!(why[0].instance_path, "/items/1");
        assert_eq!(why[0].schema_path, "/properties/items/items/type");
        assert_eq!(
            why[0].to_string(),
            "at /items/1: type failed: 2 is not of type \"string\""
        );
    }

    #[test]
    fn recursive_references_terminate() {
        let schema = JsonSchema::new(&json!({
            "$defs": {"node": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "$ref": "#/$defs/node"
        }))
        .expect("valid");
        assert!(schema.is_valid(&json!([[[]], []])).expect("small"));
        assert!(!schema.is_valid(&json!([[1]])).expect("small"));
        // References that loop without reading the value (Python raises RecursionError).
        for looping in [
            json!({"$ref": "#"}),
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
        ] {
            if let Ok(schema) = JsonSchema::new(&looping) {
                let _ = schema.is_valid(&json!([1]));
                let _ = schema.mismatches(&json!([1]));
            }
        }
    }
}
