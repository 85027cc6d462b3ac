//! The evaluation runner on every worker thread of a multi-threaded runtime: gradings run on
//! more than one thread while the lines stay exactly once each, the limiter in force where the
//! run is awaited bounds the gradings on every thread, and a run dropped mid-way leaves none of
//! its gradings running.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use std::fmt::Display;
use std::future::Future;

use grader_core::EvaluationResult;
use grader_core::limit::{Limiter, Resource, acquire};
use grader_core::{Grade, SubScore};
use grader_eval::{EvalError, Evaluation, Line, RunReport, Sample};

/// Which entry point of [`Evaluation`] a test runs through: `run` (the awaiting task makes
/// the gradings) or `run_shared` (the lanes make them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Through {
    Run,
    Shared,
}

const BOTH: [Through; 2] = [Through::Run, Through::Shared];

/// [`Evaluation::run`] or [`Evaluation::run_shared`], as `through` says.
trait RunThrough: std::borrow::Borrow<Evaluation> {
    async fn run_through<I, S, F, Fut, E>(
        &self,
        through: Through,
        samples: I,
        grade: F,
    ) -> Result<RunReport, EvalError>
    where
        I: IntoIterator<Item = S>,
        I::IntoIter: Send + 'static,
        S: Sample + Send + Sync + 'static,
        F: Fn(Arc<S>, u32) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<EvaluationResult, E>> + Send + 'static,
        E: Display + 'static,
    {
        let evaluation: &Evaluation = self.borrow();
        match through {
            Through::Run => evaluation.run(samples, grade).await,
            Through::Shared => evaluation.run_shared(samples, grade).await,
        }
    }
}

impl RunThrough for Evaluation {}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("eval-threads-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("a runtime")
}

fn result(value: f64) -> Result<grader_core::EvaluationResult, String> {
    let sub = SubScore::new("check", value).map_err(|e| e.to_string())?;
    Grade::from_subscores([sub]).map_err(|e| e.to_string())
}

fn pairs(path: &Path) -> Vec<(String, u32)> {
    let mut pairs: Vec<(String, u32)> = std::fs::read_to_string(path)
        .expect("the results")
        .lines()
        .map(|text| {
            let line: Line = serde_json::from_str(text).expect("a line");
            (line.id, line.epoch)
        })
        .collect();
    pairs.sort();
    pairs
}

#[test]
fn gradings_run_on_several_worker_threads() {
    for through in BOTH {
        let output = scratch(&format!("spread-{through:?}")).join("results.jsonl");
        let threads = Arc::new(Mutex::new(HashSet::new()));
        let seen = Arc::clone(&threads);
        let report = runtime(2)
            .block_on(
                Evaluation::new(&output)
                    .epochs(2)
                    .concurrency(8)
                    .handle_interrupts(false)
                    .progress(false)
                    .run_through(through, (0..200).map(|i| (i, i)), move |sample, _| {
                        let seen = Arc::clone(&seen);
                        async move {
                            // Synchronous work long enough that both workers are needed at once.
                            let until = Instant::now() + Duration::from_millis(2);
                            while Instant::now() < until {
                                std::hint::spin_loop();
                            }
                            seen.lock()
                                .expect("the set")
                                .insert(std::thread::current().id());
                            result((sample.1 % 2) as f64)
                        }
                    }),
            )
            .expect("the run");
        assert_eq!((report.written, report.errored), (400, 0));
        let expected: Vec<(String, u32)> = (0..200)
            .flat_map(|i| [(i.to_string(), 1), (i.to_string(), 2)])
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(pairs(&output), expected, "every pair exactly once");
        let threads = threads.lock().expect("the set");
        assert_eq!(threads.len(), 2, "both worker threads graded: {threads:?}");
        assert!(
            !threads.contains(&std::thread::current().id()),
            "the awaiting thread writes; the workers grade"
        );
    }
}

