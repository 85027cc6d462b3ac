//! The `#[grader]` attribute macro and `#[derive(Grader)]`. Use them through `grader-core`, which
//! re-exports them.

mod args;
mod attribute;
mod capture;
mod derive;
mod expand;
mod fallback;
mod model;
mod template;
mod validate;

#[cfg(test)]
mod snapshots;

use proc_macro::TokenStream;

/// Turns a scoring function into a grader type: a struct whose fields are the function's
/// arguments, graded with `.grade(weight)`.
///
/// The function stays exactly as written and callable. Beside it, `#[grader]` generates a type
/// named in UpperCamelCase (`fn mentions_city` → `MentionsCity`) with one field per parameter,
/// documented by the function's doc comment. Building the value is the call, with every
/// argument named, so a misspelt, missing or extra argument is a compile error:
///
/// ```
/// use grader_core::grader;
///
/// /// Passes when the answer names the expected city.
/// #[grader]
/// pub fn mentions_city(answer: &str, city: &str) -> bool {
///     answer.contains(city)
/// }
///
/// let sub = MentionsCity { answer: "It is Paris.", city: "Paris" }.grade(0.5).now()?;
/// assert_eq!((sub.name(), sub.value(), sub.weight()), ("mentions_city", 1.0, 0.5));
/// assert_eq!(sub.info().unwrap()["_parameters"]["city"], "Paris");
/// assert!(mentions_city("still a function", "function"));
/// # Ok::<(), grader_core::GraderError>(())
/// ```
///
/// ```compile_fail
/// # use grader_core::grader;
/// # #[grader]
/// # fn mentions_city(answer: &str, city: &str) -> bool { answer.contains(city) }
/// // error[E0560]: struct `MentionsCity` has no field named `town`
/// let sub = MentionsCity { answer: "It is Paris.", town: "Paris" }.grade(0.5);
/// ```
///
/// # Grading
///
/// `grade(weight)` is the grading call of every grader: it returns a [`Grading`] that runs the
/// function and makes a [`SubScore`] named after the function (or the `name` option), with that
/// weight, the returned value, whatever info the function returned, and `_parameters`: every
/// argument, recorded before the function runs. Await the grading, or add it to a [`Gather`]
/// or a tree beside any other grader; a synchronous grader (a plain `fn`, which implements
/// [`SyncGrader`]) can also run at once with `.now()`, without a runtime. An `async` function's
/// future must be `Send` (see [`Grader`] for why).
///
/// ```
/// use grader_core::{Gather, grader};
///
/// #[grader]
/// async fn replied(answer: String) -> bool {
///     tokio::task::yield_now().await;
///     !answer.is_empty()
/// }
///
/// #[grader]
/// fn short(answer: &str, limit: usize) -> f64 {
///     if answer.len() <= limit { 1.0 } else { 0.0 }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let result = Gather::new()
///     .add(Replied { answer: "hi".into() }.grade(0.5))
///     .add(Short { answer: "hi", limit: 1 }.grade(0.5))
///     .await?;
/// assert_eq!(result.reward(), 0.5);
/// # Ok::<(), grader_core::GatherError>(())
/// # }).unwrap();
/// ```
///
/// # Return types
///
/// `f64`, `f32`, `bool` (1.0 or 0.0), `(f64, Info)`, [`SubScore`] (its value, info and
/// children are kept; the name and weight are the grade's), or `Result<T, E>` of one of those
/// with `E: Display`. An `Err` is a [`GraderError`] naming the grader, never a silent 0.0; so
/// is a NaN, an infinity or a value outside `[0, 1]`, never clamped:
///
/// ```
/// use grader_core::{Failure, grader};
///
/// #[grader]
/// fn parsed(answer: &str) -> Result<f64, std::num::ParseFloatError> {
///     answer.trim().parse()
/// }
///
/// let error = Parsed { answer: "lots" }.grade(1.0).now().unwrap_err();
/// assert_eq!(error.grader, "parsed");
/// assert_eq!(error.to_string(), "grader `parsed` failed: invalid float literal");
/// let error = Parsed { answer: "1.5" }.grade(1.0).now().unwrap_err();
/// assert!(matches!(error.failure, Failure::InvalidScore { value: 1.5 }));
/// ```
///
/// Any other return type is a compile error on the return type:
///
/// ```compile_fail
/// # use grader_core::grader;
/// #[grader]
/// fn verdict(answer: &str) -> String { // `String` is not a score a `#[grader]` function can return
///     answer.to_owned()
/// }
/// ```
///
/// # Parameters
///
/// Parameters may be owned or borrowed (`&str`, `&Path`, `&[T]`, `&mut T`), with explicit or
/// elided lifetimes (each elided one becomes a lifetime parameter of the type, named after
/// the parameter), generic with bounds and `where` clauses, `impl Trait` (a type parameter of
/// the type), or raw identifiers (`r#type`, recorded as `type`). They must be plain names:
/// destructure inside the body.
///
/// Each recorded argument whose type implements `serde::Serialize` is recorded as its JSON
/// (non-finite floats as `null`); any other becomes `"<Type: not serializable>"`, with the
/// type as declared, references and lifetimes stripped. Nothing is required of your types.
/// Generic and `impl Trait` parameters are recorded as JSON only when bounded by `Serialize`.
/// A value whose serialization fails at run time gets the placeholder; recording never fails
/// a grade.
///
/// ```
/// use grader_core::grader;
///
/// struct Client;
///
/// #[grader]
/// fn answered(client: &Client, questions: &[&str], retries: u32) -> bool {
///     let _ = client;
///     !questions.is_empty() && retries < 3
/// }
///
/// let sub = Answered { client: &Client, questions: &["why?"], retries: 1 }.grade(1.0).now()?;
/// assert_eq!(
///     sub.info().unwrap()["_parameters"],
///     serde_json::json!({
///         "client": "<Client: not serializable>",
///         "questions": ["why?"],
///         "retries": 1,
///     })
/// );
/// # Ok::<(), grader_core::GraderError>(())
/// ```
///
/// # Options
///
/// - `name = "…"`: the subscore's name (default: the function's name).
/// - `type = Name`: the grader type's name (default: the function's name in UpperCamelCase).
/// - `skip(param, …)`: fields that are not recorded in `_parameters` (secrets, large inputs).
/// - `crate = path`: where `grader_core` is, for code that reaches it through a re-export.
///
/// ```
/// use grader_core::grader;
///
/// #[grader(name = "api_answer", skip(api_key))]
/// fn api_answered(api_key: &str, answer: &str) -> bool {
///     !api_key.is_empty() && !answer.is_empty()
/// }
///
/// let sub = ApiAnswered { api_key: "sk-123", answer: "yes" }.grade(1.0).now()?;
/// assert_eq!(sub.name(), "api_answer");
/// assert_eq!(sub.info().unwrap()["_parameters"], serde_json::json!({"answer": "yes"}));
/// # Ok::<(), grader_core::GraderError>(())
/// ```
///
/// The `type` option is for a function whose type name is taken: `fn exact_match` beside an
/// imported `text::ExactMatch` (rustc reports ``the name `ExactMatch` is defined multiple
/// times`` on the function's name), or `fn result`, whose `Result` would shadow the prelude's
/// (refused, with the option to write):
///
/// ```
/// use grader_core::grader;
/// use grader_core::text::ExactMatch;
///
/// #[grader(type = ExactMatchGrader)]
/// fn exact_match(answer: &str) -> bool {
///     answer == "42"
/// }
///
/// let sub = ExactMatchGrader { answer: "42" }.grade(1.0).now()?;
/// assert_eq!(sub.name(), "exact_match");
/// # let _ = ExactMatch { answer: "42", expected: "42", normalize_text: true };
/// # Ok::<(), grader_core::GraderError>(())
/// ```
///
/// # Compile errors
///
/// Every problem is reported at once, on the token to change: the attribute on anything but a
/// function, a method taking `self`, a `const`, `unsafe` or `extern` function, a parameter that
/// is a pattern, a missing return type, an unknown or duplicate option, a `skip` of a
/// parameter that does not exist, a `name` that is empty or not a string literal, and a type
/// name that would shadow the prelude (`fn result` → `Result`; name it with `type`). The
/// function and a stub grader type are still emitted, so the code using them reports nothing
/// more.
///
/// [`SubScore`]: https://docs.rs/grader-core/latest/grader_core/struct.SubScore.html
/// [`Grader`]: https://docs.rs/grader-core/latest/grader_core/trait.Grader.html
/// [`Gather`]: https://docs.rs/grader-core/latest/grader_core/struct.Gather.html
/// [`GraderError`]: https://docs.rs/grader-core/latest/grader_core/struct.GraderError.html
/// [`Grading`]: https://docs.rs/grader-core/latest/grader_core/struct.Grading.html
/// [`SyncGrader`]: https://docs.rs/grader-core/latest/grader_core/trait.SyncGrader.html
#[proc_macro_attribute]
pub fn grader(args: TokenStream, input: TokenStream) -> TokenStream {
    attribute::grader(args.into(), input.into()).into()
}

