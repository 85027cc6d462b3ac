//! Running an evaluation: [`Evaluation`], and joining shards with [`merge`].

use std::collections::{HashMap, HashSet};
use std::fmt::Display;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use futures_util::future::Either;

use super::line::{Entry, ErrorKind, Line, read_lines};
use super::output::SinkError;
use super::running::{Finished, Json, Made, Running, Source, lock, panic_message};
use super::shard::Shard;
use crate::error::EvalError;
use grader_core::limit::{Limiter, Scope};
use grader_core::score::EvaluationResult;

/// Something an evaluation grades: anything with an id, unique within the evaluation.
///
/// The id is what a resumed run recognizes a sample by, and what decides its shard.
///
/// ```
/// use grader_eval::Sample;
///
/// struct Question { id: u32, text: String, answer: String }
///
/// impl Sample for Question {
///     fn id(&self) -> String {
///         format!("q{}", self.id)
///     }
/// }
///
/// // Pairs of (id, anything) are samples too.
/// assert_eq!(("q1", "What is 2 + 2?").id(), "q1");
/// ```
pub trait Sample {
    /// The sample's id.
    fn id(&self) -> String;
}

impl<K: Display, T> Sample for (K, T) {
    fn id(&self) -> String {
        self.0.to_string()
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunReport {
    /// The results file.
    pub output: PathBuf,
    /// Lines written by this run.
    pub written: usize,
    /// Of those, lines recording a failure or a panic.
    pub errored: usize,
    /// (sample, epoch) pairs skipped because the file already had them.
    pub resumed: usize,
    /// Samples skipped because they belong to another shard.
    pub other_shards: usize,
    /// Whether the file ended in a torn line, which was removed and redone.
    pub torn_line: bool,
    /// Whether the run stopped on Ctrl-C before finishing; running it again resumes.
    pub interrupted: bool,
    /// How long the run took.
    pub elapsed: Duration,
}

/// The exit status of a program stopped by Ctrl-C, by the shells' convention (128 + `SIGINT`'s
/// number, 2): what [`RunReport::exit_status`] gives for an interrupted run.
pub const INTERRUPTED_EXIT_STATUS: u8 = 130;

impl RunReport {
    /// The exit status a program that ran this evaluation should end with:
    /// [`INTERRUPTED_EXIT_STATUS`] (130) when it was stopped by Ctrl-C before finishing, so that
    /// a CI job or a script does not take half a run for a whole one; 0 otherwise. Lines that
    /// record a failed grading do not change it: they are results, counted by the summary.
    ///
    /// ```
    /// use grader_eval::{Evaluation, INTERRUPTED_EXIT_STATUS};
    /// use grader_core::EvaluationResult;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let dir = std::env::temp_dir().join(format!("grader-exit-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let output = dir.join("results.jsonl");
    /// # let _ = std::fs::remove_file(&output);
    /// let mut report = Evaluation::new(&output)
    ///     .run([("a", ()), ("b", ())], |_sample, _epoch| async { EvaluationResult::from_reward(1.0) })
    ///     .await?;
    /// assert_eq!(report.exit_status(), 0);
    /// report.interrupted = true; // as after Ctrl-C
    /// assert_eq!(report.exit_status(), INTERRUPTED_EXIT_STATUS);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn exit_status(&self) -> u8 {
        if self.interrupted {
            INTERRUPTED_EXIT_STATUS
        } else {
            0
        }
    }

    /// [`exit_status`](Self::exit_status) as an [`ExitCode`](std::process::ExitCode), to return
    /// from `main`:
    ///
    /// ```no_run
    /// use std::process::ExitCode;
    /// use grader_eval::Evaluation;
    /// use grader_core::EvaluationResult;
    ///
    /// #[tokio::main]
    /// async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    ///     let report = Evaluation::new("results.jsonl")
    ///         .run([("a", ()), ("b", ())], |_sample, _epoch| async { EvaluationResult::from_reward(1.0) })
    ///         .await?;
    ///     Ok(report.exit_code()) // 130 after Ctrl-C
    /// }
    /// ```
    #[must_use]
    pub fn exit_code(&self) -> std::process::ExitCode {
        std::process::ExitCode::from(self.exit_status())
    }
}

/// Grades samples with a user's grading function, `k` epochs each, with bounded concurrency,
/// appending one [`Line`](super::Line) per (sample, epoch) to a JSONL file as each finishes.
///
/// - **Streaming.** Each line is written on a file opened for appending as soon as its grading
///   ends (lines of gradings that end together share one `write` call), so a crash loses at
///   most the gradings in flight.
/// - **Resume.** Running again with the same file skips every (sample, epoch) it already holds;
///   a last line torn by a crash is cut off and redone. A failed grading is a line too, so it
///   is not retried.
/// - **Failures.** A grading function's `Err` or panic becomes that line's `error`; the run
///   goes on.
/// - **Shards.** [`shard`](Self::shard) makes this run do one deterministic part; [`merge`]
///   joins the parts' files.
/// - **All cores.** On a multi-threaded runtime the gradings run in *lanes*, tasks of the
///   runtime the run is awaited on (two per worker thread), which take gradings from a queue
///   that the awaiting task fills: a lane polls its gradings concurrently and, as one ends,
///   starts the next in its slot, on the same worker, without waiting for the awaiting task.
///   At most `concurrency` gradings run at once; the grading function is called up to 256
///   gradings ahead of the slots (its futures wait in the queue, unpolled, and are timed from
///   their first poll), so keep the work of a grading in its future. A line is written out as
///   JSON on the worker as its grading ends; at the end of that poll the lane appends the
///   poll's lines to a local output file itself, in one `write` under a lock (so lines never
///   interleave), and tells the awaiting task, which only counts them (should another worker
///   be writing, or for object storage, the awaiting task writes or uploads them). So no one
///   thread makes, copies or writes every line, and cheap gradings (the text graders'
///   microseconds) gain from each core at any concurrency. On a current-thread runtime the
///   gradings are polled in place in the awaiting task (a task could only share its one
///   thread, at a cost), and the grading function is called only as slots free. The limiter
///   and policies in force where the run is awaited go with every lane. The awaiting task
///   still makes every grading, which bounds how far cheap gradings scale (two workers grade
///   the text graders about 1.6 times as fast as one thread): when the samples and the
///   grading function can be shared among threads, [`run_shared`](Self::run_shared) has the
///   lanes make the gradings themselves.
/// - **Turns for other tasks.** Gradings whose futures compute without awaiting never hold a
///   thread of the runtime for long: once the last polls of the gradings that ended in one
///   poll of a lane took half a millisecond (or 128 of them ended), the lane yields to its
///   worker's other tasks, timers and I/O (as `tokio::task::yield_now` does), and gradings
///   polled in place yield the awaiting task the same way, so a `BashGrader`'s commands, a
///   judge's replies and timers go on beside them. That is the work in a grading's future:
///   what the grading function does before it returns the future is not counted. One grading
///   that computes for longer (milliseconds) still holds its thread that long: run that part
///   with `tokio::task::spawn_blocking`.
/// - **Ctrl-C** (on by default): stops starting samples, cancels the gradings in flight (a
///   `BashGrader`'s commands are killed) and waits until each is gone, keeps every finished
///   line, and prints how to resume. Dropping the run's future cancels them the same way
///   (their lanes are aborted, and what waits in the queue is dropped unstarted).
///
/// ```
/// use grader_eval::{Evaluation, Summary, SummaryOptions};
/// use grader_core::text::exact_match;
/// use grader_core::{Grade, SubScore};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("grader-eval-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let output = dir.join("results.jsonl");
/// # let _ = std::fs::remove_file(&output);
/// let samples = vec![("q1", ("Paris", "paris")), ("q2", ("Lyon", "Paris"))];
/// let report = Evaluation::new(&output)
///     .epochs(2)
///     .concurrency(8)
///     .run(samples, |sample, _epoch| async move {
///         let (answer, reference) = sample.1;
///         let exact = SubScore::new("exact", exact_match(answer, reference))?;
///         Ok::<_, Box<dyn std::error::Error>>(Grade::from_subscores([exact])?)
///     })
///     .await?;
/// assert_eq!(report.written, 4);
/// let summary = Evaluation::summarize(&output, SummaryOptions::default())?;
/// assert_eq!(summary.reward.mean, 0.5);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
#[must_use = "an Evaluation does nothing until `run` is awaited"]
pub struct Evaluation {
    limiter: Option<Limiter>,
    output: PathBuf,
    epochs: u32,
    concurrency: usize,
    shard: Shard,
    interrupts: bool,
    progress: bool,
    #[cfg(feature = "object-store")]
    store: super::store::StoreOptions,
}

impl Evaluation {
    /// An evaluation writing to (or resuming) `output`: one epoch, 16 gradings at once, the
    /// whole run, Ctrl-C handled, a progress bar when stderr is a terminal (feature
    /// `progress`).
    pub fn new(output: impl Into<PathBuf>) -> Self {
        Evaluation {
            limiter: None,
            output: output.into(),
            epochs: 1,
            concurrency: 16,
            shard: Shard::ALL,
            interrupts: true,
            progress: true,
            #[cfg(feature = "object-store")]
            store: super::store::StoreOptions::default(),
        }
    }