#[test]
fn the_limiter_in_force_where_the_run_is_awaited_holds_on_every_thread() {
    for through in BOTH {
        let output = scratch(&format!("inherited-limiter-{through:?}")).join("results.jsonl");
        let limiter = Limiter::new().limit(Resource::Cpu, 2);
        let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (now2, most2) = (Arc::clone(&now), Arc::clone(&most));
        let report = runtime(4)
            .block_on(
                limiter.scope(
                    Evaluation::new(&output)
                        .concurrency(16)
                        .handle_interrupts(false)
                        .progress(false)
                        .run_through(through, (0..64).map(|i| (i, ())), move |_, _| {
                            let (now, most) = (Arc::clone(&now2), Arc::clone(&most2));
                            async move {
                                let _slot = acquire(Resource::Cpu).await;
                                let inside = now.fetch_add(1, Ordering::SeqCst) + 1;
                                most.fetch_max(inside, Ordering::SeqCst);
                                tokio::time::sleep(Duration::from_millis(5)).await;
                                now.fetch_sub(1, Ordering::SeqCst);
                                result(1.0)
                            }
                        }),
                ),
            )
            .expect("the run");
        assert_eq!((report.written, report.errored), (64, 0));
        assert_eq!(
            most.load(Ordering::SeqCst),
            2,
            "two slots, both used, never more"
        );
    }
}

/// Dropping the run's future drops every grading, running or waiting in the queue, even when
/// some of them panic in their destructors.
#[test]
fn a_dropped_run_leaves_no_grading_running() {
    for through in BOTH {
        let output = scratch(&format!("dropped-{through:?}")).join("results.jsonl");
        let started = Arc::new(AtomicUsize::new(0));
        let finished = Arc::new(AtomicUsize::new(0));
        let alive = Arc::new(AtomicUsize::new(0));
        let (s, f, a) = (
            Arc::clone(&started),
            Arc::clone(&finished),
            Arc::clone(&alive),
        );
        /// Counts the gradings whose future still exists.
        struct Alive(Arc<AtomicUsize>);
        impl Drop for Alive {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let runtime = runtime(2);
        runtime.block_on(async {
            let evaluation = Evaluation::new(&output)
                .concurrency(8)
                .handle_interrupts(false)
                .progress(false);
            let run =
                evaluation.run_through(through, (0..100).map(|i| (i, i)), move |sample, _| {
                    let (s, f, a) = (Arc::clone(&s), Arc::clone(&f), Arc::clone(&a));
                    a.fetch_add(1, Ordering::SeqCst);
                    let guard = Alive(a);
                    // Some of the slow ones panic when dropped, running or queued.
                    let bomb = if sample.1 >= 4 && sample.1 % 3 == 1 {
                        Some(PanicsOnDrop)
                    } else {
                        None
                    };
                    async move {
                        let _guard = guard;
                        let _bomb = bomb;
                        s.fetch_add(1, Ordering::SeqCst);
                        let wait = if sample.1 < 4 { 0 } else { 60_000 };
                        tokio::time::sleep(Duration::from_millis(wait)).await;
                        f.fetch_add(1, Ordering::SeqCst);
                        result(1.0)
                    }
                });
            let stopped = tokio::time::timeout(Duration::from_millis(300), run).await;
            assert!(
                stopped.is_err(),
                "the run was still waiting on its slow gradings"
            );
            // The run's future is gone, the runtime lives on: the gradings' tasks were aborted,
            // so every grading is dropped (waiting at most a few seconds for the workers to see
            // the abort), long before their 60 s sleeps end.
            for _ in 0..500 {
                if alive.load(Ordering::SeqCst) == 0 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        assert_eq!(finished.load(Ordering::SeqCst), 4);
        assert!(started.load(Ordering::SeqCst) >= 8);
        assert_eq!(alive.load(Ordering::SeqCst), 0, "every grading dropped");
        assert_eq!(pairs(&output).len(), 4, "the finished lines kept");
    }
}

/// An error whose message cannot be written: `Display` panics.
struct Unprintable;

impl std::fmt::Display for Unprintable {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        panic!("the error could not be printed")
    }
}

/// A grading's future whose destructor panics.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("the grading panicked while dropped");
        }
    }
}

/// One worker and a concurrency of 16 put gradings in two lanes, each a task polling several: a
/// panic while a grading's line is made (its error's `Display`) or while its future is dropped
/// is that grading's own, so its lane mates still get their own lines.
#[test]
fn a_panic_ending_one_grading_is_its_line_alone_not_its_lane_mates() {
    panics_end_their_own_grading_only("panic-lane", &runtime(1));
}