/// Implements [`Grader`] for a struct whose fields are the grader's inputs: for graders that
/// hold state (a reference set, a client, compiled patterns, thresholds from a config), the
/// reference's `class MyGrader(Grader)` with its `compute_score`.
///
/// The struct names its scoring method with `#[grader(score = method)]`; the derive writes the
/// rest: the name (the struct's name in snake_case, `AnswerInSet` → `answer_in_set`, as
/// `#[grader]` uses the function's name) and the parameters, every field recorded by the same
/// capture as `#[grader]` (its JSON when its type implements `serde::Serialize`,
/// `"<Type: not serializable>"` otherwise), in field order.
///
/// ```
/// use std::collections::HashSet;
/// use grader_core::Grader;
///
/// /// Passes when the answer is one of the accepted ones, ignoring case.
/// #[derive(Grader)]
/// #[grader(score = check)]
/// struct AnswerInSet<'a> {
///     accepted: &'a HashSet<String>,
///     answer: &'a str,
/// }
///
/// impl AnswerInSet<'_> {
///     fn check(&self) -> bool {
///         self.accepted.contains(&self.answer.to_lowercase())
///     }
/// }
///
/// let accepted: HashSet<String> = ["paris".to_owned(), "lyon".to_owned()].into();
/// let sub = AnswerInSet { accepted: &accepted, answer: "Paris" }.grade(0.5).now()?;
/// assert_eq!((sub.name(), sub.value(), sub.weight()), ("answer_in_set", 1.0, 0.5));
/// assert_eq!(sub.info().unwrap()["_parameters"]["answer"], "Paris");
/// # Ok::<(), grader_core::GraderError>(())
/// ```
///
/// The derived grader grades like every other: `grade(weight)` returns a `Grading`, awaited,
/// added to a gather or a tree, or, when the score method is synchronous, run at once with
/// `.now()` (the derive implements `SyncGrader` too). Grading goes through the `Grader` trait,
/// so it is in scope wherever the derive is written with `use grader_core::Grader`.
///
/// # The score method
///
/// Any method of the struct that takes `self`, `&self` or `&mut self` and nothing else, and
/// returns what a `#[grader]` function may return (`f64`, `f32`, `bool`, `(f64, Info)`,
/// [`SubScore`], or a `Result<_, E: Display>` of one of those). An `Err` is a [`GraderError`]
/// naming the grader, never a silent 0.0.
///
/// An `async fn` is named with `async`: `#[grader(score = async method)]`. The derive sees the
/// struct, not the method, so it cannot tell on its own, and whether to implement `SyncGrader`
/// (so that `.now()` works) must be decided before the method's type is known. A mismatch
/// either way is a compile error on the method's name that says which to write. The future
/// of an `async` score method must be `Send`, as every grader's is (a generic struct may need
/// `T: Send + Sync` bounds for that).
///
/// ```
/// use grader_core::Grader;
///
/// #[derive(Grader)]
/// #[grader(score = async check, name = "replied")]
/// struct Reply {
///     answer: String,
/// }
///
/// impl Reply {
///     async fn check(self) -> Result<f64, std::io::Error> {
///         tokio::task::yield_now().await;
///         Ok(if self.answer.is_empty() { 0.0 } else { 1.0 })
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let sub = Reply { answer: "hi".into() }.grade(1.0).await?;
/// assert_eq!((sub.name(), sub.value()), ("replied", 1.0));
/// # Ok::<(), grader_core::GraderError>(())
/// # }).unwrap();
/// ```
///
/// ```compile_fail
/// # use grader_core::Grader;
/// #[derive(Grader)]
/// #[grader(score = check)] // `impl Future<Output = bool>` is not a score …: name it `async check`
/// struct Reply {
///     answer: String,
/// }
///
/// impl Reply {
///     async fn check(&self) -> bool {
///         !self.answer.is_empty()
///     }
/// }
/// ```
///
/// # Options
///
/// On the struct:
/// - `score = method` or `score = async method` (required): the method that scores.
/// - `name = "…"`: the subscore's name (default: the struct's name in snake_case).
/// - `skip(field, …)`: fields not recorded in `_parameters`.
/// - `crate = path`: where `grader_core` is, for code that reaches it through a re-export.
///
/// On a field, `#[grader(skip)]`: the field is not recorded. A skipped field appears nowhere
/// the grade goes: not in `_parameters`, the subscore's JSON, the report, or a
/// [`GraderError`].
///
/// ```
/// use grader_core::Grader;
///
/// #[derive(Grader)]
/// #[grader(score = check, name = "api_answer")]
/// struct ApiAnswered {
///     #[grader(skip)]
///     api_key: String,
///     answer: String,
/// }
///
/// impl ApiAnswered {
///     fn check(&self) -> bool {
///         !self.api_key.is_empty() && !self.answer.is_empty()
///     }
/// }
///
/// let grader = ApiAnswered { api_key: "sk-123".into(), answer: "yes".into() };
/// assert_eq!(grader.name(), "api_answer");
/// assert_eq!(grader.parameters(), serde_json::json!({"answer": "yes"}).as_object().unwrap().clone());
/// ```
///
/// Generic and lifetime parameters and `where` clauses are kept on the impl. A field whose type
/// is a type parameter is recorded as JSON only when the parameter is bounded by `Serialize`.
///
/// # Compile errors
///
/// Reported at once, on the token to change: an enum, a union or a tuple struct; a missing
/// `score`; an unknown or duplicate option; a `skip` of a field that does not exist, or of one
/// skipped twice; a `name` that is empty; a score method named like a method of the grader
/// traits (`score`, `name`, `grade`, …), which the call would not reach. The compiler reports,
/// on the method's name in `score = …`: a method that does not exist (with the names of
/// similar ones), one without a `self` receiver or with other parameters, and one whose return
/// type is not a score (or not a future of one, with `async`). On errors the `Grader` impl is
/// still emitted, as a stub, so code that uses the grader reports nothing more.
///
/// [`Grader`]: https://docs.rs/grader-core/latest/grader_core/trait.Grader.html
/// [`SubScore`]: https://docs.rs/grader-core/latest/grader_core/struct.SubScore.html
/// [`GraderError`]: https://docs.rs/grader-core/latest/grader_core/struct.GraderError.html
#[proc_macro_derive(Grader, attributes(grader))]
pub fn derive_grader(input: TokenStream) -> TokenStream {
    derive::derive(input.into()).into()
}

