//! The reference's own example, `coding-env` with its `fix-tests` template, as an environment
//! hud runs: a process that serves the template over hud's control channel, with a workspace
//! where the agent works.
//!
//! The environment gets a workspace (`Environment::workspace_with`: hud's
//! `env.workspace(root)`; the template reaches it through its session, `session.workspace()`),
//! served to the agent as hud's `ssh/2` capability `shell`: an SSH server whose sessions run in
//! one bubblewrap sandbox per task (the checkout at `/workspace`, no network but a proxy to
//! PyPI, no credential variables, its own PID namespace), reached through the control
//! channel's `tunnel.open`, so the agent needs no path on this machine's disk and no route but
//! the control port.
//!
//! The environment's state is the checkout each task starts from (`with_state`): the template
//! takes it as `State<Checkout>`, checked at compile time.
//!
//! Each task gets a fresh checkout of a tiny project whose test fails, in the workspace,
//! written through the workspace's [`Root`](grader_env::workspace::Root)
//! (`session.workspace()?.root()`: never through a link the last agent planted). When the agent answers, the server seals the workspace (what the
//! agent left running is stopped, its connections closed, no session starts) and the template
//! grades, honestly: the agent's code runs in a test process it controls (it could exit 0 at
//! import, patch the test framework, print a fake "OK"), so the verdict comes from this
//! process instead. The grader calls the agent's `total` in a child interpreter on hidden,
//! random inputs (`python3 -I`: no user site, no start-up hook, the checkout only after the
//! standard library; its runner is this program's, not a file of the checkout), and compares
//! the results with its own here (weight 1). A penalty (weight -1) fires when the agent
//! edited the tests: one call to the workspace's change tracker, whose patch of the tests is
//! the penalty's `info`. When the task ends, graded or cancelled, the agent's key stops
//! working and the sandbox is discarded with every process the agent left in it. Serve one
//! task at a time.
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
use std::hash::{BuildHasher as _, Hasher as _};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use grader_core::sandbox::Limits;
use grader_core::{EvaluationResult, Grade, Info, SubScore};
use grader_env::workspace::{Changes, Root, Tracker, Workspace, WorkspaceHandle};
use grader_env::{Environment, ServeConfig, Session, State, template};
use serde_json::{Value, json};

type Failure = Box<dyn Error + Send + Sync>;

const PROMPT: &str = "Make the checkout tests pass. The checkout is the working directory of \
                      the `shell` capability (ssh/2).";
const TEST_FILE: &str = "tests/test_checkout.py";
const TESTS_GLOB: &str = "tests/*";

/// The code under test, with a bug: the discount is charged instead of taken off.
const BUGGY_CHECKOUT: &str = "\
def total(prices, discount=0.0):
    \"\"\"The sum of `prices` with a fractional `discount` taken off (0.1 is 10 % off).\"\"\"
    return sum(prices) * discount
";

/// The tests the agent sees and may run (the grade does not trust their outcome).
const TESTS: &str = "\
import unittest

from checkout import total


class TotalTest(unittest.TestCase):
    def test_ten_percent_off(self):
        self.assertAlmostEqual(total([10, 20], discount=0.1), 27)

    def test_no_prices(self):
        self.assertEqual(total([]), 0)
";

/// What the grader runs in the sandbox, with `python3 -I` (isolated: no user site, no
/// `PYTHON*` variables, neither the working directory nor a script's before the standard
/// library) and `-X pycache_prefix` (bytecode only from the grader's own cache, never from a
/// `__pycache__` the agent wrote): the checkout is put at the end of the path, `total` is
/// called on each case of `GRADER_CASES`, and the results are printed on one line after
/// `GRADER_MARK`. Whatever the agent's code does in this process, all it can change is what
/// this line says: the grader compares it with results of its own, and a run that printed
/// the line more than once is not believed.
const RUNNER: &str = r#"
import json, math, os, sys
sys.path.append(os.getcwd())
mark = os.environ["GRADER_MARK"]
cases = json.loads(os.environ["GRADER_CASES"])
try:
    from checkout import total
except BaseException as error:
    print(mark + json.dumps({"error": "cannot import checkout: " + type(error).__name__}), flush=True)
    raise SystemExit(1)
results = []
for prices, discount in cases:
    try:
        value = float(total(list(prices), discount=discount))
        results.append(value if math.isfinite(value) else None)
    except BaseException:
        results.append(None)
print(mark + json.dumps(results), flush=True)
"#;

/// How many hidden cases a grade runs (with the two the visible tests check).
const HIDDEN_CASES: usize = 24;

/// A small random generator (xorshift), seeded from the process's random hasher keys: the
/// hidden cases cannot be known before the grade.
struct Random(u64);

impl Random {
    fn new() -> Self {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_nanos()),
        );
        Random(hasher.finish() | 1)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

/// The cases a grade checks: the visible tests' two, then random baskets and discounts.
fn hidden_cases(random: &mut Random) -> Vec<(Vec<u64>, f64)> {
    const DISCOUNTS: [f64; 9] = [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.5, 0.75];
    let mut cases = vec![(vec![10, 20], 0.1), (Vec::new(), 0.0)];
    for _ in 0..HIDDEN_CASES {
        let prices = (0..random.below(6)).map(|_| random.below(500)).collect();
        let discount = DISCOUNTS[usize::try_from(random.below(9)).unwrap_or(0)];
        cases.push((prices, discount));
    }
    cases
}

