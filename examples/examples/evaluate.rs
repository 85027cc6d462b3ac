//! An evaluation: 300 question-answer samples, 3 epochs each, graded by four text graders into
//! a JSONL file; the first run is cut short (as a crash or Ctrl-C would), the second resumes
//! it (through `run_shared`, the worker threads making the gradings), and the lines are
//! summarized.
//!
//! ```sh
//! cargo run -p grader-examples --example evaluate            # into a temporary folder
//! cargo run -p grader-examples --example evaluate -- out.jsonl   # or into a file of yours
//! ```
//!
//! Run it on a terminal and press Ctrl-C during the second run: it stops, keeps every finished
//! line, says how to resume and exits with status 130 (not 0: half a run is not a success);
//! run it again with the same file and it carries on.
//!
//! The file is what the `grader` command reads: a page that shows why each sample scored what
//! it did, and a log for Inspect AI's viewer:
//!
//! ```sh
//! cargo run -p grader-cli -- report out.jsonl -o report.html
//! mkdir -p logs && cargo run -p grader-cli -- export --inspect out.jsonl -o logs/
//! inspect view --log-dir logs/
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use grader_core::text::{ContainsAny, ExactMatch, F1Score, NumericMatch};
use grader_core::{EvaluationResult, Gather, GatherError};
use grader_eval::{Evaluation, Sample, Summary, SummaryOptions};

/// One question: the agent's answer in each of three attempts, and the reference answer.
struct Qa {
    id: usize,
    answers: [String; 3],
    reference: String,
    number: f64,
}

impl Sample for Qa {
    fn id(&self) -> String {
        format!("qa-{:03}", self.id)
    }
}

/// Samples as an agent might have answered them, three times each: right, right but phrased
/// differently, off by one, or wrong.
fn samples() -> impl Iterator<Item = Qa> {
    (0..300).map(|id| {
        let number = (id * 13 % 97) as f64;
        let reference = format!("There are {number} marbles in the jar");
        let answer = |attempt: usize| match (id * 7 + attempt * 3) % 5 {
            0 | 1 => reference.clone(),
            2 => format!("I counted {number} marbles."),
            3 => format!("about {} marbles", number + 1.0),
            _ => "I cannot tell from the picture".to_owned(),
        };
        Qa {
            id,
            answers: [answer(0), answer(1), answer(2)],
            reference,
            number,
        }
    })
}

/// The grading function: four text graders, combined by weight. The short sleep stands in for
/// a grader that waits on something (a command, a judge).
async fn grade(qa: Arc<Qa>, epoch: u32) -> Result<EvaluationResult, GatherError> {
    tokio::time::sleep(Duration::from_millis(2)).await;
    let answer = qa.answers[(epoch as usize - 1) % 3].as_str();
    Gather::new()
        .add(
            ExactMatch {
                answer,
                expected: &qa.reference,
                normalize_text: true,
            }
            .grade(0.4),
        )
        .add(
            NumericMatch {
                answer,
                expected: qa.number,
                tolerance: 0.0,
            }
            .grade(0.3),
        )
        .add(
            ContainsAny {
                answer,
                substrings: &["marble", "marbles"],
                case_sensitive: false,
            }
            .grade(0.1),
        )
        .add(
            F1Score {
                answer,
                reference: &qa.reference,
            }
            .grade(0.2),
        )
        .await
}

#[tokio::main]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let folder = tempfile::tempdir()?;
    let output: PathBuf = match std::env::args().nth(1) {
        Some(path) => path.into(),
        None => folder.path().join("results.jsonl"),
    };
    let evaluation = Evaluation::new(&output).epochs(3).concurrency(32);

    // First run, cut short after 100 ms: dropping the run cancels the gradings in flight and
    // keeps every line already written.
    let first = tokio::time::timeout(Duration::from_millis(100), evaluation.run(samples(), grade));
    match first.await {
        Ok(report) => println!("first run finished: {} lines written", report?.written),
        Err(_) => println!("first run stopped after 100 ms"),
    }

    // Second run, same file: it skips what is done and grades the rest. It goes through
    // `run_shared`, where the worker threads take the samples and call `grade` themselves
    // (the samples, their iterator and `grade` can be shared among threads, as here), so the
    // task awaiting the run only counts lines: the faster way over every core when gradings
    // are cheap. `run` would do the same with samples or a grading function that cannot.
    let report = evaluation.run_shared(samples(), grade).await?;
    println!(
        "second run: {} already done, {} graded now ({} errored){}",
        report.resumed,
        report.written,
        report.errored,
        if report.interrupted {
            "; interrupted, run again to finish"
        } else {
            ""
        }
    );

    // A reward of 0.9 or more passes: right, or right but phrased differently.
    let options = SummaryOptions::default().threshold(0.9);
    let summary: Summary = Evaluation::summarize(&output, options)?;
    println!("\n== summary of {}\n{summary}", output.display());
    println!("== as JSON:\n{}", serde_json::to_string_pretty(&summary)?);
    // 130 when Ctrl-C stopped the run, so that a script or CI job sees it unfinished.
    Ok(report.exit_code())
}
