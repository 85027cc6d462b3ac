//! The reference's own example, `coding-env` with its `fix-tests` template, as an environment
//! hud runs: a process that serves the template over hud's control channel, with a workspace
//! where the agent works.
//!
//! The environment gets a workspace (`Environment::workspace_with`: hud's
//! `env.workspace(root)`; the template reaches it through its session, `session.workspace()`),
//! served to the agent as hud's `ssh/2` capability `shell`: an SSH server whose sessions run in one bubblewrap sandbox
//! per task (the checkout at `/workspace`, no network but a proxy to PyPI, no `HUD_*`
//! variables, its own PID namespace), reached through the control channel's `tunnel.open`, so the agent needs no
//! path on this machine's disk and no route but the control port.
//!
//! The environment's state is where the checkout goes (`with_state`): the template takes it as
//! `State<Checkout>`, checked at compile time.
//!
//! Each task gets a fresh checkout of a tiny project whose test fails, in the workspace. When
//! the agent answers, the checkout is graded: `BashGrader` runs the tests (weight 1) inside the
//! task's sandbox, where the agent ran them, and a penalty (weight -1) fires when the agent
//! edited the tests instead of the code: one call to the workspace's change tracker, whose
//! patch of the tests is the penalty's `info`. When the task ends, graded or cancelled, the
//! sandbox is discarded with every process the agent left in it. Tasks share the one
//! workspace, as the reference's do: serve one task at a time.
//!
//! Serve it with `cargo run -p grader-examples --example coding_env` (it prints
//! `HUD_SERVE_PORT=<port>`), then play the agent with
//! `cargo run -p grader-examples --example coding_agent -- <port>`. `--host` and `--port`
//! choose the address, as for hud's `python -m hud.environment.server`; the container recipe
//! `examples/docker/coding-env.Dockerfile` runs it with `--host 0.0.0.0 --port 8765`, as hud's
//! `DockerRuntime` expects. Where bwrap cannot sandbox (a container runtime that refuses user
//! namespaces) the workspace serves without isolation and says so at warn level; see
//! `docs/workspaces.md` for what the runtime must allow.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use grader_core::{EvaluationResult, Grade, Info, SubScore};
use grader_env::workspace::{Changes, Tracker, Workspace};
use grader_env::{Environment, ServeConfig, Session, State, template};
use serde_json::json;

type Failure = Box<dyn Error + Send + Sync>;

const PROMPT: &str = "Make the checkout tests pass. The checkout is the working directory of \
                      the `shell` capability (ssh/2).";
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

/// Empties the workspace's root and writes a fresh checkout there: what the last task's agent
/// left is gone.
fn fresh_checkout(root: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    std::fs::create_dir(root.join("tests"))?;
    std::fs::write(root.join("checkout.py"), BUGGY_CHECKOUT)?;
    std::fs::write(root.join(TEST_FILE), TESTS)
}

/// The environment's state: where each task's checkout is written (the workspace's root).
#[derive(Clone)]
struct Checkout {
    root: PathBuf,
}

/// The `fix-tests` template: a checkout in the workspace, the prompt, then the grade of what
/// the agent did there.
#[template(
    id = "fix-tests",
    description = "Make the failing checkout tests pass without editing them."
)]
async fn fix_tests(
    State(checkout): State<Checkout>,
    session: Session,
) -> Result<EvaluationResult, Failure> {
    fresh_checkout(&checkout.root)?;
    // What the agent changes is what differs from here on.
    let tracker = Tracker::start(&checkout.root)?;

    // A prompt with a `prompt` key is the whole prompt frame: the agent also gets the name of
    // the capability where the checkout is.
    session
        .prompt(json!({"prompt": PROMPT, "workspace": "shell"}))
        .await?;

    // The tests run inside the task's sandbox, as the agent ran them: the same files at the
    // same path, no network, nothing of the host but the system.
    let tests = session
        .workspace()?
        .bash(TEST_COMMAND)
        .await?
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .timeout(Duration::from_secs(120));
    let tests = tests.grade(1.0).await?;
    Ok(Grade::from_subscores(vec![
        tests,
        tests_tampered(&tracker.changes())?,
    ])?)
}

/// The environment, its workspace on `root`.
fn environment(root: &Path) -> Result<Environment<Checkout>, grader_env::EnvironmentError> {
    let checkout = Checkout {
        root: root.to_path_buf(),
    };
    Environment::new("coding-env")
        .version("0.1.0")
        .workspace_with(
            // The agent may install packages from PyPI, and reach nothing else: the sandbox's
            // one way out is a proxy that lets through these hosts (and their subdomains).
            Workspace::builder(root).allowed_hosts(["pypi.org", "files.pythonhosted.org"]),
            "shell",
        )
        .with_state(checkout)
        .template(FixTests::template())
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
    // The workspace's root: removed when the server stops.
    let root = match tempfile::Builder::new().prefix("coding-env-").tempdir() {
        Ok(root) => root,
        Err(error) => {
            eprintln!("cannot make the workspace's root: {error}");
            return ExitCode::FAILURE;
        }
    };
    let served = match environment(root.path()) {
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
