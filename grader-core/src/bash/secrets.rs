//! Which of the grading process's environment variables a command does not inherit: those
//! that look like credentials, unless the grader lets them through.
//!
//! A command graded by `BashGrader` runs the agent's code (the tests it may have edited, the
//! program it built), so by default it does not see the grading process's API keys, tokens
//! and cloud credentials. A variable is withheld when its name, in upper case:
//!
//! - starts with `HUD_` (the platform's key and settings);
//! - ends with `_KEY`, `_KEY_ID`, `_TOKEN`, `_CREDENTIALS`, `_PAT` or `_AUTH`;
//! - contains `SECRET`, `PASSWORD`, `PASSWD`, `API_KEY`, `ACCESS_KEY`, `PRIVATE_KEY` or
//!   `CONNECTION_STRING`;
//! - or is `SSH_AUTH_SOCK` (the SSH agent, which signs with every key it holds).
//!
//! That covers `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `HUD_API_KEY`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `GOOGLE_APPLICATION_CREDENTIALS`,
//! `AZURE_STORAGE_KEY`, `AZURE_CLIENT_SECRET`, `AZURE_STORAGE_CONNECTION_STRING`,
//! `GITHUB_TOKEN`, `NPM_TOKEN` and the like. A variable the grader sets itself
//! ([`BashGrader::env`](super::BashGrader::env)) is always set.

use std::ffi::{OsStr, OsString};

/// What a command inherits of the grading process's environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Inherit {
    /// Everything but what [`looks_like_a_secret`] (the default).
    AllButSecrets,
    /// Everything, as the reference does.
    Everything,
    /// Nothing.
    Nothing,
}

/// Whether a variable of this name is withheld by default (see the module docs).
#[must_use]
pub fn looks_like_a_secret(name: &OsStr) -> bool {
    let name = name.to_string_lossy().to_ascii_uppercase();
    const SUFFIXES: [&str; 6] = ["_KEY", "_KEY_ID", "_TOKEN", "_CREDENTIALS", "_PAT", "_AUTH"];
    const PARTS: [&str; 7] = [
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "CONNECTION_STRING",
    ];
    name.starts_with("HUD_")
        || name == "SSH_AUTH_SOCK"
        || SUFFIXES.iter().any(|suffix| name.ends_with(suffix))
        || PARTS.iter().any(|part| name.contains(part))
}

/// The names of this process's variables that the command does not inherit, sorted: under
/// [`Inherit::AllButSecrets`], those that look like secrets, less those `passed` through and
/// those the grader sets itself (`set`).
pub(super) fn withheld(inherit: Inherit, passed: &[OsString], set: &[OsString]) -> Vec<OsString> {
    if inherit != Inherit::AllButSecrets {
        return Vec::new();
    }
    let mut names: Vec<OsString> = std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| looks_like_a_secret(name) && !passed.contains(name) && !set.contains(name))
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_recognised_and_ordinary_variables_are_not() {
        for name in [
            "OPENAI_API_KEY",
            "HUD_API_KEY",
            "hud_gateway_url",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "AZURE_STORAGE_KEY",
            "AZURE_STORAGE_CONNECTION_STRING",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "SSH_AUTH_SOCK",
            "GITLAB_PAT",
        ] {
            assert!(looks_like_a_secret(OsStr::new(name)), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "AWS_CA_BUNDLE",
            "AWS_REGION",
            "KEYBOARD",
            "TOKENIZERS_PARALLELISM",
            "SSL_CERT_FILE",
            "PYENV_ROOT",
        ] {
            assert!(!looks_like_a_secret(OsStr::new(name)), "{name}");
        }
    }
}
