//! The command does not inherit what looks like a credential: the test runs this same test
//! binary again with an API key, a cloud secret, a token and ordinary variables in its
//! environment, and checks from there what the graded commands see.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::process::Command;

use bash_support::{assert_rerun_passed, bash, child::Bounded as _};
use grader_core::bash::secrets::looks_like_a_secret;

/// Set in the re-run test binary.
const CHILD_ENV: &str = "GRADER_BASH_SECRETS_CHILD";

/// The credentials the re-run binary holds, and their values.
const SECRETS: [(&str, &str); 4] = [
    ("OPENAI_API_KEY", "sk-test-openai-value"),
    ("HUD_API_KEY", "hud-test-value"),
    ("AWS_SECRET_ACCESS_KEY", "aws-test-value"),
    ("GITHUB_TOKEN", "ghp-test-value"),
];

#[test]
fn commands_do_not_inherit_credentials() {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut command = Command::new(exe);
    command
        .args(["--exact", "graded_with_credentials_around", "--nocapture"])
        .env(CHILD_ENV, "1")
        .env("GRADER_TEST_ORDINARY", "ordinary-value");
    for (name, value) in SECRETS {
        command.env(name, value);
    }
    let output = command.output_bounded();
    assert_rerun_passed(&output);
}

/// What `printenv` shows of the command's environment.
fn environment_of(grader: grader_core::BashGrader) -> (String, serde_json::Value) {
    let sub = grader.grade_blocking(1.0).expect("runs");
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    let info = sub.info().unwrap();
    (
        info["stdout"].as_str().unwrap().to_owned(),
        info.get("env_withheld").cloned().unwrap_or_default(),
    )
}

/// Runs only inside the binary started by the test above.
#[test]
fn graded_with_credentials_around() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    // By default: no credential, every ordinary variable, the names withheld in info.
    let (seen, withheld) = environment_of(bash("printenv"));
    for (name, value) in SECRETS {
        assert!(!seen.contains(value), "{name} leaked: {seen}");
        assert!(!seen.contains(&format!("{name}=")), "{name} leaked: {seen}");
    }
    assert!(
        seen.contains("GRADER_TEST_ORDINARY=ordinary-value"),
        "{seen}"
    );
    assert!(seen.contains("PATH="), "{seen}");
    let mut names: Vec<&str> = SECRETS.iter().map(|(name, _)| *name).collect();
    names.sort_unstable();
    let listed: Vec<&str> = withheld
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .filter(|name| names.contains(name))
        .collect();
    assert_eq!(listed, names);
    assert!(
        !withheld.to_string().contains("-value"),
        "names only: {withheld}"
    );

    // A command that prints the key prints nothing.
    let sub = bash(r#"printf %s "$OPENAI_API_KEY""#)
        .grade_blocking(1.0)
        .unwrap();
    assert_eq!(sub.info().unwrap()["stdout"], "");

    // Let through by name, or set by the grader: there.
    let (seen, withheld) = environment_of(
        bash("printenv")
            .pass_env("GITHUB_TOKEN")
            .env("OPENAI_API_KEY", "set-by-the-grader"),
    );
    assert!(seen.contains("GITHUB_TOKEN=ghp-test-value"), "{seen}");
    assert!(seen.contains("OPENAI_API_KEY=set-by-the-grader"), "{seen}");
    assert!(!seen.contains("aws-test-value"), "{seen}");
    assert!(!withheld.to_string().contains("GITHUB_TOKEN"), "{withheld}");

    // Everything, as the reference: the credentials are there and nothing is listed.
    let (seen, withheld) = environment_of(bash("printenv").inherit_secrets(true));
    for (name, value) in SECRETS {
        assert!(seen.contains(&format!("{name}={value}")), "{name}: {seen}");
    }
    assert!(withheld.is_null(), "{withheld}");

    // Nothing inherited: only what the grader sets (and bash's own variables); bash still
    // finds programs on its default search path.
    let grader = grader_core::BashGrader::new("printenv; ls / > /dev/null")
        .login_shell(false)
        .env_clear()
        .env("ONLY", "this");
    let params = grader_core::Grader::parameters(&grader);
    assert_eq!(params["inherit_env"], "nothing");
    let (seen, _) = environment_of(grader);
    assert!(seen.contains("ONLY=this"), "{seen}");
    assert!(!seen.contains("GRADER_TEST_ORDINARY"), "{seen}");
    assert!(!seen.contains("-value"), "{seen}");

    assert!(looks_like_a_secret("AZURE_STORAGE_KEY".as_ref()));
}
