//! Every option, optional and nested args, a `Result` return, and the generated type used.
use grader_core::EvaluationResult;
use grader_env::{Environment, Session, template};

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Limits {
    pub seconds: u32,
}

/// Fix the tests.
#[template(id = "fix-tests", description = "Make the tests pass.", input = String, returns = Vec<i64>, crate = grader_env)]
pub async fn fix_tests(
    repo: String,
    limits: Option<Limits>,
    r#type: Vec<String>,
    session: Session,
) -> Result<EvaluationResult, Box<dyn std::error::Error + Send + Sync>> {
    let _ = (repo, limits.map(|l| l.seconds), r#type);
    let answer = session.prompt_as::<Vec<i64>>("Numbers?").await?;
    Ok(EvaluationResult::from_reward(if answer.content.is_ok() { 1.0 } else { 0.0 })?)
}

/// No args at all.
#[template]
async fn ping(_session: Session) -> bool {
    true
}

fn main() {
    let env = Environment::new("e")
        .template(FixTests::template())
        .and_then(|env| env.template(Ping::template()))
        .unwrap();
    assert_eq!(env.templates()[0].id(), "fix-tests");
    let _ = FixTests { repo: String::new(), limits: None, r#type: Vec::new() };
}
