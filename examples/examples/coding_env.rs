//! The reference's own example, `coding-env` with its `fix-tests` template, as an environment
//! hud runs: a process that serves the template over hud's control channel.
//!
//! Each task gets a fresh checkout of a tiny project whose test fails; the prompt tells the
//! agent where it is. When the agent answers, the checkout is graded: `BashGrader` runs the
//! tests (weight 1) in the bubblewrap sandbox where the machine allows it, and a penalty
//! (weight -1) fires when the agent edited the tests instead of the code: one call to the
//! workspace's change tracker, whose patch of the tests is the penalty's `info`. The checkout is
//! removed when the task ends, graded or cancelled.
//!
//! Serve it with `cargo run -p grader-examples --example coding_env` (it prints
//! `HUD_SERVE_PORT=<port>`), then play the agent with
//! `cargo run -p grader-examples --example coding_agent -- <port>`. `--host` and `--port`
//! choose the address, as for hud's `python -m hud.environment.server`; the container recipe
//! `examples/docker/coding-env.Dockerfile` runs it with `--host 0.0.0.0 --port 8765`, as hud's
//! `DockerRuntime` expects.

use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

use grader_core::sandbox::Sandbox;
use grader_core::{BashGrader, EvaluationResult, Grade, Info, SubScore};
use grader_env::workspace::{Changes, Tracker};
use grader_env::{Environment, NoArgs, ServeConfig, Session, Template};
use serde_json::json;

type Failure = Box<dyn Error + Send + Sync>;

const PROMPT: &str = "Make the checkout tests pass";
const TEST_COMMAND: &str = "python3 -m unittest -q tests/test_checkout.py";
const TEST_FILE: &str = "tests/test_checkout.py";
const TESTS_GLOB: &str = "tests/*";

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

/// A penalty: 1.0 when the agent changed anything under `tests/` since the task started, with
/// the patches in `info.changed`.
fn tests_tampered(changes: &Changes) -> Result<SubScore, Failure> {
    let tampered = changes.touched(TESTS_GLOB);
    let mut info = Info::new();
    let patches = changes
        .files
        .iter()
        .filter(|change| grader_env::workspace::fnmatch(&change.path, TESTS_GLOB))
        .map(|change| json!({"path": change.path, "status": change.status, "patch": change.patch}));
    info.insert("changed".into(), patches.collect());
    let sub = SubScore::new("tests_tampered", if tampered { 1.0 } else { 0.0 })?;
    Ok(sub.with_weight(-1.0)?.with_info(info))
}

/// The `fix-tests` template: a checkout, the prompt, then the grade of what the agent did.
async fn fix_tests(_: NoArgs, session: Session) -> Result<EvaluationResult, Failure> {
    // Removed when this future ends: after the grade, or when the task is cancelled.
    let dir = tempfile::tempdir()?;
    let repo = dir.path();
    std::fs::create_dir(repo.join("tests"))?;
    std::fs::write(repo.join("checkout.py"), BUGGY_CHECKOUT)?;
    std::fs::write(repo.join(TEST_FILE), TESTS)?;
    // What the agent changes is what differs from here on.
    let tracker = Tracker::start(repo)?;

    // A prompt with a `prompt` key is the whole prompt frame: the agent also gets the path.
    session
        .prompt(json!({"prompt": PROMPT, "checkout": repo}))
        .await?;

    let tests = BashGrader::new(TEST_COMMAND)
        .cwd(repo)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .timeout(Duration::from_secs(120))
        // The agent's code runs with no network and sees only the checkout and the system;
        // where bwrap cannot sandbox (a container without user namespaces), it runs as is.
        .sandbox(Sandbox::new().or_unsandboxed());
    let tests = tests.grade(1.0).await?;
    Ok(Grade::from_subscores(vec![
        tests,
        tests_tampered(&tracker.changes())?,
    ])?)
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
