//! An environment with one template per protocol path, served like any environment binary.
//! The tests drive it with the reference's own client and compare it with the reference's
//! server serving the same templates (`tests/data/env_probe.py`).
//!
//! `PROBE_MARKER`, when set, names a file each teardown and shutdown hook appends a line to.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use grader_core::{BashGrader, EvaluationResult, Grade, SubScore};
use grader_env::{Environment, NoArgs, ServeConfig, Session, Template};
use serde_json::json;

type Failure = Box<dyn std::error::Error + Send + Sync>;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    word: String,
}

fn one() -> i64 {
    1
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct GradedArgs {
    #[serde(default = "one")]
    n: i64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SleeperArgs {
    pid_file: String,
}

fn mark(line: &str) {
    if let Some(path) = std::env::var_os("PROBE_MARKER")
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(file, "{line}");
    }
}

async fn echo(args: EchoArgs, session: Session) -> Result<f64, Failure> {
    let answer = session.prompt(format!("Repeat {}", args.word)).await?;
    Ok(if answer == args.word.as_str() {
        1.0
    } else {
        0.0
    })
}

async fn graded(args: GradedArgs, session: Session) -> Result<EvaluationResult, Failure> {
    session
        .prompt(json!({"prompt": "Grade me", "n": args.n}))
        .await?;
    let mut result = Grade::from_subscores(vec![
        SubScore::new("a", 1.0)?.with_weight(0.5)?,
        SubScore::new("b", 0.5)?.with_weight(0.5)?,
    ])?;
    result.content = Some("partial".to_owned());
    result.info.insert("n".to_owned(), json!(args.n));
    Ok(result)
}

async fn typed(_: NoArgs, session: Session) -> Result<EvaluationResult, Failure> {
    let answer = session.prompt_as::<Vec<i64>>("List three numbers").await?;
    let mut result = EvaluationResult::from_reward(if answer.content.is_ok() { 1.0 } else { 0.0 })?;
    result.info.insert("raw".to_owned(), json!(answer.raw));
    Ok(result)
}

async fn fails(_: NoArgs, _session: Session) -> Result<f64, Failure> {
    Err("boom".into())
}

async fn fails_grade(_: NoArgs, session: Session) -> Result<f64, Failure> {
    session.prompt("Answer anything").await?;
    Err("grading broke".into())
}

async fn nonfinite(_: NoArgs, session: Session) -> Result<f64, Failure> {
    session.prompt("Answer anything").await?;
    Ok(f64::NAN)
}

async fn panics(_: NoArgs, session: Session) -> Result<f64, Failure> {
    session.prompt("Answer anything").await?;
    panic!("kaboom")
}

async fn slow(_: NoArgs, session: Session) -> Result<f64, Failure> {
    tokio::time::sleep(Duration::from_millis(600)).await;
    session.prompt("Slowly").await?;
    Ok(1.0)
}

/// Grades by running a command that records its pid and sleeps: a grade that only a
/// cancellation ends.
async fn sleeper(args: SleeperArgs, session: Session) -> Result<EvaluationResult, Failure> {
    session.prompt("Wait").await?;
    let command = format!("echo $$ > '{}'; exec sleep 300", args.pid_file);
    let sub = BashGrader::new(command).grade(1.0).await?;
    Ok(Grade::from_subscores(vec![sub])?)
}

fn environment() -> Result<Environment, grader_env::EnvironmentError> {
    Environment::new("probe")
        .version("1.2.3")
        .template(Template::new("echo", echo).description("Repeat a word."))?
        .template(Template::new("graded", graded))?
        .template(Template::new("typed", typed).returns::<Vec<i64>>())?
        .template(Template::new("fails", fails))?
        .template(Template::new("fails_grade", fails_grade))?
        .template(Template::new("nonfinite", nonfinite))?
        .template(Template::new("panics", panics))?
        .template(Template::new("slow", slow))?
        .template(Template::new("sleeper", sleeper))
        .map(|env| {
            env.teardown(|| async {
                mark("teardown");
                Ok::<(), Failure>(())
            })
            .shutdown(|| async {
                mark("shutdown");
                Ok::<(), Failure>(())
            })
        })
}

#[tokio::main]
async fn main() -> ExitCode {
    // The panic is a test case; its report is noise.
    std::panic::set_hook(Box::new(|_| {}));
    let config = match ServeConfig::from_args(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(2);
        }
    };
    let env = match environment() {
        Ok(env) => env,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    match env.serve(&config).await {
        Ok(stopped) => stopped.exit_code(),
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