    /// Grades every sample `epochs` times (at least once).
    pub fn epochs(mut self, epochs: u32) -> Self {
        self.epochs = epochs.max(1);
        self
    }

    /// Runs at most `concurrency` gradings at once (at least one).
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    /// Runs every sample's grading future inside `limiter`'s scope (see [`Limiter::scope`]),
    /// so that the commands, judge calls and other limited work of all the samples in flight
    /// share its slots. (What the grading function does before returning its future runs
    /// outside.) Without one, a run inherits whatever limiter is in force where it is awaited.
    ///
    /// ```
    /// use grader_eval::Evaluation;
    /// use grader_core::limit::{Limiter, Resource};
    ///
    /// // 64 samples in flight, but at most 8 commands and 16 judge calls at once among them.
    /// let limiter = Limiter::new().limit(Resource::Commands, 8).limit(Resource::Judge, 16);
    /// let evaluation = Evaluation::new("results.jsonl").concurrency(64).limiter(&limiter);
    /// # drop(evaluation);
    /// ```
    pub fn limiter(mut self, limiter: &Limiter) -> Self {
        self.limiter = Some(limiter.clone());
        self
    }

    /// Does only this shard of the run.
    pub fn shard(mut self, shard: Shard) -> Self {
        self.shard = shard;
        self
    }

