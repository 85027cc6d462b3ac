//! Templates: an async function of typed args and a [`Session`] that prompts once and returns
//! what becomes the grade, registered under an id with its manifest entry.
//!
//! The args schema in the manifest is written as the reference's `_args_json_schema` writes
//! it: no title, `additionalProperties: false` (unless the args type takes any extra key), each
//! property titled as pydantic titles it (`repo_url` → `Repo Url`; a reference to a nested
//! type untitled, the nested type titled with its name in `$defs`), and an optional argument
//! defaulting to null. Where it differs:
//! schemars' numeric formats (`int64`, `double`, …) are dropped, as pydantic writes none, but
//! bounds schemars derives from the type (`minimum: 0` for unsigned integers) are kept, and
//! optional fields are written the schemars way (`"type": ["string", "null"]`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::grade::{GradeError, IntoGrade};
use crate::pyfmt::py_str_repr;
use crate::session::Session;
use crate::state::{FromRef, State};

/// The future of one running task: it resolves with the grade frame.
pub(crate) type TaskFuture =
    Pin<Box<dyn Future<Output = Result<Map<String, Value>, GradeError>> + Send>>;

type StartFn = dyn Fn(Map<String, Value>, Session) -> Result<TaskFuture, String> + Send + Sync;

/// The args of a template that takes none.
///
/// ```
/// use grader_env::{NoArgs, Session, Template};
///
/// let hello = Template::new("hello", |_: NoArgs, session: Session| async move {
///     let answer = session.prompt("Say hello.").await?;
///     Ok::<_, grader_env::PromptError>(if answer == "hello" { 1.0 } else { 0.0 })
/// });
/// assert_eq!(hello.manifest()["args"]["additionalProperties"], false);
/// ```
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// One registered template.
///
/// ```
/// use grader_env::{Session, Template};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Args {
///     word: String,
/// }
///
/// let echo = Template::new("echo", |args: Args, session: Session| async move {
///     let answer = session.prompt(format!("Repeat {}", args.word)).await?;
///     Ok::<_, grader_env::PromptError>(answer == args.word.as_str())
/// })
/// .description("Repeat a word.");
/// let manifest = echo.manifest();
/// assert_eq!(manifest["id"], "echo");
/// assert_eq!(manifest["args"]["required"], serde_json::json!(["word"]));
/// assert_eq!(manifest["args"]["properties"]["word"]["title"], "Word");
/// ```
#[derive(Clone)]
pub struct Template {
    parts: Parts,
    start: Arc<StartFn>,
}

/// A template that takes the environment's state (a [`State<T>`] parameter): register it with
/// [`Environment::template`](crate::Environment::template) on an environment whose state
/// gives a `T` ([`FromRef`]), which makes it a [`Template`]. Made by
/// [`Template::with_state`], or by `#[template]` on a function with a `State<T>` parameter.
///
/// ```
/// use grader_env::{Environment, NoArgs, Session, State, Template};
///
/// let ask = Template::with_state("ask", |_: NoArgs, State(question): State<String>, session: Session| async move {
///     let answer = session.prompt(question).await?;
///     Ok::<_, grader_env::PromptError>(answer == "42")
/// });
/// assert_eq!(ask.manifest()["id"], "ask");
/// let env = Environment::new("quiz").with_state("What is 6 × 7?".to_owned()).template(ask)?;
/// # Ok::<(), grader_env::EnvironmentError>(())
/// ```
pub struct StatefulTemplate<T> {
    parts: Parts,
    start: Arc<StatefulStartFn<T>>,
}

type StatefulStartFn<T> =
    dyn Fn(Map<String, Value>, Session, State<T>) -> Result<TaskFuture, String> + Send + Sync;

impl<T> Clone for StatefulTemplate<T> {
    fn clone(&self) -> Self {
        StatefulTemplate {
            parts: self.parts.clone(),
            start: Arc::clone(&self.start),
        }
    }
}

/// What every template has: its manifest entry.
#[derive(Clone)]
struct Parts {
    id: String,
    description: String,
    args: Value,
    input: Option<Value>,
    returns: Option<Value>,
}

impl Parts {
    fn new<A: JsonSchema>(id: String) -> Self {
        Parts {
            id,
            description: String::new(),
            args: hud_args_schema(
                serde_json::to_value(schemars::schema_for!(A)).unwrap_or_default(),
            ),
            input: None,
            returns: None,
        }
    }

