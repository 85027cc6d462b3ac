//! Runnable examples of the grader crates, each printing a grade as a readable breakdown and as
//! JSON (`cargo run -p grader-examples --example NAME`):
//!
//! - `fix_tests`: the quick start. A checkout project with a failing test, graded by
//!   `BashGrader` and a `#[grader]` penalty before and after an "agent" fixes it.
//! - `custom_graders`: sync and async `#[grader]` functions, `skip`, a name override, a
//!   hand-written `Grader`, `any`/`all`, and a penalty.
//! - `stateful_grader`: graders that hold state with `#[derive(Grader)]`: a reference set loaded
//!   once and graded against many answers, and an async grader with a client and a secret.
//! - `gather`: many graders run concurrently with a concurrency limit and a failure policy.
//! - `qa_judge`: a question-answering environment graded by `LlmJudge`, one verdict per
//!   criterion with a penalty criterion, against a configured endpoint or a scripted local one.