    /// Whether Ctrl-C (SIGINT) stops the run cleanly (the default). Note that once a run has
    /// listened for it, SIGINT no longer ends the process by default for its lifetime.
    pub fn handle_interrupts(mut self, enabled: bool) -> Self {
        self.interrupts = enabled;
        self
    }

    /// How lines reach object storage when the output is an `s3://`, `gs://` or `az://` URL
    /// (feature `object-store`): chunk size and interval, and retries. See the `store` module
    /// for the layout and its guarantees.
    #[cfg(feature = "object-store")]
    pub fn store_options(mut self, options: super::store::StoreOptions) -> Self {
        self.store = options;
        self
    }

    /// Whether to draw a progress bar on stderr when it is a terminal (the default; only with
    /// the `progress` feature).
    pub fn progress(mut self, enabled: bool) -> Self {
        self.progress = enabled;
        self
    }

    /// The summary of a results file (or of any evaluation file), streamed line by line. With
    /// the feature `object-store`, `path` may be an object store URL: every chunk of every
    /// shard written there, or the one object it names.
    ///
    /// # Errors
    /// When the file cannot be read or holds a line that is not an evaluation line. A torn
    /// last line is left out.
    pub fn summarize(
        path: &Path,
        options: super::SummaryOptions,
    ) -> Result<super::Summary, EvalError> {
        Ok(super::summary::summarize_files(&[path], options)?)
    }

    /// Grades `samples` (skipping what the file already holds and other shards' samples) with
    /// `grade`, which is called with the sample and the epoch (from 1) and returns a future of
    /// the result. A [`Gather`](grader_core::Gather) is such a future. The future runs as a task of
    /// the runtime, so it is `Send + 'static`: it owns what it uses (the `Arc` of the sample,
    /// clones), as a spawned task does. Work done in `grade` itself, before it returns the
    /// future, runs in the awaiting task: put the grading inside the future (`|s, _| async move
    /// { … }`) for it to run on the worker threads.
    ///
    /// # Errors
    /// [`EvalError`] when the results file cannot be read or written, or holds something that
    /// is not an evaluation line. A sample's failure is not an error of the run.
    pub async fn run<I, S, F, Fut, E>(&self, samples: I, grade: F) -> Result<RunReport, EvalError>
    where
        I: IntoIterator<Item = S>,
        S: Sample,
        F: FnMut(Arc<S>, u32) -> Fut,
        Fut: Future<Output = Result<EvaluationResult, E>> + Send + 'static,
        E: Display + 'static,
    {
        self.run_with(samples.into_iter(), grade, |samples, grade| {
            Err((samples, grade))
        })
        .await
    }

