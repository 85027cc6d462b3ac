//! The Rust side of the end-to-end evaluation benchmark (`benches/eval/run.py`):
//! `eval-bench OUTPUT SAMPLES [WORKERS [CONCURRENCY]]` grades `SAMPLES` question-answer pairs (the same ones
//! the Python side makes) with four text graders into a fresh JSONL file, one epoch each, and
//! prints the number of lines written, the wall seconds and the CPU seconds of the run (of
//! every thread of the process, from `/proc/self/stat`, Linux) as JSON, with the CPU seconds of
//! the thread that awaits the run (the one that makes the gradings and counts the lines) and
//! the context switches of all the process's threads during the run. Without `WORKERS` it
//! runs on a current-thread runtime (one core); with it, on a multi-threaded runtime of that
//! many worker threads, the grading inside the future so that it runs on them, at most
//! `CONCURRENCY` (64 unless given) at once; with `shared` after it, through
//! `Evaluation::run_shared`, where the worker threads take the samples and make the gradings
//! themselves.
//!
//! `eval-bench OUTPUT SAMPLES plain` grades the same samples in a plain loop on this thread,
//! without the runner and writing nothing (`OUTPUT` is left alone): the graders' own cost, the
//! floor under any runner that writes their lines.
//!
//! `eval-bench OUTPUT SAMPLES split THREADS` is the ceiling the multi-threaded runs are held
//! against: `THREADS` current-thread runs side by side on as many threads of this process,
//! each grading its own `1/THREADS` of the samples into its own file (`OUTPUT.0`, `OUTPUT.1`,
//! ...). No grading crosses a thread and no thread waits on another, so no way of spreading one
//! run over worker threads can beat it; what it loses against `THREADS` times the
//! current-thread run is what the machine loses running threads side by side.

use std::time::Instant;

use grader_core::text::{ContainsAny, ExactMatch, F1Score, NumericMatch};
use grader_core::{EvaluationResult, Grade};
use grader_eval::Evaluation;

/// The `i`th sample, exactly as `benches/eval/run.py` makes it.
fn sample(i: usize) -> (String, String, f64) {
    let number = (i * 13 % 97) as f64;
    let reference = format!("There are {number} marbles in the jar");
    let answer = match i % 5 {
        0 | 1 => reference.clone(),
        2 => format!("I counted {number} marbles."),
        3 => format!("about {} marbles", number + 1.0),
        _ => "I cannot tell from the picture".to_owned(),
    };
    (answer, reference, number)
}

fn grade(answer: &str, reference: &str, number: f64) -> Result<EvaluationResult, String> {
    let subscores = [
        ExactMatch {
            answer,
            expected: reference,
            normalize_text: true,
        }
        .grade(0.4)
        .now(),
        NumericMatch {
            answer,
            expected: number,
            tolerance: 0.0,
        }
        .grade(0.3)
        .now(),
        ContainsAny {
            answer,
            substrings: &["marble", "marbles"],
            case_sensitive: false,
        }
        .grade(0.1)
        .now(),
        F1Score { answer, reference }.grade(0.2).now(),
    ];
    let subscores: Result<Vec<_>, _> = subscores.into_iter().collect();
    Grade::from_subscores(subscores.map_err(|e| e.to_string())?).map_err(|e| e.to_string())
}

/// The CPU time all threads of this process have run for (user and system), where Linux
/// reports it.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command's closing parenthesis; utime and stime are the 14th and
    // 15th fields of the line, in clock ticks.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // Linux reports these in USER_HZ, 100 a second on every architecture.
    Some(ticks / 100.0)
}

/// The CPU time the calling thread has run for, in nanoseconds, where Linux reports it (the
/// first field of `/proc/thread-self/schedstat`).
fn thread_cpu_nanos() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The context switches of every thread of this process alive now, voluntary and not, where
/// Linux reports them (`/proc/self/task/*/status`). Fewer of them is less time lost handing
/// work between threads, and unlike time, the count hardly moves with what else the machine
/// runs.
fn context_switches() -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let status = std::fs::read_to_string(task.ok()?.path().join("status")).ok()?;
        for line in status.lines() {
            if let Some(count) = line
                .strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
            {
                total += count.trim().parse::<u64>().ok()?;
            }
        }
    }
    Some(total)
}

/// How the program is called.
const USAGE: &str = "usage: eval-bench OUTPUT SAMPLES [WORKERS [CONCURRENCY [shared]]] | eval-bench OUTPUT SAMPLES split THREADS | eval-bench OUTPUT SAMPLES plain";

/// The `plain` mode (see the module docs): every sample graded in a loop, nothing written.
fn plain_loop(samples: usize) -> Result<(), Box<dyn std::error::Error>> {
    // One thread: its own CPU time, in nanoseconds rather than the process's hundredths.
    let cpu_started = thread_cpu_nanos();
    let started = Instant::now();
    let mut graded = 0_usize;
    let mut total = 0.0;
    for i in 0..samples {
        let (answer, reference, number) = sample(i);
        let result = grade(&answer, &reference, number)?;
        total += std::hint::black_box(result).reward();
        graded += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "lines": graded,
            "seconds": seconds,
            "cpu_seconds": thread_cpu_nanos()
                .zip(cpu_started)
                .map(|(end, start)| (end - start) as f64 / 1e9),
            "reward_sum": total,
        })
    );
    Ok(())
}

