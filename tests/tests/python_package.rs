//! The Python package, graderkit (`grader-py`): its wheel is built from the checkout by maturin
//! and installed into the locked `py` environment, then its pytest suite runs there. This is how
//! `cargo test --workspace` runs the package's tests, so the README's one test command covers
//! them.
//!
//! pytest's "no tests ran" is a failure here (exit 5), as is any failed or erroring test; the
//! output of pytest is in the failure message.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use grader_tests::child::Bounded as _;
use grader_tests::python::{HUD, PY, VERIFIERS, venv_python};

/// A cold build of the extension (grader-core and PyO3 from scratch, two cores) takes minutes.
const BUILD_BOUND: Duration = Duration::from_secs(30 * 60);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits inside the workspace")
        .to_path_buf()
}

/// `PATH` with `folder` first.
fn path_with(folder: &Path) -> std::ffi::OsString {
    let mut paths = vec![folder.to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).expect("a PATH")
}

/// The number before `word` in pytest's closing line (`12 passed, 1 skipped in 3.4s`).
fn count(summary: &str, word: &str) -> usize {
    summary
        .split([',', ' '])
        .collect::<Vec<_>>()
        .windows(2)
        .find(|pair| pair[1] == word)
        .and_then(|pair| pair[0].parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_python_package_passes_its_pytest_suite() {
    let target_tmpdir = env!("CARGO_TARGET_TMPDIR");
    let Some(python) = venv_python(target_tmpdir, &PY) else {
        return;
    };
    let Some(verifiers) = venv_python(target_tmpdir, &VERIFIERS) else {
        return;
    };
    // The reference, whose text helpers the suite compares with, in its own environment.
    let Some(hud) = venv_python(target_tmpdir, &HUD) else {
        return;
    };
    let root = workspace();
    let target_dir = Path::new(target_tmpdir)
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target directory");

    // The wheel, built by the environment's own maturin (no build isolation: nothing fetched),
    // in the dev profile so that it shares the workspace's compiled dependencies; then
    // installed into the suite's environment and into verifiers' (where the reward functions
    // run in a real verifiers environment).
    let wheels = target_dir.join("graderkit-wheel");
    let _ = std::fs::remove_dir_all(&wheels);
    let build = Command::new(&python)
        .args([
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
        ])
        .arg(&wheels)
        .arg(root.join("grader-py"))
        // maturin's build backend runs the `maturin` program: the environment's own.
        .env(
            "PATH",
            path_with(python.parent().expect("the venv's bin folder")),
        )
        .env("MATURIN_PEP517_ARGS", "--profile dev")
        .env("CARGO_TARGET_DIR", target_dir)
        .output_within(BUILD_BOUND);
    assert!(
        build.status.success(),
        "building the wheel failed ({}):\n{}\n{}",
        build.status,
        String::from_utf8_lossy(&build.stdout),
        String::from_utf8_lossy(&build.stderr)
    );
    let wheel = std::fs::read_dir(&wheels)
        .expect("the wheel's folder")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|e| e == "whl"))
        .expect("a built wheel");
    for into in [&python, &verifiers] {
        let install = Command::new(into)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--force-reinstall",
            ])
            .arg(&wheel)
            .output_within(BUILD_BOUND);
        assert!(
            install.status.success(),
            "installing the wheel into {} failed ({}):\n{}",
            into.display(),
            install.status,
            String::from_utf8_lossy(&install.stderr)
        );
    }

    // verifiers 0.3.1 lives in its own environment: the format tests load its parser modules
    // from its site-packages, and the verifiers test runs an environment with its interpreter.
    let verifiers_site = verifiers
        .parent()
        .and_then(Path::parent)
        .expect("the venv's root")
        .join("lib/python3.11/site-packages");
    let output = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root.join("grader-py/tests"))
        .current_dir(root.join("grader-py"))
        .env("GRADERKIT_TEST_VERIFIERS_SITE", &verifiers_site)
        .env("GRADERKIT_TEST_HUD_PYTHON", &hud)
        .env("GRADERKIT_TEST_VERIFIERS_PYTHON", &verifiers)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output_within(BUILD_BOUND);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(
        output.status.success(),
        "pytest failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        count(summary, "passed") > 0 && count(summary, "failed") == 0,
        "pytest ran no test: {summary}\n{stdout}"
    );
    eprintln!("graderkit's pytest suite: {summary}");
}

#[test]
fn pytest_summaries_are_read() {
    assert_eq!(count("12 passed, 1 skipped in 3.40s", "passed"), 12);
    assert_eq!(count("12 passed, 1 skipped in 3.40s", "skipped"), 1);
    assert_eq!(count("1 failed, 3 passed in 0.1s", "failed"), 1);
    assert_eq!(count("no tests ran in 0.01s", "passed"), 0);
}