    /// Grades `samples` as [`run`](Self::run) does, but on a multi-threaded runtime the worker
    /// threads take the samples and call `grade` themselves, each for the gradings it starts,
    /// so the task awaiting the run makes none: it only counts the lines (and, for object
    /// storage, uploads them). So the samples' iterator, the samples and `grade` are shared
    /// among threads (`Send`, `Sync`, `'static`: an owned iterator, such as a `Vec`'s
    /// `into_iter()`, rather than one that borrows), where `run` asks none of that of them.
    ///
    /// With `run`, the awaiting task makes every grading (takes the sample, works out its id,
    /// calls `grade`, boxes the future) and so bounds the run's pace when gradings are cheap.
    /// On two cores, with the text graders, two workers came to 92–96% of the speed of two
    /// current-thread runs side by side this way, against 85–94% with `run`, with a twentieth
    /// of the context switches (`benches/eval/threads.py`; README). On a current-thread
    /// runtime the two are the same. Everything else `run` promises holds: bounded concurrency, streaming, resume,
    /// shards, Ctrl-C, the limiter (here `grade` itself runs inside its scope too, on the
    /// lane), failures per line. Samples are taken in order, a few at a time by each lane (the
    /// iterator advanced under a lock, on a worker: it should not block, as reading a large
    /// file line by line would not for long), so lines end about in the samples' order.
    ///
    /// On worker threads, a panic of the samples' iterator (or of a sample's
    /// [`id`](Sample::id)) ends the run once the gradings in flight have ended and their lines
    /// are written, and then resumes on the awaiting task, as it would have started there
    /// with `run`; on a current-thread runtime it unwinds at once, as with `run`.
    ///
    /// What `grade` does before it returns its future runs on the lane, and counts towards
    /// the half millisecond after which a lane gives its worker's other tasks a turn; but a
    /// lane makes the gradings of the slots it claims (up to 16) in one go, so keep slow work
    /// in the future. When the run's future is dropped, the iterator and `grade` are dropped
    /// by the last of its lanes to end, on a worker, moments later.
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use grader_eval::Evaluation;
    /// use grader_core::text::exact_match;
    /// use grader_core::{Grade, SubScore};
    ///
    /// # let dir = std::env::temp_dir().join(format!("grader-eval-shared-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// let output = dir.join("results.jsonl");
    /// # let _ = std::fs::remove_file(&output);
    /// let runtime = tokio::runtime::Builder::new_multi_thread()
    ///     .worker_threads(2)
    ///     .enable_all()
    ///     .build()?;
    /// let samples: Vec<(String, (String, String))> = (0..1_000)
    ///     .map(|i| (format!("q{i}"), (format!("answer {}", i % 3), "answer 0".to_owned())))
    ///     .collect();
    /// let report = runtime.block_on(Evaluation::new(&output).concurrency(64).run_shared(
    ///     samples,
    ///     |sample: Arc<(String, (String, String))>, _epoch| async move {
    ///         let (answer, reference) = &sample.1;
    ///         let exact = SubScore::new("exact", exact_match(answer, reference))?;
    ///         Ok::<_, Box<dyn std::error::Error>>(Grade::from_subscores([exact])?)
    ///     },
    /// ))?;
    /// assert_eq!(report.written, 1_000);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`run`](Self::run).
    pub async fn run_shared<I, S, F, Fut, E>(
        &self,
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
        self.run_with(samples.into_iter(), grade, |samples, grade| {
            Ok(Box::new(SharedSamples {
                samples: Mutex::new(Ahead {
                    samples,
                    next: None,
                }),
                panic: Mutex::new(None),
                grade,
            }))
        })
        .await
    }