/// The items of the samples numbered `range`: (id, the number `sample` makes it from).
fn items(range: std::ops::Range<usize>) -> impl Iterator<Item = (usize, usize)> {
    range.map(|i| (i, i))
}

/// `evaluation` of `items` as a current-thread runtime runs it: each grading made and graded
/// in the one task (the grading done when the future is made).
async fn in_place(
    evaluation: Evaluation,
    items: impl Iterator<Item = (usize, usize)>,
) -> Result<grader_eval::RunReport, grader_eval::EvalError> {
    evaluation
        .run(items, |item, _epoch| {
            let (answer, reference, number) = sample(item.1);
            std::future::ready(grade(&answer, &reference, number))
        })
        .await
}

/// The `split` mode (see the module docs): `threads` current-thread runs side by side, each of
/// its share of `samples` into its own file beside `output`.
fn side_by_side(
    output: &str,
    samples: usize,
    threads: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    if threads == 0 {
        return Err(USAGE.into());
    }
    let mut runs = Vec::new();
    for t in 0..threads {
        let output = format!("{output}.{t}");
        if std::path::Path::new(&output).exists() {
            std::fs::remove_file(&output)?;
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let range = samples * t / threads..samples * (t + 1) / threads;
        runs.push((runtime, output, range));
    }
    let cpu_started = cpu_seconds();
    let started = Instant::now();
    let written = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .into_iter()
            .map(|(runtime, output, range)| {
                scope.spawn(move || {
                    let evaluation = Evaluation::new(output)
                        .progress(false)
                        .handle_interrupts(false);
                    runtime
                        .block_on(in_place(evaluation, items(range)))
                        .map(|report| report.written)
                        .map_err(|error| error.to_string())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().map_err(|_| "a run panicked".to_owned())?)
            .sum::<Result<usize, String>>()
    })?;
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "lines": written,
            "seconds": seconds,
            "cpu_seconds": cpu_seconds().zip(cpu_started).map(|(end, start)| end - start),
            // Not counted: the threads have ended, and `/proc/self/task` lists only those alive.
            "context_switches": serde_json::Value::Null,
            "threads": threads,
        })
    );
    Ok(())
}

/// Runs the benchmark as the module docs say.
pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [output, samples, split, threads] = &args[..]
        && split == "split"
    {
        return side_by_side(output, samples.parse()?, threads.parse()?);
    }
    if let [_output, samples, plain] = &args[..]
        && plain == "plain"
    {
        return plain_loop(samples.parse()?);
    }
    let (output, samples, workers, concurrency, shared) = match &args[..] {
        [output, samples] => (output, samples, None, 64, false),
        [output, samples, workers] => (output, samples, Some(workers.parse::<usize>()?), 64, false),
        [output, samples, workers, concurrency, rest @ ..]
            if rest.is_empty() || rest == ["shared"] =>
        {
            (
                output,
                samples,
                Some(workers.parse::<usize>()?),
                concurrency.parse::<usize>()?,
                !rest.is_empty(),
            )
        }
        _ => return Err(USAGE.into()),
    };
    let samples: usize = samples.parse()?;
    if std::path::Path::new(output).exists() {
        std::fs::remove_file(output)?;
    }
    // The runtime is built first and dropped after the counts are read, so that its worker
    // threads are counted.
    let runtime = match workers {
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        Some(workers) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()?,
    };
    let switches_started = context_switches();
    let cpu_started = cpu_seconds();
    let awaiting_started = thread_cpu_nanos();
    let started = Instant::now();
    let evaluation = Evaluation::new(output)
        .progress(false)
        .handle_interrupts(false);
    let items = items(0..samples);
    let grading = |item: std::sync::Arc<(usize, usize)>, _epoch| async move {
        let (answer, reference, number) = sample(item.1);
        grade(&answer, &reference, number)
    };
    let evaluation = evaluation.concurrency(concurrency);
    let report = match workers {
        None => runtime.block_on(in_place(evaluation, items))?,
        Some(_) if shared => runtime.block_on(evaluation.run_shared(items, grading))?,
        Some(_) => runtime.block_on(evaluation.run(items, grading))?,
    };
    let seconds = started.elapsed().as_secs_f64();
    let switches = context_switches()
        .zip(switches_started)
        .map(|(end, start)| end - start);
    // This thread is the one that awaits the run (on a multi-threaded runtime too: `block_on`
    // polls its future here, not on a worker).
    let awaiting = thread_cpu_nanos()
        .zip(awaiting_started)
        .map(|(end, start)| (end - start) as f64 / 1e9);
    println!(
        "{}",
        serde_json::json!({
            "lines": report.written,
            "seconds": seconds,
            "cpu_seconds": cpu_seconds().zip(cpu_started).map(|(end, start)| end - start),
            "awaiting_thread_cpu_seconds": awaiting,
            "context_switches": switches,
            "workers": workers,
            "concurrency": workers.map(|_| concurrency),
        })
    );
    drop(runtime);
    Ok(())
}
