//! The starters: a few threads of this module's own, shared by every grade of the process,
//! that start commands off the executor.
//!
//! Starting a process takes the calling thread milliseconds (the kernel's `vfork` and `exec`,
//! longer when the commands already started crowd the cores). On an executor thread, hundreds
//! of commands in one [`Gather`](crate::Gather) would start one after the other while no timer
//! of those already running could fire. tokio's blocking pool is not used: a grade awaited
//! from its last free thread (`Handle::block_on` inside `spawn_blocking`) would wait for
//! itself, and a semaphore bounding it would be held by gradings polled once and then left.
//! Here a grading hands its start to the queue and awaits the answer; the starters take the
//! runtime's context from the grading, so tokio registers the command's pipes with it. The
//! look for a file the command cut at its file-size limit, which walks a directory tree, runs
//! here too. [`check_runtime`] tells, before anything starts, whether the runtime a grade runs
//! on has what it needs.

use std::any::Any;
use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use std::time::Duration;

use tokio::sync::oneshot;

use super::per_process::PerProcess;
use crate::error::Failure;

/// How many threads start commands.
const STARTERS: usize = 4;

type Job = Box<dyn FnOnce() + Send>;

/// Runs `job` on a starter thread, inside the calling task's runtime context, and returns what
/// it returned (or its panic). When the caller is dropped first, what `job` returned is dropped
/// on the starter thread.
///
/// # Errors
/// When no starter thread could be started.
pub(super) async fn run<T: Send + 'static>(
    job: impl FnOnce() -> T + Send + 'static,
) -> io::Result<Result<T, Box<dyn Any + Send>>> {
    let (answer, answered) = oneshot::channel();
    let runtime = tokio::runtime::Handle::current();
    let job: Job = Box::new(move || {
        let _context = runtime.enter();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(job));
        // A caller that is gone drops what it would have had, here.
        let _ = answer.send(outcome);
    });
    queue()?
        .send(job)
        .map_err(|_| io::Error::other("the threads that start commands are gone"))?;
    answered
        .await
        .map_err(|_| io::Error::other("a thread that starts commands stopped"))
}

/// The queue, and its threads the first time (in a child made by `fork`, which has none of
/// its parent's threads, its own).
fn queue() -> io::Result<&'static mpsc::Sender<Job>> {
    static QUEUE: PerProcess<mpsc::Sender<Job>> = PerProcess::new();
    if let Some(queue) = QUEUE.get() {
        return Ok(queue);
    }
    let (tx, rx) = mpsc::channel::<Job>();
    let rx = Arc::new(Mutex::new(rx));
    let mut started = 0;
    let mut error = None;
    for n in 0..STARTERS {
        let rx = Arc::clone(&rx);
        let spawned = std::thread::Builder::new()
            .name(format!("grader-bash-starter-{n}"))
            .spawn(move || serve(&rx));
        match spawned {
            Ok(_) => started += 1,
            Err(e) => error = Some(e),
        }
    }
    if started == 0 {
        return Err(error.unwrap_or_else(|| io::Error::other("no thread started")));
    }
    // Two first callers may race: the loser's threads see their queue closed and end.
    Ok(QUEUE.get_or_init(|| tx))
}

/// A starter thread: runs jobs until the queue closes.
fn serve(rx: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        let job = {
            let rx = rx.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            rx.recv()
        };
        match job {
            // A job catches its own panics; this one is for a panic while dropping what it
            // returned, which must not end the thread.
            Ok(job) => drop(std::panic::catch_unwind(AssertUnwindSafe(job))),
            Err(mpsc::RecvError) => return,
        }
    }
}

/// Fails unless this code runs inside a tokio runtime with its IO driver and its timer, before
/// anything is started: without them tokio panics once the command is running.
///
/// tokio offers no way to ask, so each driver is probed with a call that panics without it;
/// the panic is caught, and the panic hook still prints tokio's message. Under
/// `panic = "abort"` the probe aborts instead.
pub(super) fn check_runtime() -> Result<(), Failure> {
    let problem = if tokio::runtime::Handle::try_current().is_err() {
        "no tokio runtime is running; await the grade inside one, or call `grade_blocking`"
    } else if std::panic::catch_unwind(|| drop(tokio::time::sleep(Duration::ZERO))).is_err() {
        "the tokio runtime has no timer; build it with `enable_all()` (or `enable_time()`)"
    } else if std::panic::catch_unwind(|| {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child()).map(drop)
    })
    .is_err()
    {
        "the tokio runtime has no IO driver; build it with `enable_all()` (or `enable_io()`)"
    } else {
        return Ok(());
    };
    Err(Failure::Runtime(problem.to_owned()))
}