/// Turns an async function into a task template an environment serves: its parameters (all
/// but the last) become the fields of an args type, parsed with serde and described in the
/// manifest by schemars; its last parameter is the task's `Session`. Use it through
/// `grader-env`, which re-exports it.
///
/// Beside the function, `#[template]` generates the args type, named in UpperCamelCase
/// (`fn fix_tests` → `FixTests`), with `FixTests::template()`, the `Template` to register:
///
/// ```
/// use grader_env::{Environment, Session, template};
///
/// /// Repeat a word.
/// #[template(id = "echo")]
/// async fn echo(word: String, times: Option<u32>, session: Session) -> Result<f64, grader_env::PromptError> {
///     let times = times.unwrap_or(1) as usize;
///     let answer = session.prompt(format!("Say {word} {times} times")).await?;
///     Ok(if answer == word.repeat(times).as_str() { 1.0 } else { 0.0 })
/// }
///
/// let env = Environment::new("words").template(Echo::template())?;
/// let manifest = env.templates()[0].manifest();
/// assert_eq!(manifest["id"], "echo");
/// assert_eq!(manifest["description"], "Repeat a word.");
/// assert_eq!(manifest["args"]["required"], serde_json::json!(["word"]));
/// assert_eq!(manifest["args"]["additionalProperties"], false);
/// # Ok::<(), grader_env::EnvironmentError>(())
/// ```
///
/// # Options
///
/// - `id = "…"`: the task id (default: the function's name).
/// - `description = "…"`: the manifest's description (default: the doc comment).
/// - `input = Type`, `returns = Type`: the types the agent is given and answers with, whose
///   schemas go in the manifest; read a typed answer with `Session::prompt_as`.
/// - `crate = path`: where `grader_env` is, for code that reaches it through a re-export.
///
/// An `Option<T>` parameter is optional: a task that leaves it out gets `None`.
///
/// # State
///
/// A parameter of type `State<T>` (grader-env's, in any position before the session, with any
/// pattern, `State(problems)` included) is the environment's state, or the part of it `T`
/// names, not an argument of the task: `template()` then returns a `StatefulTemplate<T>`,
/// which registers only on an environment given a state that holds a `T`
/// (`Environment::with_state`), checked at compile time.
///
/// ```
/// use grader_env::{Environment, Session, State, template};
///
/// #[template]
/// async fn ask(
///     n: usize,
///     State(questions): State<Vec<String>>,
///     session: Session,
/// ) -> Result<f64, grader_env::PromptError> {
///     let answer = session.prompt(questions[n % questions.len()].clone()).await?;
///     Ok(if answer == "42" { 1.0 } else { 0.0 })
/// }
///
/// let env = Environment::new("quiz")
///     .with_state(vec!["What is 6 × 7?".to_owned()])
///     .template(Ask::template())?;
/// assert_eq!(env.templates()[0].args_schema()["required"], serde_json::json!(["n"]));
/// # Ok::<(), grader_env::EnvironmentError>(())
/// ```
///
/// # Describing and defaulting arguments
///
/// A parameter's doc comment, or `#[arg(description = "…")]`, is its `description` in the
/// manifest's schema; `#[arg(default = value)]` makes it optional with that value (the schema's
/// `default`, as hud's `Annotated[T, Field(description=…)]` and `= value` write them), and
/// `#[arg(default)]` with its type's `Default`. Both come off the function, which is emitted
/// otherwise as written.
///
/// ```
/// use grader_env::{Session, template};
///
/// #[template]
/// async fn run_tests(
///     /// The repository to check out.
///     repo: String,
///     #[arg(description = "Seconds the tests may take", default = 60)] timeout: u64,
///     #[arg(default)] flags: Vec<String>,
///     session: Session,
/// ) -> Result<f64, grader_env::PromptError> {
///     session.prompt(format!("Fix {repo} ({timeout} s, {flags:?})")).await?;
///     Ok(1.0)
/// }
///
/// let args = RunTests::template().args_schema().clone();
/// assert_eq!(args["properties"]["repo"]["description"], "The repository to check out.");
/// assert_eq!(args["properties"]["timeout"]["default"], 60);
/// assert_eq!(args["required"], serde_json::json!(["repo"]));
/// ```
///
/// # Compile errors
///
/// Reported at once, on the token to change: a function that is not `async`, a method, a
/// generic function, a last parameter that is not the `Session`, a parameter that is a pattern
/// or a borrowed type (`&str`, `impl Trait`, a lifetime), an unknown or duplicate option, an
/// empty `id`; an `#[arg]` that is not a list, is empty, has an unknown or duplicate option, a
/// `description` that is not a string or a `default` without a value, an argument described
/// twice (doc comment and `description`), an `#[arg]` or doc comment on the session or on the
/// state, and a second `State` parameter. Registering a template whose state the environment
/// does not give is the compiler's error, in grader-env's words. A
/// `default` of the wrong type is the compiler's type error, on the value. The compiler reports a return type that cannot become a grade (see
/// `IntoGrade`) and a parameter type serde cannot parse. On errors the function and a stub
/// args type are still emitted, so code that uses the template reports nothing more.
#[proc_macro_attribute]
pub fn template(args: TokenStream, input: TokenStream) -> TokenStream {
    template::template(args.into(), input.into()).into()
}
