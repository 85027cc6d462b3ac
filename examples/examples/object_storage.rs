//! An evaluation whose results live in object storage rather than on this machine's disk: its
//! lines go to numbered chunk objects under an `s3://`, `gs://` or `az://` URL as they finish,
//! a second run resumes from the chunks already there, the summary is read back from the
//! URL, and the chunks are merged into one object beside them (`URL.jsonl`), which any reader
//! reads as a results file. Credentials come from the environment, as `object_store` reads
//! them.
//!
//! ```sh
//! export AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… AWS_REGION=eu-west-1
//! # an S3-compatible server instead of AWS: AWS_ENDPOINT=http://127.0.0.1:9000 AWS_ALLOW_HTTP=true
//! cargo run -p grader-examples --example object_storage -- s3://my-bucket/evals/demo
//! cargo run -p grader-examples --example object_storage -- s3://my-bucket/evals/demo   # resumes
//! cargo run -p grader-cli -- summary s3://my-bucket/evals/demo
//! cargo run -p grader-cli -- show s3://my-bucket/evals/demo.jsonl     # the merged object
//! ```
//!
//! A second argument `i/n` does one shard of the run (each shard writes its own
//! `part-i-of-n/` folder under the URL). It exits 2 without a URL, 1 when the store fails (the
//! error names the URL, never a credential).

use std::process::ExitCode;
use std::time::Duration;

use grader_core::text::{ExactMatch, F1Score};
use grader_core::{EvaluationResult, Gather, GatherError};
use grader_eval::store::StoreOptions;
use grader_eval::{Evaluation, Shard, SummaryOptions, merge};

/// The data set: question ids with an answer and a reference.
fn samples() -> impl Iterator<Item = (String, (String, String))> {
    (0..500).map(|i| {
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
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(url) = args.first() else {
        eprintln!("usage: object_storage s3://BUCKET/PREFIX [i/n]");
        return ExitCode::from(2);
    };
    let shard = match args.get(1).map(|text| text.parse::<Shard>()) {
        None => Shard::ALL,
        Some(Ok(shard)) => shard,
        Some(Err(error)) => {
            eprintln!("object_storage: {error}");
            return ExitCode::from(2);
        }
    };
    let run = Evaluation::new(url)
        .epochs(2)
        .concurrency(64)
        .shard(shard)
        // A chunk every 200 lines or 5 seconds: a crash loses at most about that much.
        .store_options(StoreOptions::default().upload_every(200, Duration::from_secs(5)))
        .run(samples(), |sample, _epoch| async move {
            let (answer, reference) = &sample.1;
            grade(answer, reference).await
        })
        .await;
    let report = match run {
        Ok(report) => report,
        Err(error) => {
            eprintln!("object_storage: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "run: {} lines written to {url}, {} resumed, {} errored",
        report.written, report.resumed, report.errored
    );
    // Every chunk of every shard under the URL, read back.
    match Evaluation::summarize(url.as_ref(), SummaryOptions::default()) {
        Ok(summary) => println!(
            "summary: {} lines, {} samples, mean {:.4}",
            summary.lines, summary.samples, summary.reward.mean
        ),
        Err(error) => {
            eprintln!("object_storage: {error}");
            return ExitCode::FAILURE;
        }
    }
    // Every chunk merged into one object beside them, stored whole once the merge succeeds.
    // `merge` blocks (it reads and uploads on threads of its own): off the runtime's workers.
    let merged = format!("{url}.jsonl");
    let inputs = vec![url.into()];
    let output = merged.clone();
    match tokio::task::spawn_blocking(move || merge(&inputs, output.as_ref())).await {
        Ok(Ok(report)) => {
            println!("merged: {} lines into {merged}", report.written);
            ExitCode::SUCCESS
        }
        Ok(Err(error)) => {
            eprintln!("object_storage: {error}");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("object_storage: the merge stopped: {error}");
            ExitCode::FAILURE
        }
    }
}
