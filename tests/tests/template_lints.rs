//! Templates of every shape, compiled with every warning and pedantic lint denied: what
//! `#[template]` generates must not trip a lint in the user's crate.
#![deny(warnings, clippy::pedantic, missing_docs)]

use grader_core::{EvaluationResult, SubScore};
use grader_env::{Environment, PromptError, Session, template};

/// Nested args.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Limits {
    /// Seconds.
    pub seconds: u32,
}

/// Every option and several argument types.
///
/// # Errors
/// When the agent's answer cannot be read.
#[template(id = "all-options", description = "Everything.", input = String, returns = Vec<i64>)]
pub async fn all_options(
    repo: String,
    limits: Option<Limits>,
    tags: Vec<String>,
    session: Session,
) -> Result<EvaluationResult, Box<dyn std::error::Error + Send + Sync>> {
    let _ = (repo, limits.map(|l| l.seconds), tags);
    let answer = session.prompt_as::<Vec<i64>>("Numbers?").await?;
    Ok(EvaluationResult::from_reward(if answer.content.is_ok() {
        1.0
    } else {
        0.0
    })?)
}

/// No args, a `bool` grade.
#[template]
async fn no_args(session: Session) -> Result<bool, PromptError> {
    Ok(session.prompt("Yes?").await? == "yes")
}

/// A raw identifier and a `SubScore` grade.
#[template]
pub(crate) async fn raw_names(
    r#type: String,
    session: Session,
) -> Result<SubScore, Box<dyn std::error::Error + Send + Sync>> {
    let answer = session.prompt(format!("Type {}", &r#type)).await?;
    Ok(SubScore::new(
        "typed",
        if answer == r#type.as_str() { 1.0 } else { 0.0 },
    )?)
}

/// Described and defaulted arguments, one of them a raw identifier.
///
/// # Errors
/// When the agent's answer cannot be read.
#[template]
pub async fn described(
    /// The repository.
    repo: String,
    #[arg(description = "Seconds", default = 60)] timeout: u64,
    #[arg(default)] r#type: Vec<String>,
    session: Session,
) -> Result<bool, PromptError> {
    let prompt = format!("{repo} {timeout} {}", r#type.len());
    Ok(session.prompt(prompt).await? == "yes")
}

#[test]
fn every_template_registers() {
    let env = Environment::new("lints")
        .template(AllOptions::template())
        .and_then(|env| env.template(NoArgs::template()))
        .and_then(|env| env.template(RawNames::template()))
        .and_then(|env| env.template(Described::template()))
        .expect("distinct ids");
    let ids: Vec<&str> = env
        .templates()
        .iter()
        .map(grader_env::Template::id)
        .collect();
    assert_eq!(ids, ["all-options", "no_args", "raw_names", "described"]);
}
