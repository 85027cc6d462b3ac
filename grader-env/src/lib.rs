//! Environments for the HUD runtime: a Rust program that serves task templates over the
//! reference's control channel (hud 0.6.21), graded by `grader-core`.
//!
//! An [`Environment`] has a name, a version, [`Template`]s and [`Capability`] manifests, and
//! may hold state ([`Environment::with_state`]).
//! A template is an async function of typed args (and, when it takes it, the environment's
//! [`State`]) and a [`Session`]: it publishes a prompt with [`Session::prompt`], receives the
//! agent's answer, and returns what becomes the grade ([`IntoGrade`]: an `EvaluationResult`, a
//! `SubScore`, an `f64`, …).
//! [`Environment::serve`] binds `127.0.0.1` on a free port, prints `HUD_SERVE_PORT=<port>` and
//! speaks the protocol frame for frame as the reference's `hud/environment/server.py`:
//! newline-delimited JSON-RPC 2.0 (`hello`, `tasks.list`, `tasks.start`, `tasks.grade`,
//! `tasks.cancel`, `bye`, `tunnel.open`), the same codes and messages, the 16 MiB frame limit,
//! parking a started task when its connection drops.
//!
//! ```no_run
//! use grader_core::{EvaluationResult, Grade, SubScore};
//! use grader_env::{Environment, ServeConfig, Session, Template};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Args {
//!     /// The number to double.
//!     n: i64,
//! }
//!
//! async fn double(args: Args, session: Session) -> Result<EvaluationResult, Box<dyn std::error::Error + Send + Sync>> {
//!     let answer = session.prompt(format!("What is twice {}?", args.n)).await?;
//!     let right = answer.as_str().and_then(|a| a.trim().parse::<i64>().ok()) == Some(2 * args.n);
//!     Ok(Grade::from_subscores(vec![SubScore::new("correct", f64::from(u8::from(right)))?])?)
//! }
//!
//! #[tokio::main]
//! async fn main() -> std::process::ExitCode {
//!     let env = Environment::new("arithmetic")
//!         .template(Template::new("double", double).description("Double a number."))
//!         .expect("one template");
//!     match env.serve(&ServeConfig::default()).await {
//!         Ok(stopped) => stopped.exit_code(),
//!         Err(error) => {
//!             eprintln!("{error}");
//!             std::process::ExitCode::FAILURE
//!         }
//!     }
//! }
//! ```
//!
//! Where this crate differs from the reference, the item's docs say so.

pub mod capability;
pub mod environment;
pub mod frame;
pub mod grade;
mod pyfmt;
pub mod server;
pub mod session;
pub mod state;
pub mod template;
pub mod workspace;

pub use capability::{Capabilities, Capability};
pub use environment::{Environment, EnvironmentError};
pub use grade::{GradeError, IntoGrade};
pub use server::{
    Limits, PORT_ANNOUNCEMENT, ServeConfig, ServeError, Server, ServerStats, Stopped,
};
pub use session::{Answer, PromptError, Session};
pub use state::{FromRef, State};
pub use template::{IntoTemplate, NoArgs, StatefulTemplate, Template};

/// Turns an async function into a [`Template`] with typed args. See the `grader-macros` crate.
#[cfg(feature = "macros")]
#[doc(inline)]
pub use grader_macros::template;

/// Re-exported for code the `#[template]` attribute generates; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;
}
