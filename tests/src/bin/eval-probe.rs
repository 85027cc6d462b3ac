//! An evaluation in its own process, for the tests that kill or interrupt one
//! (`tests/eval_run.rs`):
//!
//! `eval-probe OUTPUT text SAMPLES EPOCHS CONCURRENCY` grades `SAMPLES` question-answer pairs
//! with four text graders (deterministic; `q13` fails and `q29` panics on every epoch), each
//! grading first waiting `EVAL_PROBE_DELAY_MS` milliseconds (0 by default).
//!
//! `eval-probe OUTPUT sleep SAMPLES EPOCHS CONCURRENCY` grades each sample with a `BashGrader`
//! that appends its shell's pid to `EVAL_PROBE_PIDS` and sleeps `EVAL_PROBE_SLEEP` seconds;
//! the first `EVAL_PROBE_FAST` samples (0 by default) run `true` instead.
//!
//! Both run on a current-thread runtime, or with `EVAL_PROBE_WORKERS` set to a number above 0
//! on a multi-threaded one with that many workers; with `EVAL_PROBE_SHARED=1` through
//! `Evaluation::run_shared` (the workers make the gradings), else through `Evaluation::run`.
//!
//! Prints the run's report and exits with its `exit_code()`: 130 when interrupted by Ctrl-C, 0
//! otherwise.

use std::sync::Arc;
use std::time::Duration;

use grader_core::text::{ContainsAny, ExactMatch, F1Score, NumericMatch};
use grader_core::{BashGrader, EvaluationResult, Gather, Grade};
use grader_eval::Evaluation;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `i`th question's answer and reference: some exact, some close, some wrong.
fn qa(i: usize) -> (String, String) {
    let reference = format!("The answer is {} apples", i * 7);
    let answer = match i % 4 {
        0 => reference.clone(),
        1 => format!("the answer is {} apples!", i * 7),
        2 => format!("I think {} apples, maybe", i * 7 + 1),
        _ => "no idea".to_owned(),
    };
    (answer, reference)
}

fn grade_text(i: usize, answer: &str, reference: &str) -> Result<EvaluationResult, String> {
    if i == 13 {
        return Err("sample 13 always fails".to_owned());
    }
    assert!(i != 29, "sample 29 always panics");
    let expected = (i * 7) as f64;
    let subscores = [
        ExactMatch {
            answer,
            expected: reference,
            normalize_text: true,
        }
        .grade(0.4)
        .now(),
        ContainsAny {
            answer,
            substrings: &["apples", "pears"],
            case_sensitive: false,
        }
        .grade(0.1)
        .now(),
        NumericMatch {
            answer,
            expected,
            tolerance: 0.0,
        }
        .grade(0.3)
        .now(),
        F1Score { answer, reference }.grade(0.2).now(),
    ];
    let subscores: Result<Vec<_>, _> = subscores.into_iter().collect();
    Grade::from_subscores(subscores.map_err(|e| e.to_string())?).map_err(|e| e.to_string())
}

fn main() -> Result<std::process::ExitCode, Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [output, mode, samples, epochs, concurrency] = &args[..] else {
        return Err("usage: eval-probe OUTPUT text|sleep SAMPLES EPOCHS CONCURRENCY".into());
    };
    let samples: usize = samples.parse()?;
    let evaluation = Evaluation::new(output)
        .epochs(epochs.parse()?)
        .concurrency(concurrency.parse()?)
        .progress(false);
    let ids = (0..samples).map(|i| (format!("q{i}"), i));
    // EVAL_PROBE_WORKERS > 0 runs on a multi-threaded runtime of that many workers, where
    // the gradings run in lanes; otherwise on a current-thread one, polled in place.
    let runtime = match env_number("EVAL_PROBE_WORKERS", 0) {
        0 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        workers => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(usize::try_from(workers)?)
            .enable_all()
            .build()?,
    };
    let shared = env_number("EVAL_PROBE_SHARED", 0) == 1;
    // Runs the grading function through `run` or `run_shared`.
    macro_rules! run {
        ($grade:expr) => {
            if shared {
                runtime.block_on(evaluation.run_shared(ids, $grade))?
            } else {
                runtime.block_on(evaluation.run(ids, $grade))?
            }
        };
    }
    let report = match mode.as_str() {
        "text" => {
            let delay = Duration::from_millis(env_number("EVAL_PROBE_DELAY_MS", 0));
            run!(move |sample: Arc<(String, usize)>, _epoch| async move {
                tokio::time::sleep(delay).await;
                let (answer, reference) = qa(sample.1);
                grade_text(sample.1, &answer, &reference)
            })
        }
        "sleep" => {
            let pids = std::env::var("EVAL_PROBE_PIDS")?;
            let seconds = env_number("EVAL_PROBE_SLEEP", 30);
            let fast = env_number("EVAL_PROBE_FAST", 0) as usize;
            run!(move |sample: Arc<(String, usize)>, _epoch| {
                let command = if sample.1 < fast {
                    "true".to_owned()
                } else {
                    format!("echo $$ >> '{pids}'; sleep {seconds}")
                };
                Gather::new().add(BashGrader::new(command).grade(1.0)).run()
            })
        }
        other => return Err(format!("unknown mode {other}").into()),
    };
    println!("{report:?}");
    Ok(report.exit_code())
}