    /// The run of [`run`](Self::run) and [`run_shared`](Self::run_shared): `to_lanes` hands
    /// the samples and the grading function to the lanes as a [`Source`] when the gradings run
    /// in lanes (or gives them back, for the awaiting task to make the gradings).
    async fn run_with<It, S, F, Fut, E>(
        &self,
        samples: It,
        grade: F,
        to_lanes: impl FnOnce(Samples<It, S>, F) -> Result<Box<dyn Source>, (Samples<It, S>, F)>,
    ) -> Result<RunReport, EvalError>
    where
        It: Iterator<Item = S>,
        S: Sample,
        F: FnMut(Arc<S>, u32) -> Fut,
        Fut: Future<Output = Result<EvaluationResult, E>> + Send + 'static,
        E: Display + 'static,
    {
        let started = Instant::now();
        let path = self.output.clone();
        let io = |error: SinkError| error.into_eval(&path);
        let (done, torn_line, mut sink) = super::output::open(
            &self.output,
            self.shard,
            #[cfg(feature = "object-store")]
            self.store,
        )
        .await?;

        let resumed_before: usize = done.values().map(Vec::len).sum();
        let exact_len = match samples.size_hint() {
            (low, Some(high)) if low == high && self.shard == Shard::ALL => Some(low),
            _ => None,
        };
        let epochs = self.epochs;
        let samples = Samples {
            samples: samples.fuse(),
            done,
            shard: self.shard,
            epochs,
            current: None,
            resumed: 0,
            other_shards: 0,
        };

        let mut progress = Progress::new(
            self.progress,
            exact_len.map(|n| (n * epochs as usize).saturating_sub(resumed_before) as u64),
        );
        let mut interrupt = std::pin::pin!(async {
            if self.interrupts {
                if tokio::signal::ctrl_c().await.is_err() {
                    std::future::pending::<()>().await;
                }
            } else {
                std::future::pending::<()>().await;
            }
        });

        // Gradings run in lanes, tasks of the runtime, so a multi-threaded runtime grades on all
        // its worker threads; the scope (limiter, policies) in force here goes with it.
        let scope = match &self.limiter {
            Some(limiter) => Scope::current().with_limiter(limiter.clone()),
            None => Scope::current(),
        };
        // A local file is appended to by the lanes themselves, on the worker threads.
        let file = sink.shared_file();
        // The samples, and the grading function, unless the lanes make the gradings.
        let (mut making, source) = if super::running::lanes_here() {
            match to_lanes(samples, grade) {
                Ok(source) => (None, Some(source)),
                Err(back) => (Some(back), None),
            }
        } else {
            (Some((samples, grade)), None)
        };
        let mut running =
            Running::with_source(self.concurrency, scope.clone(), file.clone(), source);
        let mut buffer = Vec::new();
        let mut written = 0;
        let mut errored = 0;
        let mut interrupted = false;
        let mut exhausted = making.is_none();
        // Appends finished lines to `buffer`, counting them.
        let mut take = |buffer: &mut Vec<u8>, line: &Finished| -> Result<(), EvalError> {
            match &line.json {
                Json::Line(json) => {
                    let before = buffer.len();
                    if let Err(source) = super::line::write_line(buffer, json) {
                        buffer.truncate(before);
                        return Err(EvalError::Serialize {
                            id: json.id.clone(),
                            source,
                        });
                    }
                    buffer.push(b'\n');
                }
                Json::Written(Ok(json)) => buffer.extend_from_slice(json),
                Json::Written(Err((id, message))) => {
                    return Err(EvalError::Serialize {
                        id: id.clone(),
                        source: serde_json::Error::io(std::io::Error::other(message.clone())),
                    });
                }
                Json::WithOthers | Json::InFile => {}
                Json::Unwritten => {
                    return Err(EvalError::Io {
                        path: path.clone(),
                        source: file.as_ref().map_or_else(
                            || std::io::Error::other("the line was not written"),
                            |file| file.error(),
                        ),
                    });
                }
            }
            written += 1;
            if line.errored {
                errored += 1;
            }
            progress.record(line.reward);
            Ok(())
        };
        let mut outcome: Result<(), EvalError> = Ok(());
        loop {
            let mut room = if exhausted { 0 } else { running.room() };
            while room > 0
                && let Some((samples, grade)) = making.as_mut()
            {
                room -= 1;
                let Some((sample, id, epoch)) = samples.next() else {
                    exhausted = true;
                    break;
                };
                // The call runs here, outside the limiter's scope (as documented); its future,
                // or its panic, becomes the grading. In a lane its line is written out as JSON
                // on the worker; polled in place, it is written straight into the buffer.
                let line = grading(&mut *grade, sample, Arc::clone(&id), epoch);
                if running.spawns() || self.limiter.is_none() {
                    // A lane runs in the scope; polled in place, a grading is in the awaiting
                    // task's scope.
                    running.spawn(id, epoch, line);
                } else {
                    running.spawn(id, epoch, scope.clone().enter(line));
                }
            }
            running.start();
            if running.is_empty() {
                break;
            }
            let line = tokio::select! {
                biased;
                () = &mut interrupt => {
                    interrupted = true;
                    break;
                }
                ended = running.next(!exhausted) => match ended {
                    Some(line) => line,
                    // Room to make more gradings; or none in flight: gradings cancelled under
                    // the run (the runtime shutting down) have no line.
                    None => continue,
                },
                () = sink.due() => {
                    // Lines have waited long enough for object storage.
                    if let Err(error) = sink.upload().await {
                        outcome = Err(error);
                        break;
                    }
                    continue;
                }
            };
            // Lines that finished together and are not written yet (polled in place, handed
            // over for object storage, or made here) are written together, in one `write`,
            // before any other grading is polled: a crash still loses only what was in flight.
            // (Batch tasks append theirs to a local file themselves.)
            buffer.clear();
            let mut batch = 0;
            let mut next = Some(line);
            while let Some(line) = next {
                if let Err(error) = take(&mut buffer, &line) {
                    outcome = Err(error);
                    break;
                }
                batch += 1;
                next = running.try_next();
            }
            // (Empty when the lanes appended the lines to the file themselves.)
            if outcome.is_ok() && !buffer.is_empty() {
                outcome = sink.write(&buffer, batch).await.map_err(io);
            }
            if outcome.is_err() {
                break;
            }
        }
        // Cancelling the gradings in flight drops them (which kills their commands), and waits
        // until every one is gone: nothing started here outlives the run. Those that finished
        // meanwhile are kept (after Ctrl-C) rather than thrown away.
        let finished = running.cancel().await;
        let in_flight = running.cancelled;
        let unstarted = running.unstarted;
        let (resumed, other_shards) = match &making {
            Some((samples, _)) => (samples.resumed, samples.other_shards),
            None => running.source_counts(),
        };
        let source_panic = running.source_panic();
        // Samples no grading was made for (the runtime shut down before they were taken).
        let samples_left = match &making {
            Some(_) => !exhausted,
            None => running.source_unfinished(),
        };
        if outcome.is_ok() && !finished.is_empty() {
            buffer.clear();
            for line in &finished {
                outcome = take(&mut buffer, line);
                if outcome.is_err() {
                    break;
                }
            }
            if outcome.is_ok() && !buffer.is_empty() {
                outcome = sink.write(&buffer, finished.len()).await.map_err(io);
            }
        }
        drop(making);
        outcome?;
        sink.finish().await.map_err(io)?;
        progress.finish();
        if let Some(panic) = source_panic {
            std::panic::resume_unwind(panic);
        }
        // A run that ends by itself has nothing in flight: gradings cancelled without Ctrl-C
        // were cancelled under it, and their pairs are missing.
        if !interrupted && (in_flight + unstarted > 0 || samples_left) {
            return Err(EvalError::Cancelled {
                path: path.clone(),
                cancelled: in_flight + unstarted,
                written,
                samples_left,
            });
        }
        if interrupted {
            eprintln!(
                "interrupted: {written} lines written to {}, {in_flight} gradings in flight \
                 cancelled. Run the same evaluation with the same output to resume.",
                path.display()
            );
        }
        Ok(RunReport {
            output: path.clone(),
            written,
            errored,
            resumed,
            other_shards,
            torn_line,
            interrupted,
            elapsed: started.elapsed(),
        })
    }
}

pin_project_lite::pin_project! {
    /// One grading: the grading function's future, its panic caught, ending in the line.
    /// Small (the future and a few words) where an `async` block holding the same would
    /// hold the result several times over. It is timed from its first poll (it may wait in
    /// the queue before).
    struct Graded<Fut> {
        #[pin]
        future: Stage<Fut>,
        id: Arc<str>,
        epoch: u32,
        started: Option<Instant>,
    }

    impl<Fut> PinnedDrop for Graded<Fut> {
        /// A grading dropped before it ended (cancelled, or never started) may panic in its
        /// future's destructor: that is caught here, so that whatever is dropped with it (the
        /// other gradings of its lane, those in the queue) is still dropped, and the run still
        /// hears of it.
        fn drop(this: Pin<&mut Self>) {
            let mut future = this.project().future;
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| future.set(Stage::Ended)));
        }
    }
}