    fn manifest(&self) -> Value {
        let mut entry = Map::new();
        entry.insert("id".to_owned(), Value::from(self.id.clone()));
        entry.insert(
            "description".to_owned(),
            Value::from(self.description.clone()),
        );
        entry.insert("args".to_owned(), self.args.clone());
        if let Some(input) = &self.input {
            entry.insert("input".to_owned(), input.clone());
        }
        if let Some(returns) = &self.returns {
            entry.insert("returns".to_owned(), returns.clone());
        }
        Value::Object(entry)
    }
}

impl std::fmt::Debug for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Template")
            .field("id", &self.parts.id)
            .field("description", &self.parts.description)
            .finish_non_exhaustive()
    }
}

impl<T> std::fmt::Debug for StatefulTemplate<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatefulTemplate")
            .field("id", &self.parts.id)
            .field("description", &self.parts.description)
            .finish_non_exhaustive()
    }
}

/// The builder methods and accessors both kinds of template have.
macro_rules! manifest_methods {
    () => {
        /// Sets the description shown in the manifest.
        #[must_use]
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.parts.description = description.into();
            self
        }

        /// Declares the type the agent is given as input: its schema goes in the manifest's
        /// `input`.
        #[must_use]
        pub fn input<I: JsonSchema>(mut self) -> Self {
            self.parts.input = Some(plain_schema::<I>());
            self
        }

        /// Declares the type the agent must answer with: its schema goes in the manifest's
        /// `returns`. Read the answer with [`Session::prompt_as`].
        #[must_use]
        pub fn returns<R: JsonSchema>(mut self) -> Self {
            self.parts.returns = Some(plain_schema::<R>());
            self
        }

        /// The template's id.
        #[must_use]
        pub fn id(&self) -> &str {
            &self.parts.id
        }

        /// The schema of the template's args, as the manifest carries it.
        #[must_use]
        pub fn args_schema(&self) -> &Value {
            &self.parts.args
        }

        /// The manifest entry `tasks.list` sends: `id`, `description`, `args`, and `input`
        /// and `returns` when declared.
        #[must_use]
        pub fn manifest(&self) -> Value {
            self.parts.manifest()
        }
    };
}

/// The future of one task, from the function's parsed args.
fn start_with<A: DeserializeOwned>(
    raw: Map<String, Value>,
    run: impl FnOnce(A) -> TaskFuture,
) -> Result<TaskFuture, String> {
    let parsed: A = serde_path_to_error::deserialize(Value::Object(raw))
        .map_err(|error| argument_error(&error))?;
    Ok(run(parsed))
}

impl Template {
    /// A template with this id running `function` on args of type `A` (parsed with serde,
    /// described by schemars) and the task's [`Session`].
    pub fn new<A, F, Fut, R>(id: impl Into<String>, function: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, Session) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoGrade + 'static,
    {
        let start =
            move |raw: Map<String, Value>, session: Session| -> Result<TaskFuture, String> {
                start_with(raw, |parsed: A| {
                    let future = function(parsed, session);
                    Box::pin(async move { future.await.into_grade() }) as TaskFuture
                })
            };
        Template {
            parts: Parts::new::<A>(id.into()),
            start: Arc::new(start),
        }
    }

    /// A template with this id running `function` on args of type `A`, the environment's
    /// state (or the part of it `T` names, see [`FromRef`]) and the task's [`Session`]:
    /// register it on an environment given its state with
    /// [`Environment::with_state`](crate::Environment::with_state). A closure can capture
    /// what it needs instead; this is for functions, and is what `#[template]` makes of one
    /// with a `State<T>` parameter.
    pub fn with_state<T, A, F, Fut, R>(id: impl Into<String>, function: F) -> StatefulTemplate<T>
    where
        T: Send + 'static,
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, State<T>, Session) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoGrade + 'static,
    {
        let start = move |raw: Map<String, Value>,
                          session: Session,
                          state: State<T>|
              -> Result<TaskFuture, String> {
            start_with(raw, |parsed: A| {
                let future = function(parsed, state, session);
                Box::pin(async move { future.await.into_grade() }) as TaskFuture
            })
        };
        StatefulTemplate {
            parts: Parts::new::<A>(id.into()),
            start: Arc::new(start),
        }
    }

    manifest_methods!();

    /// Checks `args` as the reference binds them (a missing required argument, then an
    /// unexpected one, with Python's messages), parses them, and builds the task's future.
    /// Nothing of the template runs before this succeeds.
    pub(crate) fn begin(
        &self,
        args: Map<String, Value>,
        session: Session,
    ) -> Result<TaskFuture, String> {
        let bad = |reason: String| {
            let mut keys: Vec<&String> = args.keys().collect();
            keys.sort();
            let keys: Vec<String> = keys.iter().map(|k| py_str_repr(k)).collect();
            format!(
                "task {}: bad args [{}]: {reason}",
                py_str_repr(&self.parts.id),
                keys.join(", ")
            )
        };
        let args_schema = &self.parts.args;
        let properties = args_schema.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = args_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for name in properties.into_iter().flat_map(|p| p.keys()) {
            if required.contains(&name.as_str()) && !args.contains_key(name) {
                return Err(bad(format!(
                    "missing a required argument: {}",
                    py_str_repr(name)
                )));
            }
        }
        if args_schema.get("additionalProperties") == Some(&Value::Bool(false))
            && let Some(extra) = args
                .keys()
                .find(|k| !properties.is_some_and(|p| p.contains_key(k.as_str())))
        {
            return Err(bad(format!(
                "got an unexpected keyword argument {}",
                py_str_repr(extra)
            )));
        }
        let session_args = args.clone();
        (self.start)(session_args, session).map_err(bad)
    }
}

