//! Running an evaluation: [`Evaluation`], and joining shards with [`merge`].
//
// The files: this one holds the runner, `Evaluation`, and its loop; `samples.rs` what a run
// grades (`Sample`, and the pairs its output lacks, for the awaiting task or the lanes);
// `grading.rs` one grading's future, `clock.rs` its start by the wall clock; `report.rs` what
// a run did (`RunReport`);
// `merging.rs` joining shards' files (`merge`); `progress.rs` the progress bar. The gradings
// in flight are the `running` module's, the output the `output` module's.

use std::fmt::Display;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::output::SinkError;
use super::running::{Finished, Json, Running, Source};
use super::shard::Shard;
use crate::error::EvalError;
use grader_core::limit::{Limiter, Scope};
use grader_core::score::EvaluationResult;

mod clock;
mod grading;
mod merging;
mod progress;
mod report;
mod samples;

pub use merging::{MergeReport, OnConflict, merge, merge_resolving};
pub use report::{INTERRUPTED_EXIT_STATUS, RunReport};
pub use samples::{Described, Sample};

use grading::grading;
use progress::Progress;
use samples::{Samples, SharedSamples, texts_of};

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
    /// With `run`, the awaiting task makes every grading (takes the sample, works out its id, calls
    /// `grade`, boxes the future) and so bounds the run's pace when gradings are cheap. On two
    /// cores, with the text graders, two workers came to 92–96% of the speed of two current-thread
    /// runs side by side this way, against 85–94% with `run`, with a twentieth of the context
    /// switches (`benches/eval/threads.py`; BENCHMARKS.md, "`run_shared`"). On a current-thread
    /// runtime the two are the same. Everything else `run` promises holds: bounded concurrency,
    /// streaming, resume, shards, Ctrl-C, the limiter (here `grade` itself runs inside its scope
    /// too, on the lane), failures per line. Samples are taken in order, a few at a time by each
    /// lane (the iterator advanced under a lock, on a worker: it should not block, as reading a
    /// large file line by line would not for long), so lines end about in the samples' order.
    ///
    /// On worker threads, a panic of the samples' iterator (or of a sample's
    /// [`id`](Sample::id)) ends the run once the gradings in flight have ended and their lines
    /// are written, and then resumes on the awaiting task, as it would have started there
    /// with `run`; on a current-thread runtime it unwinds at once, as with `run`.
    ///
    /// Each lane owns its part of the `concurrency` slots. While its gradings end without
    /// waiting, it takes samples and makes gradings a batch at a time (up to 16, ahead of its
    /// slots, so that the samples' lock is taken once a batch, not once a grading); while one
    /// of its gradings waits, it makes no more than its free slots, and hands those it made
    /// ahead back for other lanes to start.
    ///
    /// What `grade` does before it returns its future runs on the lane, and counts towards
    /// the half millisecond after which a lane gives its worker's other tasks a turn; a lane
    /// makes the gradings of its free slots in one go (a batch ahead only while `grade` returns
    /// within a few microseconds), so keep slow work in the future. When the run's future is
    /// dropped, the iterator and `grade` are dropped by the last of its lanes to end, on a
    /// worker, moments later.
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
            Ok(Box::new(SharedSamples::new(samples, grade)))
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
                let line = grading(&mut *grade, texts_of::<S>, sample, Arc::clone(&id), epoch);
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
