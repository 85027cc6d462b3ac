//! Templates that take the environment's state: the whole state, a part of it (`FromRef`),
//! destructured or not, anywhere before the session, beside args; registered on an environment
//! given its state, and served.
use std::sync::Arc;

use grader_env::{Environment, FromRef, Session, State, template};

#[derive(Clone)]
pub struct Config {
    pub problems: Arc<Vec<String>>,
    pub greeting: String,
}

#[derive(Clone)]
pub struct Problems(pub Arc<Vec<String>>);

impl FromRef<Config> for Problems {
    fn from_ref(config: &Config) -> Self {
        Problems(Arc::clone(&config.problems))
    }
}

/// The whole state, destructured, between two args.
#[template]
async fn whole(
    n: usize,
    State(config): State<Config>,
    shout: Option<bool>,
    session: Session,
) -> Result<f64, grader_env::PromptError> {
    let _ = (config.problems.get(n), shout, config.greeting);
    session.prompt("Anything").await?;
    Ok(1.0)
}

/// A part of it, not destructured, with no args.
#[template(id = "part")]
pub async fn part(problems: State<Problems>, session: Session) -> Result<bool, grader_env::PromptError> {
    let first = problems.0.0.first().cloned().unwrap_or_default();
    Ok(session.prompt(first).await? == "done")
}

/// No state: registers on an environment with any state.
#[template]
async fn plain(session: Session) -> bool {
    drop(session);
    true
}

fn main() {
    let config = Config {
        problems: Arc::new(vec!["2 + 2".to_owned()]),
        greeting: "hi".to_owned(),
    };
    let env = Environment::new("stateful")
        .with_state(config)
        .template(Whole::template())
        .and_then(|env| env.template(Part::template()))
        .and_then(|env| env.template(Plain::template()))
        .unwrap();
    assert_eq!(env.templates().len(), 3);
    let _: grader_env::StatefulTemplate<Config> = Whole::template();
    let _ = Whole { n: 0, shout: None };
}
