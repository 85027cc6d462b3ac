//! The evaluation runner with real processes and files: a run killed with SIGKILL and resumed,
//! a torn last line, shards merged, failures and panics recorded, and Ctrl-C on a run of
//! `sleep` commands.

use grader_tests::child::{self, Bounded as _};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use grader_core::limit::{Limiter, Resource};
use grader_core::{BashGrader, EvaluationResult, Gather, Grade, SubScore};
use grader_eval::line::{Entry, read_lines};
use grader_eval::{
    ErrorKind, EvalError, Evaluation, Line, Shard, Summary, SummaryOptions, merge, summarize_files,
};
use grader_tests::lines::by_pair;

const PROBE: &str = env!("CARGO_BIN_EXE_eval-probe");

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("eval-run")
        .join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("clear the scratch folder");
    }
    std::fs::create_dir_all(&dir).expect("make the scratch folder");
    dir
}

fn lines(path: &Path) -> Vec<Line> {
    read_lines(path)
        .expect("open the results")
        .map(|entry| match entry.expect("a valid line") {
            Entry::Line(line) => *line,
            Entry::Torn { offset } => panic!("{}: torn line at {offset}", path.display()),
        })
        .collect()
}

fn probe(output: &Path, mode: &str, samples: usize, epochs: u32, concurrency: usize) -> Command {
    // SIGINT at its default even where this run ignores it (a background job): the Ctrl-C
    // tests signal the probe.
    let mut command = child::with_default_signals(PROBE);
    command
        .arg(output)
        .arg(mode)
        .arg(samples.to_string())
        .arg(epochs.to_string())
        .arg(concurrency.to_string())
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn finish(child: Child) -> (i32, String) {
    let output = child::wait_with_output(child, "the probe");
    let code = output.status.code().unwrap_or(-1);
    (code, String::from_utf8_lossy(&output.stdout).into_owned())
}

fn count_lines(path: &Path) -> usize {
    std::fs::read(path)
        .map(|bytes| bytes.iter().filter(|b| **b == b'\n').count())
        .unwrap_or(0)
}

/// Waits (polling, without a deadline that decides the test) until `ready` holds or the child
/// has exited.
fn wait_until(child: &mut Child, mut ready: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !ready() {
        if child.try_wait().expect("poll the probe").is_some() {
            return;
        }
        if start.elapsed() > child::WATCHDOG {
            let _ = child.kill();
            panic!("the probe never got ready");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_run_killed_with_sigkill_resumes_to_every_pair_exactly_once() {
    killed_and_resumed("sigkill", 0, false);
}

/// On two worker threads, where the gradings run in lanes.
#[test]
fn a_multi_threaded_run_killed_with_sigkill_resumes_to_every_pair_exactly_once() {
    killed_and_resumed("sigkill-threads", 2, false);
}

/// Through `run_shared`, where the lanes make the gradings themselves.
#[test]
fn a_shared_run_killed_with_sigkill_resumes_to_every_pair_exactly_once() {
    killed_and_resumed("sigkill-shared", 2, true);
}

/// The probe, on `workers` worker threads (a current-thread runtime for 0), through
/// `run_shared` when `shared`.
fn probe_on(
    output: &Path,
    mode: &str,
    samples: usize,
    epochs: u32,
    concurrency: usize,
    workers: usize,
    shared: bool,
) -> Command {
    let mut command = probe(output, mode, samples, epochs, concurrency);
    command
        .env("EVAL_PROBE_WORKERS", workers.to_string())
        .env("EVAL_PROBE_SHARED", if shared { "1" } else { "0" });
    command
}

fn killed_and_resumed(name: &str, workers: usize, shared: bool) {
    let dir = scratch(name);
    let (samples, epochs) = (300, 2);
    let reference = dir.join("reference.jsonl");
    let (code, _) = finish(
        probe_on(&reference, "text", samples, epochs, 8, workers, shared)
            .spawn()
            .expect("start the reference run"),
    );
    assert_eq!(code, 0);
    let expected = by_pair(&reference);
    assert_eq!(expected.len(), samples * epochs as usize);

    let output = dir.join("killed.jsonl");
    let mut child = probe_on(&output, "text", samples, epochs, 8, workers, shared)
        .env("EVAL_PROBE_DELAY_MS", "5")
        .spawn()
        .expect("start the run to kill");
    wait_until(&mut child, || count_lines(&output) >= 100);
    child.kill().expect("SIGKILL the run");
    let (code, _) = finish(child);
    assert_eq!(code, -1, "the run was killed by a signal, not finished");
    let written = count_lines(&output);
    assert!(
        written >= 100 && written < expected.len(),
        "{written} lines"
    );

    // A crash in the middle of a write leaves a torn last line: make one.
    let torn = r#"{"v":1,"id":"q299","epoch":2,"duration_secs":0.1,"error":null,"res"#;
    let mut bytes = std::fs::read(&output).expect("read");
    bytes.extend_from_slice(torn.as_bytes());
    std::fs::write(&output, bytes).expect("write the torn line");

    let (code, report) = finish(
        probe_on(&output, "text", samples, epochs, 8, workers, shared)
            .spawn()
            .expect("start the resumed run"),
    );
    assert_eq!(code, 0);
    assert!(report.contains("torn_line: true"), "{report}");
    assert!(report.contains(&format!("resumed: {written}")), "{report}");
    let resumed = by_pair(&output);
    assert_eq!(resumed, expected, "every pair once, with the same results");
}

/// A write that fails partway (the file reaches the process's file size limit, `ulimit -f`)
/// stops the run with an error naming the file; nothing is written after it, so the file
/// holds whole lines and at most a torn last one, and the run resumed without the limit ends
/// with every pair exactly once. On one core the awaiting task writes; on worker threads the
/// lanes append to the file themselves.
#[test]
fn a_write_failing_mid_run_stops_it_and_the_resumed_run_has_every_pair_once() {
    write_failing_mid_run("write-fails", 0, false);
}

#[test]
fn a_write_failing_mid_run_on_worker_threads_stops_it_and_the_resumed_run_has_every_pair_once() {
    write_failing_mid_run("write-fails-threads", 2, false);
}

/// Through `run_shared`, where the lanes make the gradings themselves.
#[test]
fn a_write_failing_mid_shared_run_stops_it_and_the_resumed_run_has_every_pair_once() {
    write_failing_mid_run("write-fails-shared", 2, true);
}

fn write_failing_mid_run(name: &str, workers: usize, shared: bool) {
    let dir = scratch(name);
    let (samples, epochs) = (400, 2);
    let reference = dir.join("reference.jsonl");
    let (code, _) = finish(
        probe_on(&reference, "text", samples, epochs, 16, workers, shared)
            .spawn()
            .expect("start the reference run"),
    );
    assert_eq!(code, 0);
    let expected = by_pair(&reference);
    let full = std::fs::metadata(&reference).expect("the reference").len();

    // Past 64 KiB a write fails with EFBIG (the signal it would raise is ignored).
    let output = dir.join("limited.jsonl");
    let limited = Command::new("bash")
        .arg("-c")
        .arg(r#"trap '' XFSZ; ulimit -f 64; exec "$@""#)
        .arg("bash")
        .arg(PROBE)
        .arg(&output)
        .args(["text", &samples.to_string(), &epochs.to_string(), "16"])
        .env("EVAL_PROBE_WORKERS", workers.to_string())
        .env("EVAL_PROBE_SHARED", if shared { "1" } else { "0" })
        .env("RUST_BACKTRACE", "0")
        .output_bounded();
    let stderr = String::from_utf8_lossy(&limited.stderr);
    assert_ne!(limited.status.code(), Some(0), "the run failed: {stderr}");
    assert!(
        stderr.contains(&output.display().to_string()) && stderr.contains("File too large"),
        "the error names the file and the cause: {stderr}"
    );
    let written = std::fs::read(&output).expect("the limited output");
    assert!(
        full > 2 * 65_536,
        "the reference ({full} bytes) is past the limit"
    );
    assert!(
        written.len() <= 65_536 && written.len() > 32_768,
        "{} bytes",
        written.len()
    );
    // Whole lines up to the last newline (each parses); after it, at most a torn line.
    let whole = &written[..written
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1)];
    let kept = whole
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    for raw in whole.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        serde_json::from_slice::<Line>(raw).expect("a whole line");
    }

    let (code, report) = finish(
        probe_on(&output, "text", samples, epochs, 16, workers, shared)
            .spawn()
            .expect("start the resumed run"),
    );
    assert_eq!(code, 0, "{report}");
    assert!(report.contains(&format!("resumed: {kept}")), "{report}");
    assert_eq!(
        report.contains("torn_line: true"),
        whole.len() < written.len(),
        "{report}"
    );
    assert_eq!(
        by_pair(&output),
        expected,
        "every pair once, with the same results"
    );
}

/// An output that is not a regular file is written to, never read back to resume: `/dev/full`
/// (which reads as endless zeros) fails the run at its first write with an error naming it,
/// on one core and on worker threads, rather than reading forever.
#[test]
fn an_output_that_is_a_device_fails_at_its_first_write_and_is_not_read() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    for workers in ["0", "2"] {
        let mut child = probe(Path::new("/dev/full"), "text", 20, 1, 4)
            .env("EVAL_PROBE_WORKERS", workers)
            .spawn()
            .expect("start the probe");
        // A safety stop so that a hang fails the test instead of stalling the suite.
        let started = std::time::Instant::now();
        while child.try_wait().expect("poll the probe").is_none() {
            if started.elapsed() > Duration::from_secs(60) {
                child.kill().expect("kill the probe");
                panic!("the run on /dev/full did not end ({workers} workers)");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let output = child::wait_with_output(child, "the probe");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("/dev/full") && stderr.contains("No space left on device"),
            "{stderr}"
        );
    }
}

fn qa_result(i: usize) -> Result<EvaluationResult, String> {
    let exact = SubScore::new("exact", if i.is_multiple_of(3) { 1.0 } else { 0.0 })
        .and_then(|s| s.with_weight(0.7))
        .map_err(|e| e.to_string())?;
    let partial = SubScore::new("partial", (i % 5) as f64 / 4.0)
        .and_then(|s| s.with_weight(0.3))
        .map_err(|e| e.to_string())?;
    Grade::from_subscores([exact, partial]).map_err(|e| e.to_string())
}

async fn run_qa(output: &Path, shard: Shard) -> Result<grader_eval::RunReport, EvalError> {
    let samples = (0..200).map(|i| (format!("s{i}"), i));
    Evaluation::new(output)
        .epochs(3)
        .concurrency(5)
        .shard(shard)
        .handle_interrupts(false)
        .run(samples, |sample, epoch| async move {
            if sample.1 == 7 && epoch == 2 {
                return Err("no answer".to_owned());
            }
            qa_result(sample.1 + epoch as usize)
        })
        .await
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

fn summary_without_time(path: &Path) -> Summary {
    let mut summary =
        Evaluation::summarize(path, SummaryOptions::default()).expect("summarize the results");
    summary.grading_secs = 0.0;
    summary
}

#[test]
fn three_shards_merged_equal_one_unsharded_run() {
    let dir = scratch("shards");
    let runtime = runtime();
    let whole = dir.join("whole.jsonl");
    runtime
        .block_on(run_qa(&whole, Shard::ALL))
        .expect("the unsharded run");

    let mut parts = Vec::new();
    let mut counts = Vec::new();
    for index in 0..3 {
        let part = dir.join(format!("part-{index}.jsonl"));
        let shard: Shard = format!("{index}/3").parse().expect("a shard");
        let report = runtime
            .block_on(run_qa(&part, shard))
            .expect("a shard's run");
        counts.push(report.written);
        assert_eq!(report.written / 3 + report.other_shards, 200);
        parts.push(part);
    }
    assert!(
        counts.iter().all(|c| *c > 0),
        "every shard has work: {counts:?}"
    );
    let merged = dir.join("merged.jsonl");
    let report = merge(&parts, &merged).expect("merge");
    assert_eq!(report.written, 600);
    assert_eq!(report.duplicates, 0);

    assert_eq!(by_pair(&merged), by_pair(&whole));
    assert_eq!(summary_without_time(&merged), summary_without_time(&whole));
    // The parts summarized together, without merging, say the same.
    let mut together = summarize_files(&parts, SummaryOptions::default()).expect("summarize");
    together.grading_secs = 0.0;
    assert_eq!(together, summary_without_time(&whole));

    // Merging a part again adds nothing: duplicates are counted and left out.
    let again = dir.join("again.jsonl");
    let report = merge(&[merged.clone(), parts[1].clone()], &again).expect("merge again");
    assert_eq!((report.written, report.duplicates), (600, counts[1]));
}

#[test]
fn failures_and_panics_are_recorded_on_their_line_and_the_run_goes_on() {
    let dir = scratch("failures");
    let output = dir.join("results.jsonl");
    let report = runtime()
        .block_on(
            Evaluation::new(&output)
                .concurrency(3)
                .handle_interrupts(false)
                .run((0..20).map(|i| (i, i)), |sample, _epoch| {
                    // A panic in the call itself, before any future exists.
                    assert!(sample.1 != 4, "panicked while building the grading");
                    async move {
                        match sample.1 {
                            5 => panic!("panicked while grading"),
                            6 => Err("the judge said no".to_owned()),
                            i => qa_result(i),
                        }
                    }
                }),
        )
        .expect("the run");
    assert_eq!((report.written, report.errored), (20, 3));
    let all = lines(&output);
    let line = |id: &str| all.iter().find(|l| l.id == id).expect("a line for the id");
    let error = |id: &str| line(id).error.clone().expect("an error");
    assert_eq!(error("4").kind, ErrorKind::Panicked);
    assert_eq!(error("4").message, "panicked while building the grading");
    assert_eq!(error("5").kind, ErrorKind::Panicked);
    assert_eq!(error("6").kind, ErrorKind::Failed);
    assert_eq!(error("6").message, "the judge said no");
    let summary = summary_without_time(&output);
    assert_eq!((summary.scored, summary.errored), (17, 3));
    assert_eq!(summary.errors["panicked"], 2);
}

#[test]
fn a_torn_line_in_the_middle_is_an_error_not_a_silent_skip() {
    let dir = scratch("corrupt");
    let output = dir.join("results.jsonl");
    std::fs::write(&output, "{\"v\":1,\"id\":\"a\"\n{}\n").expect("write");
    let error = runtime()
        .block_on(
            Evaluation::new(&output)
                .handle_interrupts(false)
                .run([("a", ())], |_, _| async { qa_result(0) }),
        )
        .expect_err("a corrupt file");
    assert!(
        error.to_string().contains(":1: not an evaluation line"),
        "{error}"
    );
}

fn group_alive(pgid: &str) -> bool {
    Command::new("kill")
        .args(["-0", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status_bounded()
        .success()
}

#[test]
fn ctrl_c_leaves_no_process_and_a_resumable_file() {
    interrupted_and_resumed("sigint", 0, 4, false);
}

/// On two worker threads, where the gradings run in lanes: each lane's commands are killed,
/// the lines that finished are kept, and the gradings made ahead are dropped unstarted.
#[test]
fn ctrl_c_on_worker_threads_leaves_no_process_and_a_resumable_file() {
    interrupted_and_resumed("sigint-threads", 2, 8, false);
}

/// Through `run_shared`, where the lanes make the gradings themselves.
#[test]
fn ctrl_c_on_a_shared_run_leaves_no_process_and_a_resumable_file() {
    interrupted_and_resumed("sigint-shared", 2, 8, true);
}

fn interrupted_and_resumed(name: &str, workers: usize, concurrency: usize, shared: bool) {
    let dir = scratch(name);
    let output = dir.join("results.jsonl");
    let pids = dir.join("pids");
    let (samples, fast) = (3 * concurrency, 4);
    let mut child = probe_on(&output, "sleep", samples, 1, concurrency, workers, shared)
        .env("EVAL_PROBE_PIDS", &pids)
        .env("EVAL_PROBE_SLEEP", "30")
        .env("EVAL_PROBE_FAST", fast.to_string())
        .spawn()
        .expect("start the run");
    // The fast samples are written, and every slot holds a running `sleep`.
    wait_until(&mut child, || {
        count_lines(&output) == fast
            && std::fs::read_to_string(&pids).is_ok_and(|t| t.lines().count() == concurrency)
    });
    let running = std::fs::read_to_string(&pids).expect("the pids");
    for pgid in running.lines() {
        assert!(
            group_alive(pgid),
            "process group {pgid} is running before Ctrl-C"
        );
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status_bounded();
    assert!(status.success());
    let stopped = child::wait_with_output(child, "the probe");
    let report = String::from_utf8_lossy(&stopped.stdout);
    assert_eq!(stopped.status.code(), Some(130), "{report}");
    assert!(report.contains("interrupted: true"), "{report}");
    // Every slot held a `sleep`: each of those gradings is counted cancelled, none written.
    let message = String::from_utf8_lossy(&stopped.stderr);
    assert!(
        message.contains(&format!(
            "interrupted: {fast} lines written to {}, {concurrency} gradings in flight cancelled",
            output.display()
        )),
        "{message}"
    );
    let groups = std::fs::read_to_string(&pids).expect("the pids");
    for pgid in groups.lines() {
        assert!(!group_alive(pgid), "process group {pgid} still running");
    }
    assert_eq!(lines(&output).len(), fast);

    // Resuming grades the rest, each once.
    let (code, report) = finish(
        probe_on(&output, "sleep", samples, 1, concurrency, workers, shared)
            .env("EVAL_PROBE_PIDS", &pids)
            .env("EVAL_PROBE_SLEEP", "0")
            .spawn()
            .expect("resume"),
    );
    assert_eq!(code, 0, "{report}");
    let pairs: HashSet<(String, u32)> = lines(&output)
        .into_iter()
        .map(|l| (l.id, l.epoch))
        .collect();
    assert_eq!(pairs.len(), samples);
    assert_eq!(lines(&output).len(), samples);
}

#[test]
fn a_limiter_bounds_the_commands_of_all_samples_in_flight() {
    let dir = scratch("limiter");
    let output = dir.join("results.jsonl");
    let log = dir.join("log");
    let limiter = Limiter::new().limit(Resource::Commands, 2);
    let report = runtime()
        .block_on(
            Evaluation::new(&output)
                .concurrency(12)
                .limiter(&limiter)
                .handle_interrupts(false)
                .run((0..12).map(|i| (i, ())), |_, _| {
                    // Each command waits (a few seconds at most) for a second one to have
                    // started, so two slots are seen in use whatever the timing.
                    let command = format!(
                        "echo start >> '{0}'; for i in $(seq 500); do \
                         [ $(grep -c start '{0}') -ge 2 ] && break; sleep 0.01; done; \
                         echo end >> '{0}'",
                        log.display()
                    );
                    Gather::new().add(BashGrader::new(command).grade(1.0)).run()
                }),
        )
        .expect("the run");
    assert_eq!((report.written, report.errored), (12, 0));
    let events = std::fs::read_to_string(&log).expect("the log");
    let (mut running, mut most) = (0_i32, 0);
    for event in events.lines() {
        running += if event == "start" { 1 } else { -1 };
        most = most.max(running);
    }
    assert_eq!(events.lines().count(), 24);
    assert_eq!(
        most, 2,
        "at most two commands at once, and the two slots used"
    );
}

#[test]
fn merge_leaves_out_and_reports_a_torn_last_line() {
    let dir = scratch("merge-torn");
    let whole = dir.join("a.jsonl");
    runtime()
        .block_on(run_qa(&whole, Shard::ALL))
        .expect("a run");
    let mut bytes = std::fs::read(&whole).expect("read");
    bytes.extend_from_slice(br#"{"v":1,"id":"s0","ep"#);
    std::fs::write(&whole, bytes).expect("write");
    let merged = dir.join("merged.jsonl");
    let report = merge(std::slice::from_ref(&whole), &merged).expect("merge");
    assert_eq!(report.written, 600);
    assert_eq!(report.torn, [whole]);
    assert_eq!(lines(&merged).len(), 600);
}