/// What a correct `total` returns: Python's `sum(prices) * (1 - discount)`.
fn expected((prices, discount): &(Vec<u64>, f64)) -> f64 {
    #[allow(clippy::cast_precision_loss)] // sums of a few hundreds are exact in an f64
    let sum = prices.iter().sum::<u64>() as f64;
    sum * (1.0 - discount)
}

/// The hidden cases' verdict (weight 1): the share of cases whose result from the sandbox
/// matches this process's own, with the first wrong ones in `info`. A run that timed out, hit
/// a limit or printed no results scores 0, with why.
async fn hidden_cases_pass(workspace: &WorkspaceHandle) -> Result<SubScore, Failure> {
    let mut random = Random::new();
    let cases = hidden_cases(&mut random);
    let mark = format!("grader-results-{:016x}:", random.below(u64::MAX));
    let ran = workspace
        .bash(r#"exec python3 -I -X "pycache_prefix=$PYTHONPYCACHEPREFIX" -c "$GRADER_RUNNER""#)
        .await?
        .env("GRADER_RUNNER", RUNNER)
        .env("GRADER_CASES", serde_json::to_string(&cases)?)
        .env("GRADER_MARK", &mark)
        .timeout(Duration::from_secs(60))
        .grade(1.0)
        .await?;
    let ran_info = ran.info().cloned().unwrap_or_default();
    let stdout = ran_info.get("stdout").and_then(Value::as_str).unwrap_or("");
    let marked: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix(&mark))
        .collect();
    let results: Option<Vec<Option<f64>>> = match marked.as_slice() {
        [line] => serde_json::from_str(line).ok(),
        _ => None,
    };
    let mut info = Info::new();
    info.insert("cases".into(), cases.len().into());
    for key in ["exit_code", "timed_out", "limit_exceeded", "stderr"] {
        if let Some(value) = ran_info.get(key) {
            info.insert(key.into(), value.clone());
        }
    }
    let Some(results) = results.filter(|results| results.len() == cases.len()) else {
        let why = if marked.len() > 1 {
            "the results were printed more than once"
        } else {
            "the runner printed no results"
        };
        info.insert("error".into(), why.into());
        return Ok(SubScore::new("hidden_cases", 0.0)?.with_info(info));
    };
    let mut wrong = Vec::new();
    for (case, got) in cases.iter().zip(&results) {
        let want = expected(case);
        let right = got.is_some_and(|got| (got - want).abs() <= 1e-9 * want.abs().max(1.0));
        if !right {
            wrong.push(json!({"prices": case.0, "discount": case.1, "expected": want, "got": got}));
        }
    }
    #[allow(clippy::cast_precision_loss)] // a few dozen cases
    let passed = (cases.len() - wrong.len()) as f64 / cases.len() as f64;
    wrong.truncate(5);
    info.insert("wrong".into(), Value::Array(wrong));
    Ok(SubScore::new("hidden_cases", passed)?.with_info(info))
}

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

/// The environment's state: the checkout each task starts from, the code with its bug and the
/// tests the agent sees.
#[derive(Clone, Copy)]
struct Checkout {
    code: &'static str,
    tests: &'static str,
}

impl Checkout {
    /// Empties the workspace's root and writes a fresh checkout there: what the last task's
    /// agent left is gone. Through `Root`: a link the agent planted is removed or replaced,
    /// never followed out of the root, and what is written is the sandbox user's to edit.
    fn write_fresh(self, root: &Root) -> Result<(), Failure> {
        root.clear()?;
        root.write("checkout.py", self.code.as_bytes())?;
        root.write(TEST_FILE, self.tests.as_bytes())?;
        Ok(())
    }
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
    let workspace = session.workspace()?;
    let root = workspace.root().await?;
    checkout.write_fresh(&root)?;
    // What the agent changes is what differs from here on.
    let tracker = Tracker::start(root.path())?;

    // A prompt with a `prompt` key is the whole prompt frame: the agent also gets the name of
    // the capability where the checkout is.
    session
        .prompt(json!({"prompt": PROMPT, "workspace": "shell"}))
        .await?;

    // The workspace is sealed by now: the agent's processes are gone and no session starts.
    let hidden = hidden_cases_pass(&workspace).await?.with_weight(1.0)?;
    Ok(Grade::from_subscores(vec![
        hidden,
        tests_tampered(&tracker.changes())?,
    ])?)
}

/// The environment, its workspace on `root`.
fn environment(root: &Path) -> Result<Environment<Checkout>, grader_env::EnvironmentError> {
    let checkout = Checkout {
        code: BUGGY_CHECKOUT,
        tests: TESTS,
    };
    Environment::new("coding-env")
        .version("0.1.0")
        .workspace_with(
            // The agent may install packages from PyPI, and reach nothing else: the sandbox's
            // one way out is a proxy that lets through these hosts (and their subdomains).
            // Its sessions share 2 GiB of memory and 1024 processes, and a `/tmp` of 256 MiB.
            Workspace::builder(root)
                .allowed_hosts(["pypi.org", "files.pythonhosted.org"])
                .limits(Limits::default().memory(2 << 30).processes(1024))
                .tmp_size(256 << 20),
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
