//! Evaluations in object storage, in their own process, for `tests/eval_store.rs` (which
//! points them at a real S3-compatible server through the `AWS_*` environment, or at Azurite
//! through the `AZURE_*` one):
//!
//! - `store-probe run OUTPUT SAMPLES EPOCHS CONCURRENCY [SHARD]` grades `SAMPLES` samples
//!   (`p{i}`; `p5` fails on every epoch) into `OUTPUT`, a local file or a URL, each grading
//!   first waiting `STORE_PROBE_DELAY_MS` milliseconds (0 by default). Chunks of
//!   `STORE_PROBE_CHUNK` lines (default 1000) or every `STORE_PROBE_INTERVAL_MS` (with the
//!   chunk size set; default a minute), retries `STORE_PROBE_RETRIES` (default 10,
//!   within 3 minutes; with it set, within 2 seconds). On a current-thread runtime, or with
//!   `STORE_PROBE_WORKERS` set above 0 on a multi-threaded one with that many workers, through
//!   `Evaluation::run_shared` with `STORE_PROBE_SHARED=1` (else `Evaluation::run`). Prints
//!   the run's report.
//! - `store-probe merge OUT INPUT...` merges the inputs into `OUT`, a local file or a URL.
//! - `store-probe summary INPUT...` prints the summary of the inputs as JSON (without the
//!   time spent grading, which differs between runs).
//!
//! Any error is printed on stderr as `store-probe: ERROR` and exits 1.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use grader_core::text::{exact_match, f1_score};
use grader_core::{Grade, SubScore};
use grader_eval::store::StoreOptions;
use grader_eval::{Evaluation, Shard, SummaryOptions, merge, summarize_files};

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn grade(i: usize, epoch: u32) -> Result<grader_core::EvaluationResult, String> {
    if i == 5 {
        return Err("sample 5 always fails".to_owned());
    }
    let reference = format!("the answer is {}", i * 3);
    let answer = match (i + epoch as usize) % 3 {
        0 => reference.clone(),
        1 => format!("answer {}", i * 3),
        _ => "no idea".to_owned(),
    };
    let exact = SubScore::new("exact", exact_match(&answer, &reference))
        .and_then(|s| s.with_weight(0.6))
        .map_err(|e| e.to_string())?;
    let f1 = SubScore::new("f1", f1_score(&answer, &reference))
        .and_then(|s| s.with_weight(0.4))
        .map_err(|e| e.to_string())?;
    Grade::from_subscores([exact, f1]).map_err(|e| e.to_string())
}

fn run(args: &[String]) -> Result<String, Box<dyn std::error::Error>> {
    let [output, samples, epochs, concurrency, rest @ ..] = args else {
        return Err("usage: store-probe run OUTPUT SAMPLES EPOCHS CONCURRENCY [SHARD]".into());
    };
    let shard: Shard = match rest.first() {
        Some(shard) => shard.parse()?,
        None => Shard::ALL,
    };
    let mut options = StoreOptions::default();
    if let Some(lines) = env_number("STORE_PROBE_CHUNK") {
        let interval = env_number("STORE_PROBE_INTERVAL_MS").unwrap_or(60_000);
        options = options.upload_every(lines as usize, Duration::from_millis(interval));
    }
    if let Some(retries) = env_number("STORE_PROBE_RETRIES") {
        options = options.retries(retries as usize, Duration::from_secs(2));
    }
    let delay = Duration::from_millis(env_number("STORE_PROBE_DELAY_MS").unwrap_or(0));
    let evaluation = Evaluation::new(output)
        .epochs(epochs.parse()?)
        .concurrency(concurrency.parse()?)
        .shard(shard)
        .store_options(options)
        .handle_interrupts(false)
        .progress(false);
    let samples = (0..samples.parse::<usize>()?).map(|i| (format!("p{i}"), i));
    let runtime = match env_number("STORE_PROBE_WORKERS").filter(|n| *n > 0) {
        Some(workers) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers as usize)
            .enable_all()
            .build()?,
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
    };
    let grading = move |sample: std::sync::Arc<(String, usize)>, epoch| async move {
        tokio::time::sleep(delay).await;
        grade(sample.1, epoch)
    };
    let report = if env_number("STORE_PROBE_SHARED") == Some(1) {
        runtime.block_on(evaluation.run_shared(samples, grading))?
    } else {
        runtime.block_on(evaluation.run(samples, grading))?
    };
    Ok(format!("{report:?}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.split_first() {
        Some((mode, rest)) if mode == "run" => run(rest),
        Some((mode, [output, inputs @ ..])) if mode == "merge" => {
            let inputs: Vec<PathBuf> = inputs.iter().map(PathBuf::from).collect();
            merge(&inputs, output.as_ref())
                .map(|report| format!("{report:?}"))
                .map_err(Into::into)
        }
        Some((mode, inputs)) if mode == "summary" => {
            summarize_files(inputs, SummaryOptions::default())
                .map_err(Into::into)
                .and_then(|mut summary| {
                    summary.grading_secs = 0.0;
                    serde_json::to_string(&summary).map_err(Into::into)
                })
        }
        _ => Err("usage: store-probe run|merge|summary ...".into()),
    };
    match outcome {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("store-probe: {error}");
            ExitCode::FAILURE
        }
    }
}
