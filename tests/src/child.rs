//! Waiting on a child process with a bound, so that a test whose child hangs fails with what
//! the child wrote instead of stalling the whole run.
//!
//! The bound is a watchdog, not a timing assertion: [`WATCHDOG`] is minutes, far above what any
//! child of these tests takes on a loaded two-core machine. Past it the child is killed and the
//! test fails, naming the command.
//!
//! A test that signals a child of its own must also give it the signal's default disposition:
//! a test run started as a background job of a script (`cargo test &`, `nohup`) has SIGINT and
//! SIGQUIT ignored, and children inherit that. [`with_default_signals`] wraps a command in
//! coreutils' `env --default-signal`, which restores them before it runs the program (same
//! process, so the pid the test signals is the program's).

use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a test waits for a child before it kills it and fails.
pub const WATCHDOG: Duration = Duration::from_secs(10 * 60);

/// Waits for `child` to exit, up to [`WATCHDOG`].
///
/// # Panics
/// When the child is still running after [`WATCHDOG`] (it is killed first), or when it cannot
/// be waited for.
#[track_caller]
pub fn wait(child: &mut Child, what: &str) -> ExitStatus {
    wait_for(child, what, WATCHDOG)
}

/// As [`wait`], with a bound of the caller's (a child expected to end soon after a signal).
///
/// # Panics
/// As [`wait`].
#[track_caller]
pub fn wait_for(child: &mut Child, what: &str, bound: Duration) -> ExitStatus {
    match wait_until(child, Instant::now() + bound) {
        Some(status) => status,
        None => panic!(
            "{what} (pid {}) was still running after {} s: killed",
            child.id(),
            bound.as_secs()
        ),
    }
}

/// Waits for `child` until `deadline`; kills it and returns `None` past it.
fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait().expect("poll a child") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Waits for `child`, whose standard output and error are piped, collecting both, up to
/// [`WATCHDOG`]: the bounded form of [`Child::wait_with_output`].
///
/// # Panics
/// When the child is still running after [`WATCHDOG`] (killed; the message holds what it had
/// written), or when it cannot be waited for.
#[track_caller]
pub fn wait_with_output(child: Child, what: &str) -> Output {
    wait_with_output_within(child, what, WATCHDOG)
}

/// As [`wait_with_output`], with a bound of the caller's.
///
/// # Panics
/// As [`wait_with_output`].
#[track_caller]
pub fn wait_with_output_within(mut child: Child, what: &str, bound: Duration) -> Output {
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let Some(status) = wait_until(&mut child, Instant::now() + bound) else {
        // A process the child left may still hold the pipes open: the readers are not waited
        // for.
        panic!(
            "{what} (pid {}) was still running after {} s: killed",
            child.id(),
            bound.as_secs()
        );
    };
    Output {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
    }
}

fn reader(pipe: Option<impl std::io::Read + Send + 'static>) -> Option<JoinHandle<Vec<u8>>> {
    pipe.map(|mut pipe| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    })
}

fn collect(reader: Option<JoinHandle<Vec<u8>>>) -> Vec<u8> {
    reader.map_or_else(Vec::new, |handle| handle.join().unwrap_or_default())
}

/// Bounded forms of [`Command::output`] and [`Command::status`].
pub trait Bounded {
    /// Runs the command to its end with its output captured and standard input closed, as
    /// [`Command::output`] does, up to [`WATCHDOG`].
    ///
    /// # Panics
    /// When it cannot start, or is still running after [`WATCHDOG`] (killed).
    fn output_bounded(&mut self) -> Output {
        self.output_within(WATCHDOG)
    }

    /// As [`Bounded::output_bounded`], with a bound of the caller's (a build that may take
    /// longer than [`WATCHDOG`] on a cold machine).
    ///
    /// # Panics
    /// When it cannot start, or is still running after `bound` (killed).
    fn output_within(&mut self, bound: Duration) -> Output;

    /// Runs the command to its end with the standard streams inherited, as
    /// [`Command::status`] does, up to [`WATCHDOG`].
    ///
    /// # Panics
    /// As [`Bounded::output_bounded`].
    fn status_bounded(&mut self) -> ExitStatus;
}

impl Bounded for Command {
    #[track_caller]
    fn output_within(&mut self, bound: Duration) -> Output {
        let child = self
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {self:?}: {error}"));
        wait_with_output_within(child, &format!("{self:?}"), bound)
    }

    #[track_caller]
    fn status_bounded(&mut self) -> ExitStatus {
        let mut child = self
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {self:?}: {error}"));
        wait(&mut child, &format!("{self:?}"))
    }
}

/// `program`, run through coreutils' `env --default-signal=…` so that SIGINT, SIGQUIT, SIGHUP
/// and SIGTERM have their default disposition in it even when the test run ignores them (a
/// background job's SIGINT and SIGQUIT): a test that signals the child sees it act on the
/// signal. `env` execs the program, so the child's pid is the program's.
#[must_use]
pub fn with_default_signals(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new("env");
    command
        .arg("--default-signal=INT,QUIT,HUP,TERM")
        .arg("--")
        .arg(program);
    command
}
