//! The reference's own example, `coding-env` with its `fix-tests` template, as an environment
//! hud runs: a process that serves the template over hud's control channel.
//!
//! Each task gets a fresh checkout of a tiny project whose test fails; the prompt tells the
//! agent where it is. When the agent answers, the checkout is graded: `BashGrader` runs the
//! tests (weight 1) and a penalty (weight -1) fires when the agent edited the tests instead of
//! the code. The checkout is removed when the task ends, graded or cancelled.
//!
//! Serve it with `cargo run -p grader-examples --example coding_env` (it prints
//! `HUD_SERVE_PORT=<port>`), then play the agent with
//! `cargo run -p grader-examples --example coding_agent -- <port>`. `--host` and `--port`
//! choose the address, as for hud's `python -m hud.environment.server`; the container recipe
//! `examples/docker/coding-env.Dockerfile` runs it with `--host 0.0.0.0 --port 8765`, as hud's
//! `DockerRuntime` expects.

use std::error::Error;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use grader_core::{BashGrader, EvaluationResult, Grade, SubScore};
use grader_env::{Environment, NoArgs, ServeConfig, Session, Template};
use serde_json::json;

type Failure = Box<dyn Error + Send + Sync>;

const PROMPT: &str = "Make the checkout tests pass";
const TEST_COMMAND: &str = "python3 -m unittest -q tests/test_checkout.py";
const TEST_FILE: &str = "tests/test_checkout.py";

/// The code under test, with a bug: the discount is charged instead of taken off.
const BUGGY_CHECKOUT: &str = "\
def total(prices, discount=0.0):
    \"\"\"The sum of `prices` with a fractional `discount` taken off (0.1 is 10 % off).\"\"\"
    return sum(prices) * discount
";

const TESTS: &str = "\
import unittest

from checkout import total


class TotalTest(unittest.TestCase):
    def test_ten_percent_off(self):
        self.assertAlmostEqual(total([10, 20], discount=0.1), 27)

    def test_no_prices(self):
        self.assertEqual(total([]), 0)
";

/// A penalty: 1.0 when the test file is no longer the one the task shipped.
fn tests_tampered(repo: &Path) -> Result<SubScore, Failure> {
    let now = std::fs::read_to_string(repo.join(TEST_FILE)).unwrap_or_default();
    let tampered = if now == TESTS { 0.0 } else { 1.0 };
    Ok(SubScore::new("tests_tampered", tampered)?.with_weight(-1.0)?)
}

/// The `fix-tests` template: a checkout, the prompt, then the grade of what the agent did.
async fn fix_tests(_: NoArgs, session: Session) -> Result<EvaluationResult, Failure> {
    // Removed when this future ends: after the grade, or when the task is cancelled.
    let dir = tempfile::tempdir()?;
    let repo = dir.path();
    std::fs::create_dir(repo.join("tests"))?;
    std::fs::write(repo.join("checkout.py"), BUGGY_CHECKOUT)?;
    std::fs::write(repo.join(TEST_FILE), TESTS)?;

    // A prompt with a `prompt` key is the whole prompt frame: the agent also gets the path.
    session
        .prompt(json!({"prompt": PROMPT, "checkout": repo}))
        .await?;

    let tests = BashGrader::new(TEST_COMMAND)
        .cwd(repo)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .timeout(Duration::from_secs(120));
    let tests = tests.grade(1.0).await?;
    Ok(Grade::from_subscores(vec![tests, tests_tampered(repo)?])?)
}

fn environment() -> Result<Environment, grader_env::EnvironmentError> {
    Environment::new("coding-env").version("0.1.0").template(
        Template::new("fix-tests", fix_tests)
            .description("Make the failing checkout tests pass without editing them."),
    )
}

#[tokio::main]
async fn main() -> ExitCode {
    let config = match ServeConfig::from_args(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("usage: coding_env [--host HOST] [--port PORT]: {error}");
            return ExitCode::from(2);
        }
    };
    let served = match environment() {
        Ok(env) => env.serve(&config).await,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    match served {
        Ok(stopped) => stopped.exit_code(),
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