/// Polled in place on a current-thread runtime, the same panics are the grading's line, not
/// the run's end.
#[test]
fn a_panic_ending_a_grading_polled_in_place_is_its_line() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    panics_end_their_own_grading_only("panic-in-place", &runtime);
}

fn panics_end_their_own_grading_only(name: &str, runtime: &tokio::runtime::Runtime) {
    for through in BOTH {
        panics_end_their_own_grading_only_through(&format!("{name}-{through:?}"), runtime, through);
    }
}

fn panics_end_their_own_grading_only_through(
    name: &str,
    runtime: &tokio::runtime::Runtime,
    through: Through,
) {
    let output = scratch(name).join("results.jsonl");
    let report = runtime
        .block_on(
            Evaluation::new(&output)
                .concurrency(16)
                .handle_interrupts(false)
                .progress(false)
                .run_through(through, (0..32).map(|i| (i, i)), |sample, _| async move {
                    match sample.1 {
                        3 => return Err(Unprintable),
                        5 => {
                            let _bomb = PanicsOnDrop;
                            tokio::time::sleep(Duration::from_millis(1)).await;
                        }
                        _ => tokio::time::sleep(Duration::from_millis(20)).await,
                    }
                    let sub = SubScore::new("check", 1.0).expect("a subscore");
                    Ok(Grade::from_subscores([sub]).expect("a grade"))
                }),
        )
        .expect("the run");
    assert_eq!(report.written, 32);
    let text = std::fs::read_to_string(&output).expect("the results");
    let mut failed: Vec<(String, String)> = text
        .lines()
        .map(|raw| serde_json::from_str::<Line>(raw).expect("a line"))
        .filter_map(|line| Some((line.id, line.error?.message)))
        .collect();
    failed.sort();
    assert_eq!(
        failed,
        [
            ("3".to_owned(), "the error could not be printed".to_owned()),
            (
                "5".to_owned(),
                "the grading panicked while dropped".to_owned()
            ),
        ],
        "only the two gradings that panicked have errors"
    );
    assert_eq!(report.errored, 2);
    assert_eq!(pairs(&output).len(), 32);
}

