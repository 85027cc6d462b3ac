//! A working directory this process may not enter is reported as the directory's problem,
//! not as bash failing to start. Root enters any directory, so under root the test runs this
//! same test binary again as `nobody` (through util-linux `setpriv`).
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use bash_support::{bash, child::Bounded as _, scratch_dir};
use grader_core::Failure;

/// Set in the re-run test binary.
const CHILD_ENV: &str = "GRADER_BASH_CWD_CHILD";

fn is_root() -> bool {
    let output = Command::new("id").arg("-u").output_bounded();
    String::from_utf8_lossy(&output.stdout).trim() == "0"
}

#[test]
fn an_unenterable_working_directory_is_the_directorys_error() {
    if std::env::var_os(CHILD_ENV).is_some() || !is_root() {
        check_unenterable_directory();
        return;
    }
    if !Path::new("/usr/bin/setpriv").exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "setpriv is needed under CI"
        );
        eprintln!("skipped: running as root without /usr/bin/setpriv to drop privileges");
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(exe)
        .args([
            "--exact",
            "an_unenterable_working_directory_is_the_directorys_error",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .env("TMPDIR", "/tmp")
        .output_bounded();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn check_unenterable_directory() {
    let dir = scratch_dir("closed");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o000)).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(bash("true").cwd(&dir).grade(1.0));
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::remove_dir(&dir).unwrap();
    let error = result.unwrap_err();
    match &error.failure {
        Failure::WorkingDirectory { path, reason } => {
            assert_eq!(path, &dir);
            assert!(reason.starts_with("cannot be entered"), "{reason}");
        }
        other => panic!("expected a working-directory failure, got {other:?}"),
    }
}
