//! One shard of an evaluation, as a scheduler runs it on one of N machines: the shard is read
//! from the environment the scheduler sets (a Kubernetes Indexed Job, a Slurm job array, an
//! AWS Batch array job, or `GRADER_SHARD=i/n`), the shard's lines go to
//! `DIR/part-I-of-N.jsonl`, and `grader merge` joins the parts when every shard is done.
//!
//! ```sh
//! # Three shards by hand, then the merge:
//! for i in 0 1 2; do
//!   GRADER_SHARD=$i/3 cargo run -p grader-examples --example sharded -- results/
//! done
//! cargo run -p grader-cli -- merge -o results/all.jsonl results/part-*-of-3.jsonl
//! cargo run -p grader-cli -- summary results/all.jsonl
//! ```
//!
//! Outside a scheduler, with no `GRADER_SHARD`, it says what to set and exits 2: a run that
//! silently did "shard 0 of 1" on every machine of an array would grade everything N times.
//! It exits 130 when stopped by Ctrl-C (run it again to resume).

use std::path::PathBuf;
use std::process::ExitCode;

use grader_core::text::{ExactMatch, F1Score};
use grader_core::{EvaluationResult, Gather, GatherError};
use grader_eval::{Evaluation, Shard};

/// The data set: the same on every machine (each grades its own part of it).
fn samples() -> impl Iterator<Item = (String, (String, String))> {
    (0..1000).map(|i| {
        let reference = format!("The answer is {}", i * 3);
        let answer = if i % 4 == 0 {
            format!("the answer is {}", i * 3 + 1)
        } else {
            reference.clone()
        };
        (format!("q{i:04}"), (answer, reference))
    })
}

async fn grade(answer: &str, reference: &str) -> Result<EvaluationResult, GatherError> {
    Gather::new()
        .add(
            ExactMatch {
                answer,
                expected: reference,
                normalize_text: true,
            }
            .grade(0.7),
        )
        .add(F1Score { answer, reference }.grade(0.3))
        .await
}

#[tokio::main]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let dir: PathBuf = std::env::args().nth(1).unwrap_or_else(|| ".".into()).into();
    let shard = match Shard::from_env() {
        Ok(shard) => shard,
        Err(error) => {
            eprintln!("sharded: {error}");
            return Ok(ExitCode::from(2));
        }
    };
    std::fs::create_dir_all(&dir)?;
    let output = dir.join(format!("part-{}-of-{}.jsonl", shard.index(), shard.count()));
    let report = Evaluation::new(&output)
        .shard(shard)
        .concurrency(64)
        .run(samples(), |sample, _epoch| async move {
            let (answer, reference) = &sample.1;
            grade(answer, reference).await
        })
        .await?;
    println!(
        "shard {}/{}: {} lines written to {} ({} resumed, {} errored)",
        shard.index(),
        shard.count(),
        report.written,
        output.display(),
        report.resumed,
        report.errored
    );
    Ok(report.exit_code())
}