/// Counts the gradings whose future exists, and the most that ever did at once.
#[derive(Clone, Default)]
struct Census {
    alive: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

/// Held by a grading's future: made when the grading function is called (or when the future
/// is first polled), gone with the future.
struct Counted(Census);

/// The grading function is called up to this many gradings ahead of the concurrency, so that
/// a slot freed on a worker is filled there at once.
const AHEAD: usize = 256;

impl Census {
    fn enter(&self) -> Counted {
        let alive = self.alive.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(alive, Ordering::SeqCst);
        Counted(self.clone())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.alive.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whatever the workers and the concurrency (one, fewer than the workers, several per
/// worker), no more than `concurrency` gradings run at once, no more than [`AHEAD`] more are
/// made, every pair is written once, and the run ends, though gradings end at every moment (at
/// once, after yields, after timers).
#[test]
fn gradings_never_exceed_the_concurrency_and_each_is_written_once() {
    for through in BOTH {
        for (workers, concurrency) in [(1, 1), (3, 1), (3, 2), (2, 7), (1, 16), (2, 64)] {
            let output = scratch(&format!("bound-{workers}-{concurrency}-{through:?}"))
                .join("results.jsonl");
            let census = Census::default();
            let counted = census.clone();
            let made = Census::default();
            let made_counted = made.clone();
            let report = runtime(workers).block_on(async {
                let evaluation = Evaluation::new(&output)
                    .epochs(2)
                    .concurrency(concurrency)
                    .handle_interrupts(false)
                    .progress(false);
                let run = evaluation.run_through(
                    through,
                    (0..300).map(|i| (i, i)),
                    move |sample, epoch| {
                        let made = made_counted.enter();
                        let counted = counted.clone();
                        async move {
                            let _made = made;
                            let _counted = counted.enter();
                            match (sample.1 + epoch as usize) % 3 {
                                0 => {}
                                1 => {
                                    for _ in 0..sample.1 % 5 {
                                        tokio::task::yield_now().await;
                                    }
                                }
                                _ => tokio::time::sleep(Duration::from_micros(200)).await,
                            }
                            result(1.0)
                        }
                    },
                );
                tokio::time::timeout(Duration::from_secs(20), run).await
            });
            let report = report.expect("the run ended").expect("the run");
            assert_eq!(report.written, 600, "{workers} workers, {concurrency}");
            assert_eq!(
                pairs(&output).len(),
                600,
                "{workers} workers, {concurrency}"
            );
            let most = census.most.load(Ordering::SeqCst);
            assert!(
                most <= concurrency,
                "{most} gradings at once with a concurrency of {concurrency} on {workers} workers"
            );
            let most_made = made.most.load(Ordering::SeqCst);
            // Through `run_shared`, a lane (two per worker) makes up to 16 gradings ahead of
            // the slots it holds while its gradings end at once.
            let ahead = if through == Through::Shared {
                2 * workers * 16
            } else {
                AHEAD
            };
            assert!(
                most_made <= concurrency + ahead,
                "{most_made} gradings made at once with a concurrency of {concurrency} \
                 through {through:?}"
            );
            assert_eq!(census.alive.load(Ordering::SeqCst), 0);
            assert_eq!(made.alive.load(Ordering::SeqCst), 0);
        }
    }
}

/// A run awaited in a task of a runtime that shuts down: its gradings' tasks are dropped with
/// it, the finished lines are in the file, whole and once each, and nothing is left running.
#[test]
fn a_runtime_shut_down_under_a_run_leaves_no_grading_and_whole_lines() {
    for through in BOTH {
        let output = scratch(&format!("shutdown-{through:?}")).join("results.jsonl");
        let census = Census::default();
        let counted = census.clone();
        let made = Census::default();
        let made_counted = made.clone();
        let runtime = runtime(2);
        let path = output.clone();
        let run = runtime.spawn(async move {
            Evaluation::new(&path)
                .concurrency(16)
                .handle_interrupts(false)
                .progress(false)
                .run_through(through, (0..1000).map(|i| (i, i)), move |sample, _| {
                    let made = made_counted.enter();
                    let counted = counted.clone();
                    async move {
                        let _made = made;
                        let _counted = counted.enter();
                        let wait = if sample.1 < 20 { 0 } else { 60_000 };
                        tokio::time::sleep(Duration::from_millis(wait)).await;
                        result(1.0)
                    }
                })
                .await
        });
        // Wait for the quick gradings' lines, then shut the runtime down under the run.
        while pairs_written(&output) < 20 {
            std::thread::sleep(Duration::from_millis(5));
        }
        runtime.shutdown_timeout(Duration::from_secs(5));
        assert_eq!(
            census.alive.load(Ordering::SeqCst),
            0,
            "every grading dropped"
        );
        assert_eq!(
            made.alive.load(Ordering::SeqCst),
            0,
            "every grading dropped"
        );
        assert!(census.most.load(Ordering::SeqCst) <= 16);
        assert!(made.most.load(Ordering::SeqCst) <= 16 + AHEAD);
        assert_eq!(pairs(&output).len(), 20, "the finished lines, once each");
        let ended = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(run);
        assert!(ended.is_err_and(|error| error.is_cancelled()));
    }
}

/// A run awaited on another thread (`Handle::block_on`) while the runtime its gradings run on
/// shuts down: the gradings cancelled under it have no line, and the run says so with an error
/// rather than ending as if it had graded everything.
#[test]
fn gradings_cancelled_under_a_run_are_an_error_not_a_short_run() {
    for through in BOTH {
        let output = scratch(&format!("cancelled-under-{through:?}")).join("results.jsonl");
        let runtime = runtime(2);
        let handle = runtime.handle().clone();
        let path = output.clone();
        let awaiting = std::thread::spawn(move || {
            handle.block_on(
                Evaluation::new(&path)
                    .concurrency(16)
                    .handle_interrupts(false)
                    .progress(false)
                    .run_through(through, (0..200).map(|i| (i, i)), |sample, _| async move {
                        let wait = if sample.1 < 20 { 0 } else { 60_000 };
                        tokio::time::sleep(Duration::from_millis(wait)).await;
                        result(1.0)
                    }),
            )
        });
        while pairs_written(&output) < 20 {
            std::thread::sleep(Duration::from_millis(5));
        }
        runtime.shutdown_timeout(Duration::from_secs(5));
        let error = awaiting
            .join()
            .expect("the awaiting thread")
            .expect_err("a run missing lines is an error");
        let message = error.to_string();
        // Through `run`, the gradings of every sample left were made (and counted cancelled);
        // through `run_shared`, only those the lanes had started (one a slot) were.
        let counted = match through {
            Through::Run => matches!(
                error,
                EvalError::Cancelled {
                    cancelled: 180,
                    written: 20,
                    samples_left: false,
                    ..
                }
            ),
            Through::Shared => matches!(
                error,
                EvalError::Cancelled {
                    cancelled: 16,
                    written: 20,
                    samples_left: true,
                    ..
                }
            ),
        };
        assert!(counted, "{message}");
        if through == Through::Shared {
            assert!(
                message.contains("samples not yet taken were left ungraded"),
                "{message}"
            );
        }
        assert!(message.contains(&output.display().to_string()), "{message}");
        assert_eq!(pairs(&output).len(), 20, "the finished lines, once each");
    }
}

fn pairs_written(path: &Path) -> usize {
    std::fs::read(path)
        .map(|bytes| bytes.iter().filter(|b| **b == b'\n').count())
        .unwrap_or(0)
}

/// Gradings that compute for milliseconds without awaiting leave the runtime's other tasks and
/// its timers (here a task sleeping a millisecond at a time) turns while they run, on a
/// multi-threaded runtime and on a current-thread one alike: the runner yields after half a
/// millisecond of computing. Returns what the sleeping task saw: how many gradings had ended at
/// each of its wake-ups, strictly between none and all.
/// A task of the current runtime that sleeps a millisecond at a time until `count` reaches
/// `total`, and returns the counts it saw at its wake-ups.
fn sleeper(
    count: &Arc<AtomicUsize>,
    total: usize,
) -> tokio::task::JoinHandle<std::collections::BTreeSet<usize>> {
    let count = Arc::clone(count);
    tokio::spawn(async move {
        let mut seen = std::collections::BTreeSet::new();
        loop {
            let now = count.load(Ordering::SeqCst);
            if now == total {
                return seen;
            }
            seen.insert(now);
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
}

fn other_tasks_turns_during(runtime: &tokio::runtime::Runtime, name: &str) -> Vec<usize> {
    const SAMPLES: usize = 32;
    let output = scratch(name).join("results.jsonl");
    let ended = Arc::new(AtomicUsize::new(0));
    runtime.block_on(async {
        let other = sleeper(&ended, SAMPLES);
        let samples = (0..SAMPLES).map(|i| (format!("s{i}"), ()));
        let report = Evaluation::new(&output)
            .concurrency(8)
            .handle_interrupts(false)
            .progress(false)
            .run(samples, |_, _| {
                let ended = Arc::clone(&ended);
                async move {
                    let started = Instant::now();
                    while started.elapsed() < Duration::from_millis(2) {
                        std::hint::spin_loop();
                    }
                    ended.fetch_add(1, Ordering::SeqCst);
                    result(1.0)
                }
            })
            .await
            .expect("the run");
        assert_eq!(report.written, SAMPLES);
        let seen = other.await.expect("the other task");
        seen.range(1..SAMPLES).copied().collect()
    })
}

#[test]
fn long_computing_gradings_leave_a_multi_threaded_runtimes_other_tasks_turns() {
    let seen = other_tasks_turns_during(&runtime(1), "turns-workers");
    assert!(seen.len() >= 8, "the sleeping task saw {seen:?}");
}

#[test]
fn long_computing_gradings_leave_a_current_thread_runtimes_other_tasks_turns() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let seen = other_tasks_turns_during(&runtime, "turns-in-place");
    assert!(seen.len() >= 8, "the sleeping task saw {seen:?}");
}

/// The lines of a results file, as (id, epoch) → (reward, error message), in order.
fn outcomes(path: &Path) -> std::collections::BTreeMap<(String, u32), String> {
    std::fs::read_to_string(path)
        .expect("the results")
        .lines()
        .map(|text| {
            let line: Line = serde_json::from_str(text).expect("a line");
            let outcome = match &line.error {
                Some(error) => format!("error: {}", error.message),
                None => format!("reward {:?}", line.reward()),
            };
            ((line.id, line.epoch), outcome)
        })
        .collect()
}

/// The grading of the run-against-run test: a reward from the sample and epoch, an error, a
/// panic in the grading function's call (before its future) and one in its future.
fn mixed(
    sample: Arc<(String, usize)>,
    epoch: u32,
) -> impl Future<Output = Result<EvaluationResult, String>> + Send + 'static {
    assert!(sample.1 % 17 != 5, "the call for {} panicked", sample.0);
    async move {
        match sample.1 % 17 {
            3 => Err(format!("{} failed", sample.0)),
            11 => panic!("the future of {} panicked", sample.0),
            n => result(((n as u32 + epoch) % 4) as f64 / 4.0),
        }
    }
}

/// `run_shared` writes exactly what `run` writes, line for line, and reports the same counts:
/// over several epochs, in one shard of two, resuming a file that already holds some lines,
/// with errors and panics, on worker threads and on a current-thread runtime.
#[test]
fn run_shared_writes_the_lines_and_counts_of_run() {
    let samples = || (0..300).map(|i| (format!("s{i}"), i));
    let current_thread = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    };
    for (name, runtime) in [("workers", runtime(2)), ("in-place", current_thread())] {
        let dir = scratch(&format!("same-as-run-{name}"));
        let mut reports = Vec::new();
        for through in BOTH {
            let output = dir.join(format!("{through:?}.jsonl"));
            let evaluation = Evaluation::new(&output)
                .epochs(3)
                .concurrency(7)
                .shard(grader_eval::Shard::new(1, 2).expect("a shard"))
                .handle_interrupts(false)
                .progress(false);
            // A first run over the first 40 samples, then the whole run resumes it.
            let first = runtime
                .block_on(evaluation.run_through(through, samples().take(40), mixed))
                .expect("the first run");
            assert!(first.written > 0);
            let report = runtime
                .block_on(evaluation.run_through(through, samples(), mixed))
                .expect("the run");
            assert_eq!(report.resumed, first.written, "{name}, {through:?}");
            reports.push((report, outcomes(&output)));
        }
        let (run, shared) = (&reports[0], &reports[1]);
        assert_eq!(shared.1, run.1, "{name}: the same lines");
        let counts = |r: &RunReport| (r.written, r.errored, r.resumed, r.other_shards);
        assert_eq!(counts(&shared.0), counts(&run.0), "{name}: the same counts");
        // Every kind of outcome is among them.
        let kinds: HashSet<&str> = run
            .1
            .values()
            .map(|outcome| outcome.split(' ').next().unwrap_or(""))
            .collect();
        assert_eq!(kinds, HashSet::from(["reward", "error:"]));
        assert!(
            run.1
                .values()
                .any(|o| o.contains("call for") && o.contains("panicked"))
        );
        assert!(run.1.values().any(|o| o.contains("future of")));
        assert!(run.0.other_shards > 100 && run.0.other_shards < 200);
    }
}

/// Through `run_shared` on worker threads, the grading function is called on the workers,
/// never on the thread that awaits the run.
#[test]
fn run_shared_calls_the_grading_function_on_the_workers() {
    let output = scratch("shared-calls").join("results.jsonl");
    let callers = Arc::new(Mutex::new(HashSet::new()));
    let seen = Arc::clone(&callers);
    let report = runtime(2)
        .block_on(
            Evaluation::new(&output)
                .concurrency(8)
                .handle_interrupts(false)
                .progress(false)
                .run_shared((0..2000).map(|i| (i, i)), move |sample, _| {
                    seen.lock()
                        .expect("the set")
                        .insert(std::thread::current().id());
                    async move { result((sample.1 % 2) as f64) }
                }),
        )
        .expect("the run");
    assert_eq!(report.written, 2000);
    let callers = callers.lock().expect("the set");
    assert!(!callers.is_empty());
    assert!(
        !callers.contains(&std::thread::current().id()),
        "the awaiting thread called the grading function"
    );
}

/// The message a panic carried, when it is text.
fn message_of(panic: &(dyn std::any::Any + Send)) -> Option<&str> {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
}

/// A panic of the samples' iterator, on a worker, ends a `run_shared` run once the gradings in
/// flight end: every sample taken before it has its line, none after, and the panic reaches
/// the caller as it would from `run`.
#[test]
fn a_panicking_sample_iterator_ends_a_shared_run_with_its_panic() {
    for workers in [1, 2] {
        let output = scratch(&format!("shared-iterator-panic-{workers}")).join("results.jsonl");
        let runtime = runtime(workers);
        let samples = (0..500).map(|i| {
            assert!(i != 123, "the samples ran dry");
            (i, i)
        });
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runtime.block_on(
                Evaluation::new(&output)
                    .concurrency(16)
                    .handle_interrupts(false)
                    .progress(false)
                    .run_shared(samples, |sample, _| async move {
                        tokio::time::sleep(Duration::from_millis((sample.1 % 3) as u64)).await;
                        result(1.0)
                    }),
            )
        }));
        let panic = run.expect_err("the iterator's panic");
        let message = message_of(&*panic);
        assert_eq!(message, Some("the samples ran dry"));
        let expected: Vec<(String, u32)> = {
            let mut ids: Vec<(String, u32)> = (0..123).map(|i| (i.to_string(), 1)).collect();
            ids.sort();
            ids
        };
        assert_eq!(pairs(&output), expected, "{workers} workers");
    }
}

/// A sample whose `id` panics, on a worker, ends a `run_shared` run there as a panic of the
/// iterator does: every sample before it has its line (and every epoch, other shards' samples
/// skipped), none from it on, and the panic reaches the caller.
#[test]
fn a_sample_whose_id_panics_ends_a_shared_run_there() {
    struct Numbered(usize);
    impl Sample for Numbered {
        fn id(&self) -> String {
            assert!(self.0 != 123, "no id for 123");
            self.0.to_string()
        }
    }
    for workers in [1, 2] {
        let output = scratch(&format!("shared-id-panic-{workers}")).join("results.jsonl");
        let runtime = runtime(workers);
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runtime.block_on(
                Evaluation::new(&output)
                    .concurrency(16)
                    .epochs(2)
                    .handle_interrupts(false)
                    .progress(false)
                    .run_shared((0..500).map(Numbered), |sample, _| async move {
                        tokio::time::sleep(Duration::from_millis((sample.0 % 3) as u64)).await;
                        result(1.0)
                    }),
            )
        }));
        let panic = run.expect_err("the id's panic");
        let message = message_of(&*panic);
        assert_eq!(message, Some("no id for 123"));
        let mut expected: Vec<(String, u32)> = (0..123)
            .flat_map(|i| [(i.to_string(), 1), (i.to_string(), 2)])
            .collect();
        expected.sort();
        assert_eq!(pairs(&output), expected, "{workers} workers");
    }
}

