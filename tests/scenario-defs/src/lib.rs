//! Graders for a checkout scenario, defined here and used from another crate
//! (`grader-scenario-use`), which reaches `grader_core` only through this crate's re-export.
#![deny(missing_docs, warnings, clippy::pedantic)]

use std::path::Path;

pub use grader_core;
use grader_core::{Info, grader};
use serde::Serialize;

/// How strict a check is.
#[derive(Debug, Clone, Copy, Serialize)]
pub enum Strictness {
    /// Exact match.
    Exact,
    /// Case-insensitive match.
    Loose,
}

/// Passes when `file` exists under `repo`.
#[grader]
#[must_use]
pub fn file_exists(repo: &Path, file: &str) -> bool {
    repo.join(file).exists()
}

/// The fraction of `expected` lines found in `log`, with the missing ones in info.
#[grader(name = "log_lines", skip(log))]
#[must_use]
pub fn log_has_lines(log: &str, expected: &[&str], strictness: Strictness) -> (f64, Info) {
    let found = |line: &&str| match strictness {
        Strictness::Exact => log.contains(*line),
        Strictness::Loose => log.to_lowercase().contains(&line.to_lowercase()),
    };
    let missing: Vec<&str> = expected
        .iter()
        .filter(|line| !found(line))
        .copied()
        .collect();
    let mut info = Info::new();
    info.insert("missing".into(), missing.clone().into());
    #[allow(clippy::cast_precision_loss)]
    let value = if expected.is_empty() {
        1.0
    } else {
        (expected.len() - missing.len()) as f64 / expected.len() as f64
    };
    (value, info)
}

/// Reads a number from a file under `repo` and scores it against `target`.
///
/// # Errors
/// When the file cannot be read or does not hold a number.
#[grader]
pub async fn reported_number(repo: &Path, file: &str, target: f64) -> Result<f64, String> {
    let text = std::fs::read_to_string(repo.join(file)).map_err(|e| format!("{file}: {e}"))?;
    let number: f64 = text.trim().parse().map_err(|e| format!("{file}: {e}"))?;
    std::future::ready(()).await;
    Ok(if (number - target).abs() < 1e-9 {
        1.0
    } else {
        0.0
    })
}

/// Crate-private: callable and gradable here, not from other crates.
#[grader]
pub(crate) fn internal_check(value: f64) -> f64 {
    value
}

/// Grades the crate-private grader, so it is used.
///
/// # Errors
/// When the value is not a score.
pub fn run_internal(value: f64) -> Result<grader_core::SubScore, grader_core::GraderError> {
    InternalCheck { value }.grade(1.0).now()
}