pin_project_lite::pin_project! {
    /// The grading function's future until it ends; then nothing, as it is dropped as soon as
    /// it ends, where a panic of its destructor is caught too.
    #[project = StageProj]
    #[project_replace = StageReplace]
    enum Stage<Fut> {
        Running { #[pin] future: futures_util::future::CatchUnwind<AssertUnwindSafe<Fut>> },
        Ended,
    }
}

impl<Fut, E> Graded<Fut>
where
    Fut: Future<Output = Result<EvaluationResult, E>>,
    E: Display,
{
    fn new(future: Fut, id: Arc<str>, epoch: u32) -> Self {
        Graded {
            future: Stage::Running {
                future: AssertUnwindSafe(future).catch_unwind(),
            },
            id,
            epoch,
            started: None,
        }
    }

    /// The line of a grading that ended with `outcome`, turning an error or a panic into the
    /// line's error. `started` is when its first poll began, `polled` when its last did.
    fn line(
        outcome: std::thread::Result<Result<EvaluationResult, E>>,
        id: Arc<str>,
        epoch: u32,
        started: Instant,
        polled: Instant,
    ) -> Finished {
        let ended = Instant::now();
        let secs = ended.duration_since(started).as_secs_f64();
        let line = match outcome {
            Ok(Ok(result)) => Line::graded(&*id, epoch, result, secs),
            Ok(Err(error)) => Line::failed(&*id, epoch, ErrorKind::Failed, error.to_string(), secs),
            Err(panic) => Line::failed(
                &*id,
                epoch,
                ErrorKind::Panicked,
                panic_message(&panic),
                secs,
            ),
        };
        // (Most gradings end at their first poll: the same span.)
        let last_poll = if polled == started {
            secs
        } else {
            ended.duration_since(polled).as_secs_f64()
        };
        Finished {
            last_poll,
            ..Finished::new(line)
        }
    }
}

impl<Fut, E> Future for Graded<Fut>
where
    Fut: Future<Output = Result<EvaluationResult, E>>,
    E: Display,
{
    type Output = Finished;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Finished> {
        let mut this = self.project();
        // The start of this poll, and of the first: a grading that ends at its first poll (most
        // that only compute) reads the clock there and at its end.
        let polled = Instant::now();
        let started = *this.started.get_or_insert(polled);
        let outcome = match this.future.as_mut().project() {
            StageProj::Running { future } => std::task::ready!(future.poll(cx)),
            StageProj::Ended => panic!("a grading polled after it ended"),
        };
        let (id, epoch) = (Arc::clone(this.id), *this.epoch);
        // What runs of the grading's own code after it ended (its future's destructor, its
        // error's `Display`) may panic too: that is this grading's panic, and becomes its line,
        // rather than unwinding through the lane it shares a task with (or, polled in place,
        // through the run).
        let ended = std::panic::catch_unwind(AssertUnwindSafe(|| {
            this.future.project_replace(Stage::Ended);
            Self::line(outcome, Arc::clone(&id), epoch, started, polled)
        }));
        std::task::Poll::Ready(
            ended.unwrap_or_else(|panic| Self::line(Err(panic), id, epoch, started, polled)),
        )
    }
}

/// A sample to grade, with its id and the epoch.
type Pair<S> = (Arc<S>, Arc<str>, u32);

/// The (sample, id, epoch) pairs a run grades, in order: every epoch of each sample in the
/// run's shard that the output does not hold yet.
struct Samples<It, S> {
    samples: std::iter::Fuse<It>,
    /// The epochs the output holds of each sample id.
    done: HashMap<String, Vec<u32>>,
    shard: Shard,
    epochs: u32,
    /// The sample whose epochs are being taken, with its id and next epoch.
    current: Option<Pair<S>>,
    /// Gradings skipped because the output holds their lines.
    resumed: usize,
    /// Samples skipped because another shard grades them.
    other_shards: usize,
}

impl<It: Iterator<Item = S>, S: Sample> Iterator for Samples<It, S> {
    type Item = Pair<S>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((sample, id, epoch)) = &mut self.current {
                let done = self.done.get(&**id);
                while *epoch <= self.epochs {
                    let this = *epoch;
                    *epoch += 1;
                    if done.is_some_and(|done| done.contains(&this)) {
                        self.resumed += 1;
                    } else {
                        return Some((Arc::clone(sample), Arc::clone(id), this));
                    }
                }
                self.current = None;
            }
            let sample = self.samples.next()?;
            let id = sample.id();
            if self.shard.contains(&id) {
                self.current = Some((Arc::new(sample), id.into(), 1));
            } else {
                // Another shard's sample is not resumed: this run was never going to grade it.
                self.other_shards += 1;
            }
        }
    }
}