/// A run with nothing to grade (no samples, or every line already written) ends at once
/// through `run_shared`, as through `run`.
#[test]
fn a_shared_run_with_nothing_to_grade_ends() {
    let output = scratch("shared-nothing").join("results.jsonl");
    let runtime = runtime(2);
    let evaluation = Evaluation::new(&output)
        .concurrency(4)
        .handle_interrupts(false)
        .progress(false);
    let grade = |_: Arc<(usize, usize)>, _| async { result(1.0) };
    let empty = runtime
        .block_on(evaluation.run_shared(std::iter::empty(), grade))
        .expect("the run");
    assert_eq!(empty.written, 0);
    let first = runtime
        .block_on(evaluation.run_shared((0..10).map(|i| (i, i)), grade))
        .expect("the run");
    assert_eq!(first.written, 10);
    let again = runtime
        .block_on(evaluation.run_shared((0..10).map(|i| (i, i)), grade))
        .expect("the run");
    assert_eq!((again.written, again.resumed), (0, 10));
}

/// A run cut short under it (its runtime shut down) once every sample was taken says no
/// sample was left, through `run_shared` as through `run`, even when the lanes took exactly
/// the last samples (as many as the concurrency).
#[test]
fn a_shared_run_cut_short_after_taking_every_sample_says_none_was_left() {
    for (workers, concurrency, samples) in [(2, 16, 16), (1, 16, 16), (2, 8, 8), (2, 16, 12)] {
        for through in BOTH {
            let name = format!("none-left-{workers}-{concurrency}-{samples}-{through:?}");
            let output = scratch(&name).join("results.jsonl");
            let runtime = runtime(workers);
            let handle = runtime.handle().clone();
            let started = Arc::new(AtomicUsize::new(0));
            let counted = Arc::clone(&started);
            let path = output.clone();
            let awaiting = std::thread::spawn(move || {
                handle.block_on(
                    Evaluation::new(&path)
                        .concurrency(concurrency)
                        .handle_interrupts(false)
                        .progress(false)
                        .run_through(through, (0..samples).map(|i| (i, i)), move |_, _| {
                            let counted = Arc::clone(&counted);
                            async move {
                                counted.fetch_add(1, Ordering::SeqCst);
                                tokio::time::sleep(Duration::from_secs(600)).await;
                                result(1.0)
                            }
                        }),
                )
            });
            while started.load(Ordering::SeqCst) < samples {
                std::thread::sleep(Duration::from_millis(5));
            }
            runtime.shutdown_timeout(Duration::from_secs(5));
            let error = awaiting.join().expect("the awaiting thread");
            let error = error.expect_err("a run missing lines is an error");
            assert!(
                matches!(
                    error,
                    EvalError::Cancelled { cancelled, written: 0, samples_left: false, .. }
                        if cancelled == samples
                ),
                "{name}: {error}"
            );
        }
    }
}

