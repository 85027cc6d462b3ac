//! A crate that grades with another crate's graders and defines one of its own through a
//! re-export of `grader_core` (`crate = …`), with no direct dependency on it.
#![deny(missing_docs, warnings, clippy::pedantic)]

use std::path::Path;

use grader_scenario_defs::grader_core::{self, EvaluationResult, Gather, GatherError, grader};
use grader_scenario_defs::{FileExists, LogHasLines, ReportedNumber, Strictness};

/// Passes when the answer is short enough.
#[grader(crate = ::grader_scenario_defs::grader_core)]
#[must_use]
pub fn short_answer(answer: &str, limit: usize) -> bool {
    answer.len() <= limit
}

/// Grades a checkout run: the receipt exists, the log has the expected lines, the total is
/// right and the summary is short.
///
/// # Errors
/// When a grader fails or the grades cannot be combined.
pub async fn grade_checkout(
    repo: &Path,
    log: &str,
    summary: &str,
) -> Result<EvaluationResult, GatherError> {
    Gather::new()
        .add(grader_core::Grader::grade(
            FileExists {
                repo,
                file: "receipt.txt",
            },
            0.25,
        ))
        .add(
            LogHasLines {
                log,
                expected: &["paid", "shipped"],
                strictness: Strictness::Loose,
            }
            .grade(0.25),
        )
        .add(
            ReportedNumber {
                repo,
                file: "total.txt",
                target: 42.0,
            }
            .grade(0.25),
        )
        .add(
            ShortAnswer {
                answer: summary,
                limit: 40,
            }
            .grade(0.25),
        )
        .await
}