/// The grading of (`sample`, `epoch`) with `grade`: its future, or its panic as the line.
fn grading<S, Fut, E>(
    grade: impl FnOnce(Arc<S>, u32) -> Fut,
    sample: Arc<S>,
    id: Arc<str>,
    epoch: u32,
) -> impl Future<Output = Finished> + Send + 'static
where
    Fut: Future<Output = Result<EvaluationResult, E>> + Send + 'static,
    E: Display + 'static,
{
    match std::panic::catch_unwind(AssertUnwindSafe(|| grade(sample, epoch))) {
        Ok(future) => Either::Left(Graded::new(future, id, epoch)),
        Err(panic) => {
            let now = Instant::now();
            Either::Right(std::future::ready(Graded::<Fut>::line(
                Err(panic),
                id,
                epoch,
                now,
                now,
            )))
        }
    }
}

/// The samples, and the next pair, taken ahead so that the lane taking the last pairs knows
/// they are the last.
struct Ahead<It, S> {
    samples: Samples<It, S>,
    next: Option<Pair<S>>,
}

/// The samples and the grading function of [`Evaluation::run_shared`], for its lanes to make
/// gradings from.
struct SharedSamples<It, S, F> {
    samples: Mutex<Ahead<It, S>>,
    /// What the samples' iterator panicked with (it is not asked again).
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    grade: F,
}

impl<It, S, F, Fut, E> Source for SharedSamples<It, S, F>
where
    It: Iterator<Item = S> + Send + 'static,
    S: Sample + Send + Sync + 'static,
    F: Fn(Arc<S>, u32) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<EvaluationResult, E>> + Send + 'static,
    E: Display + 'static,
{
    fn make(&self, n: usize, into: &mut Vec<Made>) -> (usize, bool) {
        // The pairs are taken under the lock, and the gradings made outside it, so lanes make
        // theirs side by side.
        let mut pairs = Vec::with_capacity(n);
        let ended = {
            let mut guard = lock(&self.samples);
            let Ahead { samples, next } = &mut *guard;
            let mut panic = lock(&self.panic);
            if panic.is_some() {
                return (0, true);
            }
            let taken = std::panic::catch_unwind(AssertUnwindSafe(|| {
                pairs.extend(next.take());
                while pairs.len() < n
                    && let Some(pair) = samples.next()
                {
                    pairs.push(pair);
                }
                *next = samples.next();
            }));
            if let Err(payload) = taken {
                *panic = Some(payload);
            }
            panic.is_some() || next.is_none()
        };
        // The grading function's calls are caught one by one (a panic is that grading's line);
        // what could still unwind here (a panic payload whose destructor panics) ends the
        // samples as the iterator's panic would, and the run re-raises it.
        let before = into.len();
        let made = std::panic::catch_unwind(AssertUnwindSafe(|| {
            into.extend(pairs.into_iter().map(|(sample, id, epoch)| Made {
                grading: Box::pin(grading(&self.grade, sample, Arc::clone(&id), epoch)),
                id,
                epoch,
            }));
        }));
        if let Err(payload) = made {
            let mut panic = lock(&self.panic);
            match panic.as_ref() {
                None => *panic = Some(payload),
                Some(_) => std::mem::forget(payload),
            }
            return (into.len() - before, true);
        }
        (into.len() - before, ended)
    }

    fn take_panic(&self) -> Option<Box<dyn std::any::Any + Send>> {
        lock(&self.panic).take()
    }

    fn counts(&self) -> (usize, usize) {
        let samples = &lock(&self.samples).samples;
        (samples.resumed, samples.other_shards)
    }
}

/// What [`merge`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MergeReport {
    /// Lines written.
    pub written: usize,
    /// Lines left out because an earlier input already had that (sample, epoch).
    pub duplicates: usize,
    /// Inputs that ended in a torn line (left out).
    pub torn: Vec<PathBuf>,
}