impl<T> StatefulTemplate<T> {
    manifest_methods!();

    /// The template bound to `state`: each task gets a clone of it.
    #[must_use]
    pub fn bind(self, state: T) -> Template
    where
        T: Clone + Send + Sync + 'static,
    {
        let StatefulTemplate { parts, start } = self;
        Template {
            parts,
            start: Arc::new(move |raw, session| start(raw, session, State(state.clone()))),
        }
    }
}

/// What [`Environment::template`](crate::Environment::template) registers on an environment
/// whose state is `S`: a [`Template`], or a [`StatefulTemplate<T>`] whose `T` the state gives
/// ([`FromRef<S>`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be registered on an environment whose state is `{S}`",
    note = "a template that takes `State<T>` needs an environment whose state gives a `T`: \
            `Environment::new(…).with_state(value)` before registering it"
)]
pub trait IntoTemplate<S> {
    /// The template, bound to `state` when it takes it.
    fn into_template(self, state: &S) -> Template;
}

impl<S> IntoTemplate<S> for Template {
    fn into_template(self, _: &S) -> Template {
        self
    }
}

impl<S, T> IntoTemplate<S> for StatefulTemplate<T>
where
    T: FromRef<S> + Clone + Send + Sync + 'static,
{
    fn into_template(self, state: &S) -> Template {
        self.bind(T::from_ref(state))
    }
}

/// serde's message for args that did not parse, naming the argument (and the place inside
/// it) where parsing failed: `argument 'n': invalid type: string "three", expected u32`.
fn argument_error(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = error.path().to_string();
    if path == "." {
        error.inner().to_string()
    } else {
        format!("argument {}: {}", py_str_repr(&path), error.inner())
    }
}

fn plain_schema<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    if let Value::Object(map) = &mut schema {
        map.shift_remove("$schema");
        // schemars names every schema (`Array_of_int64`); pydantic titles only models.
        if map.get("type").and_then(Value::as_str) != Some("object") {
            map.shift_remove("title");
        }
    }
    strip_formats(&mut schema);
    schema
}

/// The reference's `_args_json_schema` shape for a schemars schema of an args struct.
pub(crate) fn hud_args_schema(mut schema: Value) -> Value {
    strip_formats(&mut schema);
    let Value::Object(map) = &mut schema else {
        return schema;
    };
    map.shift_remove("$schema");
    map.shift_remove("title");
    // The args model is built from the parameters: the type's own doc comment is not in it.
    map.shift_remove("description");
    if !map.contains_key("properties") {
        map.insert("properties".to_owned(), Value::Object(Map::new()));
    }
    title_properties(map);
    default_nulls(map);
    if let Some(Value::Object(defs)) = map.get_mut("$defs") {
        for (name, definition) in defs.iter_mut() {
            if let Value::Object(definition) = definition {
                if definition.get("type").and_then(Value::as_str) == Some("object") {
                    definition
                        .entry("title")
                        .or_insert_with(|| Value::from(name.clone()));
                }
                title_properties(definition);
            }
        }
    }
    map.entry("type").or_insert_with(|| Value::from("object"));
    let additional = !matches!(
        map.get("additionalProperties"),
        None | Some(Value::Bool(false))
    );
    map.shift_remove("additionalProperties");
    map.insert("additionalProperties".to_owned(), Value::Bool(additional));
    schema
}

