//! Typed state for templates: what the environment holds once (a problem set loaded at start,
//! a client, a configuration) and every task's template receives, as axum's `State<T>`.
//!
//! [`Environment::with_state`](crate::Environment::with_state) gives the environment its
//! state, of any type `S: Clone + Send + Sync + 'static`; a template takes it as a parameter of
//! type [`State<T>`], where `T` is `S` itself or a part of it ([`FromRef`]). Whether the
//! environment's state gives what a template takes is checked when the template is
//! registered, at compile time: a template that takes `State<Problems>` does not compile into
//! an environment whose state gives no `Problems`.
//!
//! The state is cloned for each task (as axum clones it for each request): keep a large one
//! behind an `Arc`.
//!
//! ```
//! use std::sync::Arc;
//!
//! use grader_env::{Environment, Session, State, template};
//!
//! /// Loaded once, shared by every task.
//! struct Problems(Vec<(String, i64)>);
//!
//! /// Solve problem `n` of the set.
//! #[template(id = "solve")]
//! async fn solve(
//!     n: usize,
//!     State(problems): State<Arc<Problems>>,
//!     session: Session,
//! ) -> Result<f64, Box<dyn std::error::Error + Send + Sync>> {
//!     let (question, answer) = problems.0.get(n).ok_or("no such problem")?;
//!     let given = session.prompt(question.clone()).await?;
//!     Ok(f64::from(u8::from(given.as_str() == Some(answer.to_string().as_str()))))
//! }
//!
//! let problems = Arc::new(Problems(vec![("What is 6 × 7?".to_owned(), 42)]));
//! let env = Environment::new("arithmetic")
//!     .with_state(problems)
//!     .template(Solve::template())?;
//! assert_eq!(env.templates()[0].id(), "solve");
//! # Ok::<(), grader_env::EnvironmentError>(())
//! ```
//!
//! Registering it without the state is a compile error that says what to do:
//!
//! ```compile_fail
//! # use std::sync::Arc;
//! # use grader_env::{Environment, Session, State, template};
//! # struct Problems;
//! #[template]
//! async fn solve(State(problems): State<Arc<Problems>>, session: Session) -> f64 {
//!     0.0
//! }
//! let env = Environment::new("arithmetic").template(Solve::template());
//! ```

use std::ops::{Deref, DerefMut};

/// The environment's state, or a part of it, as a template's parameter: `State(problems):
/// State<Problems>`. See the [module](self).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct State<T>(pub T);

impl<T> Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for State<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// A part of the environment's state `S` that a template may take as `State<Self>`, as
/// axum's `FromRef`: every `T: Clone` is a part of itself; implement it for the parts of a
/// larger state.
///
/// ```
/// use grader_env::FromRef;
///
/// #[derive(Clone)]
/// struct Config {
///     problems: Vec<String>,
///     timeout_secs: u64,
/// }
///
/// #[derive(Clone)]
/// struct Problems(Vec<String>);
///
/// impl FromRef<Config> for Problems {
///     fn from_ref(config: &Config) -> Self {
///         Problems(config.problems.clone())
///     }
/// }
///
/// let config = Config { problems: vec!["2 + 2".to_owned()], timeout_secs: 60 };
/// assert_eq!(Problems::from_ref(&config).0, ["2 + 2"]);
/// assert_eq!(Config::from_ref(&config).timeout_secs, 60);
/// ```
#[diagnostic::on_unimplemented(
    message = "a template takes `State<{Self}>`, and the environment's state `{S}` gives no `{Self}`",
    label = "the template is registered here, on an environment whose state is `{S}`",
    note = "give the environment its state before registering the template: \
            `Environment::new(…).with_state(value)`; for a part of a larger state, implement \
            `FromRef<{S}>` for `{Self}`"
)]
pub trait FromRef<S> {
    /// The part of `state` a template takes.
    fn from_ref(state: &S) -> Self;
}

impl<T: Clone> FromRef<T> for T {
    fn from_ref(state: &T) -> Self {
        state.clone()
    }
}