/// Joins the results files of several shards (or runs) into `output`, streaming: every line
/// of every input in input order, each (sample, epoch) once (the first seen wins). A torn
/// last line of an input is left out and reported.
///
/// The merged file is itself a results file: an [`Evaluation`] can resume from it, and its
/// [`Summary`](super::Summary) equals the summary of the inputs read together.
///
/// With the feature `object-store`, inputs may be object store URLs (every chunk of every
/// shard an evaluation wrote there, or one object), and so may `output`: the merged lines
/// are then stored as the one object the URL names (`s3://bucket/evals/merged.jsonl`), which
/// every reader reads back as it would the local file. The object appears whole once the
/// merge succeeds (one `PUT`, or a multipart upload of 10 MiB parts for a larger merge,
/// streamed in bounded memory); a merge that fails stores nothing and leaves an object already
/// there as it was. The URL must not hold chunks of an evaluation under it (readers would read
/// those instead).
///
/// # Errors
/// When an input cannot be read or holds a line that is not an evaluation line, or the output
/// cannot be written (for a URL: the bucket is missing, access is denied, an upload failed;
/// [`EvalError::Store`] names the URL, never a credential). `output` must not be one of the
/// inputs.
pub fn merge(inputs: &[PathBuf], output: &Path) -> Result<MergeReport, EvalError> {
    let mut writer = super::output::MergeOutput::create(output, inputs)?;
    let mut seen = HashSet::new();
    let mut report = MergeReport {
        written: 0,
        duplicates: 0,
        torn: Vec::new(),
    };
    for input in inputs {
        for entry in read_lines(input)? {
            match entry? {
                Entry::Line(line) => {
                    if !seen.insert((line.id.clone(), line.epoch)) {
                        report.duplicates += 1;
                        continue;
                    }
                    let bytes = line.to_json_line().map_err(|source| EvalError::Serialize {
                        id: line.id.clone(),
                        source,
                    })?;
                    writer.write(output, &bytes)?;
                    report.written += 1;
                }
                Entry::Torn { .. } => report.torn.push(input.clone()),
            }
        }
    }
    writer.finish(output)?;
    Ok(report)
}

impl Drop for Progress {
    /// A run dropped mid-way (cancelled) clears its bar too.
    fn drop(&mut self) {
        self.finish();
    }
}

/// The progress bar, or nothing.
struct Progress {
    #[cfg(feature = "progress")]
    bar: Option<indicatif::ProgressBar>,
    #[cfg(feature = "progress")]
    stats: (u64, u64, crate::metrics::RunningMean),
}

impl Progress {
    #[cfg_attr(not(feature = "progress"), allow(unused_variables))]
    fn new(enabled: bool, total: Option<u64>) -> Self {
        #[cfg(feature = "progress")]
        {
            use std::io::IsTerminal as _;
            let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
                let bar = total.map_or_else(
                    indicatif::ProgressBar::no_length,
                    indicatif::ProgressBar::new,
                );
                let style = indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} {msg} {per_sec} eta {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
                bar.set_style(style);
                bar
            });
            Progress {
                bar,
                stats: (0, 0, crate::metrics::RunningMean::default()),
            }
        }
        #[cfg(not(feature = "progress"))]
        Progress {}
    }

    #[cfg_attr(
        not(feature = "progress"),
        allow(unused_variables, clippy::unused_self)
    )]
    fn record(&mut self, reward: Option<f64>) {
        #[cfg(feature = "progress")]
        if let Some(bar) = &self.bar {
            self.stats.0 += 1;
            match reward {
                Some(reward) => self.stats.2.push(reward),
                None => self.stats.1 += 1,
            }
            bar.set_message(format!(
                "errors {} mean {:.4}",
                self.stats.1,
                self.stats.2.mean()
            ));
            bar.inc(1);
        }
    }

    #[cfg_attr(not(feature = "progress"), allow(clippy::unused_self))]
    fn finish(&mut self) {
        #[cfg(feature = "progress")]
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grading's last poll is timed apart from its whole duration: one that waited 20 ms on
    /// a timer and then ended at once held its thread for a sliver of that, and only the
    /// sliver counts towards the runner's slice (which would otherwise yield after every such
    /// grading).
    #[test]
    fn a_gradings_last_poll_leaves_out_its_waits() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let graded = Graded::new(
            async {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                let check = grader_core::SubScore::new("check", 1.0).map_err(|e| e.to_string())?;
                grader_core::Grade::from_subscores([check]).map_err(|e| e.to_string())
            },
            Arc::from("s"),
            1,
        );
        let finished = runtime.block_on(graded);
        let Json::Line(line) = &finished.json else {
            panic!("a line not written out")
        };
        assert!(line.error.is_none(), "{:?}", line.error);
        assert!(line.duration_secs >= 0.02, "{}", line.duration_secs);
        assert!(
            finished.last_poll < line.duration_secs / 2.0,
            "last poll {} s of {} s",
            finished.last_poll,
            line.duration_secs
        );
        // One that ends at its first poll: its last poll is all of it.
        let at_once = runtime.block_on(Graded::new(
            async { Err::<grader_core::EvaluationResult, _>("no") },
            Arc::from("t"),
            1,
        ));
        let Json::Line(line) = &at_once.json else {
            panic!("a line not written out")
        };
        assert_eq!(at_once.last_poll, line.duration_secs);
    }
}