/// Titles each property as pydantic does: its name in title case, except a property that is
/// a reference to a model (alone or as an option), which pydantic leaves untitled.
fn title_properties(schema: &mut Map<String, Value>) {
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        let Value::Object(property) = property else {
            continue;
        };
        let refers = |value: &Value| value.get("$ref").is_some();
        let is_reference = refers(&Value::Object(property.clone()))
            || ["anyOf", "oneOf"].iter().any(|key| {
                property
                    .get(*key)
                    .and_then(Value::as_array)
                    .is_some_and(|items| items.iter().any(refers))
            });
        if !is_reference && !property.contains_key("title") {
            property.insert("title".to_owned(), Value::from(pydantic_title(name)));
        }
    }
}

/// An optional argument that can be null and has no default defaults to null, as serde reads
/// a missing `Option` and as pydantic writes a parameter defaulting to `None`.
fn default_nulls(schema: &mut Map<String, Value>) {
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        let Value::Object(property) = property else {
            continue;
        };
        let null = |value: &Value| {
            value.get("type").is_some_and(|t| {
                t == "null"
                    || t.as_array()
                        .is_some_and(|types| types.iter().any(|t| t == "null"))
            })
        };
        let nullable = null(&Value::Object(property.clone()))
            || property
                .get("anyOf")
                .and_then(Value::as_array)
                .is_some_and(|items| items.iter().any(null));
        if nullable && !required.contains(name) && !property.contains_key("default") {
            property.insert("default".to_owned(), Value::Null);
        }
    }
}

/// Drops schemars' numeric `format`s (`int64`, `uint32`, `double`, …), which pydantic never
/// writes and JSON Schema does not define.
fn strip_formats(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let numeric = map.get("format").and_then(Value::as_str).is_some_and(|f| {
                matches!(f, "double" | "float" | "int" | "uint")
                    || f.strip_prefix("int")
                        .or_else(|| f.strip_prefix("uint"))
                        .is_some_and(|bits| {
                            !bits.is_empty() && bits.bytes().all(|b| b.is_ascii_digit())
                        })
            });
            if numeric {
                map.shift_remove("format");
            }
            for value in map.values_mut() {
                strip_formats(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_formats),
        _ => {}
    }
}

/// Pydantic's default field title: Python's `str.title()` with `_` turned into spaces.
fn pydantic_title(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut previous_cased = false;
    for c in name.chars() {
        if c.is_alphabetic() {
            if previous_cased {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            previous_cased = true;
        } else {
            out.push(if c == '_' { ' ' } else { c });
            previous_cased = false;
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Limits {
        seconds: i64,
    }

    fn three() -> i64 {
        3
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        limits: Limits,
        #[serde(default)]
        opt: Option<Limits>,
        #[serde(default)]
        tags: Vec<String>,
        #[serde(default = "three")]
        u: i64,
    }

    /// pydantic's `_args_json_schema` for `async def f(limits: Limits, opt: Limits | None =
    /// None, tags: list[str] = [], u: int = 3)`, printed by hud 0.6.21.
    const PYDANTIC: &str = r##"{"$defs": {"Limits": {"properties": {"seconds": {"title": "Seconds", "type": "integer"}}, "required": ["seconds"], "title": "Limits", "type": "object"}}, "properties": {"limits": {"$ref": "#/$defs/Limits"}, "opt": {"anyOf": [{"$ref": "#/$defs/Limits"}, {"type": "null"}], "default": null}, "tags": {"default": [], "items": {"type": "string"}, "title": "Tags", "type": "array"}, "u": {"default": 3, "title": "U", "type": "integer"}}, "required": ["limits"], "type": "object", "additionalProperties": false}"##;

    #[test]
    fn nested_args_get_pydantic_s_schema() {
        let ours = hud_args_schema(serde_json::to_value(schemars::schema_for!(Nested)).unwrap());
        let theirs: Value = serde_json::from_str(PYDANTIC).unwrap();
        assert_eq!(ours, theirs, "{ours}");
    }

    #[test]
    fn titles_as_pydantic_writes_them() {
        assert_eq!(pydantic_title("repo_url"), "Repo Url");
        assert_eq!(pydantic_title("x1y"), "X1Y");
        assert_eq!(pydantic_title("difficulty"), "Difficulty");
    }
}