/// Work the grading function does before it returns its future counts towards the time a
/// lane holds its worker (through `run_shared` it runs on the lane): a task sleeping a
/// millisecond at a time still gets turns while calls of 2 ms each are made, as it does
/// through `run` (where they are made on the awaiting thread).
#[test]
fn work_in_the_grading_function_leaves_the_workers_other_tasks_turns() {
    const SAMPLES: usize = 64;
    for through in BOTH {
        let output = scratch(&format!("call-work-{through:?}")).join("results.jsonl");
        let called = Arc::new(AtomicUsize::new(0));
        let seen = runtime(1).block_on(async {
            let other = sleeper(&called, SAMPLES);
            let counted = Arc::clone(&called);
            let report = Evaluation::new(&output)
                .concurrency(8)
                .handle_interrupts(false)
                .progress(false)
                .run_through(through, (0..SAMPLES).map(|i| (i, ())), move |_, _| {
                    let started = Instant::now();
                    while started.elapsed() < Duration::from_millis(2) {
                        std::hint::spin_loop();
                    }
                    counted.fetch_add(1, Ordering::SeqCst);
                    async { result(1.0) }
                })
                .await
                .expect("the run");
            assert_eq!(report.written, SAMPLES);
            other.await.expect("the other task")
        });
        // Through `run_shared` a lane makes the gradings of the slots it claims (four here)
        // in one go before it can yield, so turns come every eight calls or so (without the
        // calls counted, one came in all 64).
        let between: Vec<usize> = seen.range(1..SAMPLES).copied().collect();
        assert!(
            between.len() >= 4,
            "through {through:?} the sleeping task saw {between:?}"
        );
    }
}

/// A grading function's call that panics with a payload whose destructor panics (so the panic
/// cannot become the line) ends the run with a panic, through `run_shared` as through `run`,
/// rather than leaving it waiting for a grading that was never made.
#[test]
fn a_panic_that_cannot_become_a_line_ends_a_shared_run() {
    for through in BOTH {
        let output = scratch(&format!("bomb-{through:?}")).join("results.jsonl");
        let runtime = runtime(2);
        let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runtime.block_on(async {
                let evaluation = Evaluation::new(&output)
                    .concurrency(4)
                    .handle_interrupts(false)
                    .progress(false);
                let run = evaluation.run_through(through, (0..20).map(|i| (i, i)), |sample, _| {
                    if sample.1 == 5 {
                        std::panic::panic_any(PanicsOnDrop);
                    }
                    async { result(1.0) }
                });
                tokio::time::timeout(Duration::from_secs(20), run).await
            })
        }));
        match ended {
            // The payload is not dropped here: its destructor would panic again.
            Err(panic) => std::mem::forget(panic),
            Ok(Err(_)) => panic!("through {through:?} the run never ended"),
            Ok(Ok(report)) => panic!("through {through:?} the run ended: {report:?}"),
        }
    }
}
