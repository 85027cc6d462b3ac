//! [`BashGrader`]: runs a shell command and scores it by its exit code, stopping everything the
//! command started and keeping its output within a budget. Needs grader-core's `bash` feature
//! (off by default: it brings tokio's process and I/O support and rustix).

mod capture;
mod group;
mod per_process;
pub mod secrets;
mod spawn;
mod start;
mod sweep;
mod watch;

use std::borrow::Cow;
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::process::ExitStatus;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use crate::error::{Failure, GraderError};
use crate::grader::Grader;
use crate::grading::Grading;
use crate::limit::Resource;
use crate::sandbox::{Limits, Sandbox};
use crate::score::{Info, Score, SubScore};

use capture::Capture;
use group::BASH;
use secrets::Inherit;
use spawn::{Launch, Started};

/// How long output is still read after the command's group is stopped, for a process that
/// left the group and keeps the pipes open.
const DRAIN_WAIT: Duration = Duration::from_millis(100);

/// How long a command may run unless [`BashGrader::timeout`] says otherwise: 600 s, as the
/// reference's current default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// How many bytes of each of stdout and stderr are kept unless [`BashGrader::output_limit`]
/// says otherwise: 4 MiB.
pub const DEFAULT_OUTPUT_LIMIT: usize = 4 * 1024 * 1024;
/// How long the command's processes get between SIGTERM and SIGKILL unless
/// [`BashGrader::kill_grace`] says otherwise: 1 s, as the reference.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(1);

/// Runs `/bin/bash -lc COMMAND` and scores 1.0 when it exits with code 0, else 0.0: the
/// reference's `BashGrader`.
///
/// ```
/// use std::time::Duration;
/// use grader_core::BashGrader;
///
/// let sub = BashGrader::new("echo hello; exit 3")
///     .timeout(Duration::from_secs(30))
///     .grade_blocking(1.0)?;
/// let info = sub.info().unwrap();
/// assert_eq!(sub.value(), 0.0);
/// assert_eq!(info["exit_code"], 3);
/// assert_eq!(info["stdout"], "hello\n");
/// # Ok::<(), grader_core::GraderError>(())
/// ```
///
/// In async code it is graded like every [`Grader`], alone or beside others in a
/// [`Gather`](crate::Gather):
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use grader_core::{BashGrader, Gather, Grader};
///
/// let result = Gather::new()
///     .add(BashGrader::new("test 2 -gt 1").grade(0.5))
///     .add(BashGrader::new("grep -q needle").env("LC_ALL", "C").grade(0.5))
///     .await?;
/// assert_eq!(result.reward(), 0.5); // `grep` read an empty stdin and found nothing
/// # Ok::<(), grader_core::GatherError>(())
/// # }).unwrap();
/// ```
///
/// # What it records
///
/// `info` holds `exit_code` (`-N` when a signal N ended bash, as Python reports it), `stdout`
/// and `stderr` (decoded as UTF-8, invalid bytes as U+FFFD). On a timeout the score is 0.0 and
/// `info` holds `exit_code: null`, `timed_out: true`, `timeout` (in seconds) and the output
/// captured until then. `_parameters` records `command`, `cwd` (when set), `timeout_seconds`
/// and `env`: the *names* of the extra environment variables, never their values. When
/// inherited variables were withheld as credentials, `info.env_withheld` lists their names.
///
/// # Where it differs from the reference
///
/// - **Nothing is left running**, even what left the process group, even when the grading
///   process dies. When bash exits or the time is up, everything the command started gets
///   SIGTERM, then SIGKILL after [`kill_grace`](Self::kill_grace) (as the reference), and the
///   call returns once none of it is alive, even when a grandchild held the pipes open.
///   Dropping the grading future (a cancelled [`Gather`](crate::Gather), a `select!`) kills it
///   all at once and reaps bash. See [How nothing is left running](#how-nothing-is-left-running).
/// - **Bounded output.** Each stream keeps at most [`output_limit`](Self::output_limit) bytes
///   (the first half and the last half of the budget); the text then carries a marker line
///   `[... N bytes dropped ...]` between the two and `info` records
///   `stdout_dropped_bytes` / `stderr_dropped_bytes`. The reference keeps everything in memory;
///   here a command printing 1 GB costs about twice the budget (the bytes, then the text), and
///   the text too stays within the budget (invalid bytes, each shown as a 3-byte U+FFFD, are
///   cut further and counted as dropped).
/// - **A clean start.** Stdin is `/dev/null`, so a command that reads input sees end of file
///   instead of waiting for the timeout. Signals that this process ignores (`nohup` ignores
///   SIGHUP) are reset to their defaults in the command through `env --default-signal` (GNU
///   coreutils 8.31 or later; on Linux, where `/proc` shows which signals are ignored). The
///   reference lets the command inherit both.
/// - **Credentials stay with the grader.** The command, which runs the agent's code, does not
///   inherit this process's variables that look like credentials (`OPENAI_API_KEY`,
///   `HUD_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, the SSH agent: the rule is in
///   [`secrets`]); `info.env_withheld` names (never shows) the ones withheld. A variable set
///   with [`env`](Self::env) is always set; [`pass_env`](Self::pass_env) lets one through,
///   [`env_clear`](Self::env_clear) inherits nothing, and
///   [`inherit_secrets(true)`](Self::inherit_secrets) everything, as the reference does.
///   **Unsandboxed, that keeps them out of the command's environment only**: the command runs
///   as this process's user and can read this process's environment through
///   `/proc/<pid>/environ` (as root, any process's). In the [`sandbox`](Self::sandbox) it
///   cannot: that is the way to keep them.
/// - **Bounded, and sandboxed on request.** The command may use 4 GiB of memory, 4 096
///   processes, 8 GiB files and 4 096 open files unless told otherwise
///   ([`limits`](Self::limits)); a limit hit anywhere in its process tree scores 0.0 with
///   `info.limit_exceeded` naming it. [`sandbox`](Self::sandbox) runs it under bubblewrap, as
///   an unprivileged user where this process is root. The reference bounds only time.
/// - **A bad `cwd` is an error** ([`Failure::WorkingDirectory`] naming the path: missing, not
///   a directory, or not enterable), not a 0.0: the grader could not run, the agent did not
///   fail. So is an environment variable that cannot be set as given (an empty name, `=` or
///   NUL in the name, NUL in the value: [`Failure::Environment`]), and a tokio runtime
///   without its IO driver or its timer ([`Failure::Runtime`], before anything starts; tokio
///   offers no way to ask, so the check catches tokio's own panic, whose message the panic
///   hook still prints, and under `panic = "abort"` it aborts as tokio would have). A
///   missing `/bin/bash` still scores 0.0 with stderr `/bin/bash not found`, as the reference.
/// - **The clock starts with the command**, not when the grade was created, so a grade
///   waiting for its turn in a [`Gather::limit`](crate::Gather::limit) does not use up its
///   timeout. A zero timeout times out at once.
///
/// # Trusting the agent's home directory
///
/// By default the command runs as `bash -lc`, as the reference: bash first runs
/// `/etc/profile` and the first of `~/.bash_profile`, `~/.bash_login`, `~/.profile` it finds.
/// **An agent that can write to the home directory can make every such check pass**: a
/// profile that says `exit 0` ends bash with code 0 before the command runs, and one that
/// defines a shell function named `pytest` (or an alias) replaces the tool being checked.
/// With [`login_shell(false)`](Self::login_shell) the command runs as
/// `bash --noprofile --norc -c` with `BASH_ENV` and `ENV` removed, so no startup file runs.
/// Pointing `HOME` at a directory the grader controls (`.env("HOME", dir)`) also keeps tools
/// from reading the agent's `~/.config`. What remains is what the command itself looks up:
/// `PATH` (an agent that can write to a directory on it can shadow `pytest`) and the files
/// the tools read.
///
/// ```
/// use grader_core::BashGrader;
///
/// let home = std::env::temp_dir().join(format!("doc-hijacked-home-{}", std::process::id()));
/// std::fs::create_dir_all(&home)?;
/// std::fs::write(home.join(".bash_profile"), "exit 0\n")?;
///
/// let trusting = BashGrader::new("false").env("HOME", &home).grade_blocking(1.0)?;
/// assert_eq!(trusting.value(), 1.0); // the profile's `exit 0` passed the check
/// let hardened = BashGrader::new("false")
///     .env("HOME", &home)
///     .login_shell(false)
///     .grade_blocking(1.0)?;
/// assert_eq!(hardened.value(), 0.0);
/// # std::fs::remove_dir_all(&home)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # How nothing is left running
///
/// On Linux (the rest of Unix has the process group only):
///
/// - **Tagged processes.** The command's environment carries a tag, `GRADER_BASH_<token>=<n>`,
///   unique to this process and to the command, which every process it starts inherits.
///   `setsid`, `setsid -f`, `set -m` job control, a double fork or `setpgid` leave the process
///   group but keep the tag. The command also leads a process group of its own, which is
///   signalled as a whole too.
/// - **One sweeper for all graders.** When a grade ends with something left, a single thread
///   per process (not one per grader, and never an executor thread) reads
///   `/proc/<pid>/environ` once per round for all the grades waiting, signals the processes
///   of their tags through pidfds (so a reused pid is never hit), and answers each grade when
///   none of its processes is alive. It reads only the pids handed out since the oldest
///   waiting command started, as long as the kernel's counters (`/proc/stat`,
///   `/proc/loadavg`) show that the pid counter cannot have come round since (otherwise every
///   process), and of those only the environments of processes whose parents (from
///   `/proc/<pid>/stat`) show they can descend from a command being stopped (not from the
///   bash of another command still running, whose descendants carry that command's tag):
///   reading another process's environment waits for its memory map lock, which a busy
///   compiler or a process in the middle of `exec` can hold for milliseconds. What a round
///   learns of a process (its tag, or that it descends from another command) is kept for
///   later rounds while the counters show no pid can have been handed out twice, so each
///   process is read about once. A round takes at most half a core (it rests for as long as
///   the processor time it used). A grade is answered once a round finds
///   nothing of its tag and no new pid was handed out while it looked (a process that forked
///   and exited during the round left its child among those), or, on a machine that starts
///   processes all the time, once rounds have found nothing of it for 200 ms. Zombies do not
///   count: bash's orphans are reaped by init, and under an init that does not reap (some
///   containers) they stay as zombies, which run nothing and hold no pipe.
/// - **Started off the executor.** Starting a process takes the calling thread milliseconds
///   (more when the commands already started compete for the cores), so commands start on 4
///   threads shared by the whole process (not tokio's blocking pool, which a grade awaited
///   from its last free thread would wait for), with the checks of the working directory and
///   the shell: 600 commands in one [`Gather`](crate::Gather) do not hold up the timers of
///   those already running, and each is stopped at its own timeout.
/// - **The common case costs a few reads.** When bash exits by itself, its process group is
///   empty and few pids were handed out since it started, the grade checks those pids itself
///   and does not involve the sweeper.
/// - **A watcher for when this process dies.** The first grade starts one `bash` watcher for
///   the whole process, in a process group of its own and ignoring SIGINT, SIGQUIT, SIGHUP and
///   SIGTERM. It waits on a pipe whose other end only this process holds; when this process
///   ends in any way (SIGKILL, SIGTERM, a Ctrl-C in a terminal, `std::process::exit`, a panic
///   that aborts), the pipe closes and the watcher sends SIGTERM to every process carrying
///   this process's tag, SIGKILL to what is left half a second later, and exits. It runs no
///   command while this process lives and exits with it.
///
/// - **The cgroup, where there is one.** With [limits](Self::limits) enforced by a cgroup (the
///   default, where the machine offers one), every process of the command is in the command's
///   own group, which no process can leave: once the sweeper is done, whatever is still in it
///   is killed before the grade returns, and if this process dies, the watcher kills whatever
///   is left in its groups, whatever its environment.
///
/// **What still escapes** (without a cgroup): a process that clears or rewrites its environment (`env -i`,
/// `exec -c`) once it has also left the process group; one whose environment this user cannot
/// read (a setuid program); a process started by another service on the command's behalf
/// (`systemd-run`, `at`, a daemon reached through a socket); and, if this process dies, the
/// watcher itself being killed first (`kill -9` of it, or of every process of the user at
/// once), or a copy of this process made by `fork` without `exec` that keeps the pipe open.
/// A child subreaper was not chosen: it changes this process for every other child it has
/// (their orphans would become its zombies), and it needs `/proc/<pid>/task/*/children`,
/// which many kernels lack, to find what to stop.
#[derive(Clone)]
#[must_use = "a BashGrader does nothing until it is graded"]
pub struct BashGrader {
    command: String,
    cwd: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    timeout: Duration,
    output_limit: usize,
    kill_grace: Duration,
    login_shell: bool,
    inherit: Inherit,
    passed: Vec<OsString>,
    limits: Limits,
    sandbox: Option<Sandbox>,
    launcher: Vec<OsString>,
}

impl fmt::Debug for BashGrader {
    /// Leaves out the values of the extra environment variables, which may be secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: Vec<_> = self.env.iter().map(|(key, _)| key).collect();
        f.debug_struct("BashGrader")
            .field("command", &self.command)
            .field("cwd", &self.cwd)
            .field("env", &env)
            .field("timeout", &self.timeout)
            .field("output_limit", &self.output_limit)
            .field("kill_grace", &self.kill_grace)
            .field("login_shell", &self.login_shell)
            .field("inherit", &self.inherit)
            .field("passed", &self.passed)
            .field("limits", &self.limits)
            .field("sandbox", &self.sandbox)
            .field("launcher", &self.launcher)
            .finish()
    }
}

impl BashGrader {
    /// A grader running `command` with `/bin/bash -lc`, in this process's working directory and
    /// environment, with the [default timeout](DEFAULT_TIMEOUT).
    pub fn new(command: impl Into<String>) -> Self {
        BashGrader {
            command: command.into(),
            cwd: None,
            env: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            output_limit: DEFAULT_OUTPUT_LIMIT,
            kill_grace: DEFAULT_KILL_GRACE,
            login_shell: true,
            inherit: Inherit::AllButSecrets,
            passed: Vec::new(),
            limits: Limits::default(),
            sandbox: None,
            launcher: Vec::new(),
        }
    }

    /// Runs the command in `dir`. A directory that does not exist (or is not a directory)
    /// makes the grade fail with [`Failure::WorkingDirectory`].
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets an environment variable for the command, on top of this process's environment.
    /// Only its name is recorded in `_parameters`.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// How long the command may run, from the moment it starts. Zero times out at once.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many bytes of each of stdout and stderr to keep: the first half of the budget from
    /// the start of the stream and the second half from its end. The rest is counted, not
    /// kept. [`DEFAULT_OUTPUT_LIMIT`] unless set.
    pub fn output_limit(mut self, bytes_per_stream: usize) -> Self {
        self.output_limit = bytes_per_stream;
        self
    }

    /// How long the command's processes get to exit after SIGTERM before SIGKILL, when they
    /// are stopped at a timeout or after bash exits. [`DEFAULT_KILL_GRACE`] unless set.
    pub fn kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// Whether the command runs in a login shell, `bash -lc` (the default, as the reference),
    /// which first runs `/etc/profile` and the first of `~/.bash_profile`, `~/.bash_login` and
    /// `~/.profile`. With `false` it runs as `bash --noprofile --norc -c`, with `BASH_ENV` and
    /// `ENV` removed from its environment: no startup file runs. Use `false` whenever the agent
    /// being graded could write to the home directory; see [hardened
    /// mode](BashGrader#trusting-the-agents-home-directory). Recorded in `_parameters` as
    /// `login_shell: false` when set.
    ///
    /// A login shell also costs time on every command, as much as the profile takes: on a
    /// development machine whose profile runs `pyenv init`, `bash -lc true` took 115 ms where
    /// `bash --noprofile --norc -c true` took 1.5 ms (50 runs of each, one after the other,
    /// on an idle 2-core machine), which on a loaded machine adds up towards a command's
    /// timeout. `false` saves it.
    pub fn login_shell(mut self, login: bool) -> Self {
        self.login_shell = login;
        self
    }

    /// The command inherits none of this process's environment: only the variables set with
    /// [`env`](Self::env) (and what bash sets itself: a default `PATH` search, `PWD`, `SHLVL`).
    /// Recorded in `_parameters` as `inherit_env: "nothing"`.
    pub fn env_clear(mut self) -> Self {
        self.inherit = Inherit::Nothing;
        self
    }

    /// Lets the inherited variable `name` through although its name looks like a credential
    /// (see [`secrets`]): for a command that needs it, `AWS_PROFILE`'s keys say. Recorded in
    /// `_parameters` under `pass_env` (the names only).
    pub fn pass_env(mut self, name: impl Into<OsString>) -> Self {
        self.passed.push(name.into());
        self
    }

    /// With `true` the command inherits every variable of this process, credentials
    /// included, as the reference's does; by default those that look like credentials are
    /// withheld (see [`secrets`]). Recorded in `_parameters` as `inherit_env: "everything"`.
    pub fn inherit_secrets(mut self, inherit: bool) -> Self {
        self.inherit = if inherit {
            Inherit::Everything
        } else {
            Inherit::AllButSecrets
        };
        self
    }

    /// What the command may use: memory, processes, CPU time, written file size, open files
    /// ([`Limits::default`] unless set: 4 GiB of memory, 4 096 processes, 8 GiB files, 4 096
    /// open files, no CPU-time limit; [`Limits::none`] for none). Enforced by a cgroup made for
    /// the command where the machine offers one (v1 or v2), by rlimits otherwise; `info.limits`
    /// says which enforced each, and `info.peak_memory_bytes` how much memory the command used
    /// at most (with a cgroup). A command that exceeds a limit scores 0.0 whatever its exit
    /// code, with `info.limit_exceeded` naming the limit (`memory limit 512 MiB exceeded`):
    /// the grading process and the other gradings go on. Limits that differ from the defaults
    /// are recorded in `_parameters.limits`. See [`Limits`] for what each limit counts.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Runs the command in a bubblewrap [`Sandbox`]: a read-only system, its working directory
    /// (the [`cwd`](Self::cwd), else this process's) read-write, a private `/tmp`, its own PID
    /// namespace, no network unless the sandbox allows it. `info.sandbox` says `bwrap`, or,
    /// where bwrap cannot sandbox and the sandbox was made
    /// [`or_unsandboxed`](Sandbox::or_unsandboxed), `none: ` and why; otherwise the grade fails
    /// with [`Failure::Sandbox`]. Inside the sandbox a process ended by signal N shows as exit
    /// code 128 + N (bwrap reports it so). Recorded in `_parameters.sandbox`.
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// Starts the shell through a launcher: `PROGRAM ARGS… /bin/bash -c COMMAND` (inside the
    /// sandbox, when there is one), for a program that runs its arguments somewhere else, such
    /// as `nsenter` joining a workspace's namespaces (what
    /// `grader_env::workspace::Workspace::bash` gives). The launcher inherits the command's
    /// environment, limits and tag, so everything it starts is bounded and stopped as the
    /// command's own processes are, and (with limits or a sandbox) none of this process's
    /// descriptors; with a [`sandbox`](Self::sandbox), where this process is root, it runs as
    /// the sandbox's host user already. Recorded in `_parameters.launcher` as the program's
    /// file name only (its arguments may name a process).
    pub fn launcher<I, S>(mut self, program_and_arguments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.launcher = program_and_arguments.into_iter().map(Into::into).collect();
        self
    }

    /// The grading of this command at `weight`: [`Grader::grade`], callable without importing
    /// the trait.
    pub fn grade<'a>(self, weight: f64) -> Grading<'a, Self> {
        Grading::new(self, weight)
    }

    /// Grades from synchronous code: runs the command on a runtime of its own and returns the
    /// subscore, as [`grade`](Grader::grade) does.
    ///
    /// Call it outside any tokio runtime; inside one, await [`grade`](Grader::grade) instead
    /// (from a `spawn_blocking` closure, use `Handle::block_on` on the grade).
    ///
    /// # Errors
    /// As [`grade`](Grader::grade), and [`Failure::InsideRuntime`] when called from within a
    /// tokio runtime (blocking there could stall the runtime's other tasks).
    pub fn grade_blocking(self, weight: f64) -> Result<SubScore, GraderError> {
        let fail = |failure| GraderError {
            grader: self.name().into_owned(),
            weight,
            parameters: Box::new(self.parameters()),
            failure,
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(fail(Failure::InsideRuntime));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|source| {
                fail(Failure::Io {
                    context: "starting a runtime to run the command".to_owned(),
                    source,
                })
            })?;
        runtime.block_on(self.grade(weight))
    }

    /// What the command is started with.
    fn launch(&self) -> Launch<'_> {
        Launch {
            command: &self.command,
            cwd: self.cwd.as_deref(),
            env: &self.env,
            login_shell: self.login_shell,
            inherit: self.inherit,
            limits: &self.limits,
            sandbox: self.sandbox.as_ref(),
            launcher: &self.launcher,
            timeout: self.timeout,
        }
    }

    /// Starts the command on a [starter thread](start), with the checks that touch the
    /// filesystem before it. If the grading is dropped while the command starts, the guard,
    /// dropped on the starter thread, stops it.
    async fn start_off_executor(
        self,
        shell: &Path,
        withheld: Vec<OsString>,
    ) -> Result<(Self, Option<Started>), Failure> {
        let shell = shell.to_owned();
        let job = move || {
            let started = self.launch().start(&shell, &withheld);
            started.map(|started| (self, started))
        };
        match start::run(job).await {
            Ok(Ok(started)) => started,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(source) => Err(Failure::Io {
                context: "handing the command to the threads that start commands".to_owned(),
                source,
            }),
        }
    }

    /// Runs the command with `shell` (`/bin/bash` but in tests) and scores it.
    async fn run(self, shell: &Path) -> Result<Score, Failure> {
        start::check_runtime()?;
        spawn::check_env(&self.env)?;
        let set: Vec<OsString> = self.env.iter().map(|(name, _)| name.clone()).collect();
        let withheld = secrets::withheld(self.inherit, &self.passed, &set);
        let (this, started) = self.start_off_executor(shell, withheld.clone()).await?;
        let Some(Started {
            mut guard,
            at: started,
            limits,
            sandbox,
            host_uid,
            writes,
        }) = started
        else {
            return Ok(shell_not_found(shell));
        };
        let stdout = guard.child.stdout.take();
        let stderr = guard.child.stderr.take();
        let mut out = Capture::new(this.output_limit);
        let mut err = Capture::new(this.output_limit);

        let exit = {
            let mut pumps = pin!(async {
                tokio::join!(out.fill(stdout), err.fill(stderr));
            });
            let mut drained = false;
            // Resolves when the command's processes have used their CPU time together.
            let mut cpu_spent = pin!(limits.cpu_spent());
            let mut cpu_killed = false;

            // Until bash exits or the time is up, reading both pipes all along.
            let deadline = started.checked_add(this.timeout);
            let exit = if this.timeout.is_zero() {
                None
            } else {
                loop {
                    tokio::select! {
                        biased;
                        status = guard.child.wait() => break Some(status.map_err(wait_failure)?),
                        () = sleep_until(deadline) => break None,
                        () = &mut cpu_spent, if !cpu_killed => {
                            // Past the limit: every process of the command, now. Bash, killed
                            // too, ends the wait above.
                            cpu_killed = true;
                            limits.kill_now();
                        }
                        () = &mut pumps, if !drained => drained = true,
                    }
                }
            };

            // Stop whatever the command started, in the group or out of it: SIGTERM, then
            // SIGKILL after the grace. The sweeper answers once none of it is alive.
            let mut reaped = exit.is_some();
            // Bash exited and left nothing: usually told from a few files, without the sweeper.
            let mut stopped = reaped && sweep::nothing_left(guard.tag, guard.group, guard.window);
            let mut stopping = pin!(sweep::stop(
                guard.tag,
                guard.group,
                guard.window,
                this.kill_grace
            ));
            while !(stopped && reaped) {
                tokio::select! {
                    biased;
                    _ = guard.child.wait(), if !reaped => reaped = true,
                    () = &mut stopping, if !stopped => {
                        stopped = true;
                        if !reaped {
                            // Only if the sweeper could not run: bash is tagged too.
                            let _ = guard.child.start_kill();
                        }
                    }
                    () = &mut pumps, if !drained => drained = true,
                }
            }
            guard.disarm();

            // Everything buffered in the pipes, unless a process out of reach keeps them open.
            if !drained {
                let _ = tokio::time::timeout(DRAIN_WAIT, &mut pumps).await;
            }
            exit
        };

        let (stdout, stdout_dropped) = out.finish();
        let (stderr, stderr_dropped) = err.finish();
        let code = exit.map(exit_code);
        // A file the command cut at the file-size limit, looked for off the executor.
        let cut = match limits.file_scan(writes) {
            Some(scan) => matches!(start::run(move || scan.run()).await, Ok(Ok(true))),
            None => false,
        };
        let limits = limits.finish(code, cut);
        let mut info = Info::new();
        info.insert("exit_code".into(), code.map_or(Value::Null, Value::from));
        info.insert("stdout".into(), stdout.into());
        info.insert("stderr".into(), stderr.into());
        if code.is_none() {
            info.insert("timed_out".into(), true.into());
            info.insert("timeout".into(), seconds(this.timeout));
        }
        let value = if code == Some(0) && limits.exceeded.is_none() {
            1.0
        } else {
            0.0
        };
        if let Some(exceeded) = limits.exceeded {
            info.insert("limit_exceeded".into(), exceeded.into());
        }
        if stdout_dropped > 0 {
            info.insert("stdout_dropped_bytes".into(), stdout_dropped.into());
        }
        if stderr_dropped > 0 {
            info.insert("stderr_dropped_bytes".into(), stderr_dropped.into());
        }
        if !withheld.is_empty() {
            // The names, never the values.
            let names = withheld
                .iter()
                .map(|name| Value::String(name.to_string_lossy().into_owned()));
            info.insert("env_withheld".into(), Value::Array(names.collect()));
        }
        if !limits.by.is_empty() {
            info.insert("limits".into(), Value::Object(limits.by));
        }
        if let Some(peak) = limits.peak_memory {
            info.insert("peak_memory_bytes".into(), peak.into());
        }
        if let Some(sandbox) = sandbox {
            info.insert("sandbox".into(), sandbox.into());
        }
        if let Some(uid) = host_uid {
            info.insert("sandbox_host_uid".into(), uid.into());
        }
        Ok(Score::new(value).with_info(info))
    }
}

impl Grader for BashGrader {
    fn name(&self) -> Cow<'_, str> {
        "BashGrader".into()
    }

    fn parameters(&self) -> Info {
        let mut params = Info::new();
        params.insert("command".into(), self.command.clone().into());
        if let Some(dir) = &self.cwd {
            params.insert("cwd".into(), dir.to_string_lossy().into_owned().into());
        }
        params.insert("timeout_seconds".into(), seconds(self.timeout));
        if !self.login_shell {
            params.insert("login_shell".into(), false.into());
        }
        if !self.env.is_empty() {
            let names = self
                .env
                .iter()
                .map(|(key, _)| Value::String(key.to_string_lossy().into_owned()));
            params.insert("env".into(), Value::Array(names.collect()));
        }
        match self.inherit {
            Inherit::AllButSecrets => {}
            Inherit::Everything => {
                params.insert("inherit_env".into(), "everything".into());
            }
            Inherit::Nothing => {
                params.insert("inherit_env".into(), "nothing".into());
            }
        }
        if !self.passed.is_empty() {
            let names = self
                .passed
                .iter()
                .map(|name| Value::String(name.to_string_lossy().into_owned()));
            params.insert("pass_env".into(), Value::Array(names.collect()));
        }
        let limits = self.limits.changes();
        if !limits.is_empty() {
            params.insert("limits".into(), Value::Object(limits));
        }
        if let Some(program) = self.launcher.first() {
            let name = Path::new(program)
                .file_name()
                .unwrap_or(program.as_os_str())
                .to_string_lossy()
                .into_owned();
            params.insert("launcher".into(), name.into());
        }
        if let Some(sandbox) = &self.sandbox {
            params.insert("sandbox".into(), Value::Object(sandbox.recorded()));
        }
        params
    }

    /// A command takes a [`Resource::Commands`] slot of the shared limiter while it runs.
    fn resource(&self) -> Option<Resource> {
        Some(Resource::Commands)
    }

    async fn score(self) -> Result<Score, Failure> {
        self.run(Path::new(BASH)).await
    }
}

/// The score when there is no shell: 0.0 with the reference's message.
fn shell_not_found(shell: &Path) -> Score {
    let mut info = Info::new();
    info.insert("exit_code".into(), Value::Null);
    info.insert("stdout".into(), "".into());
    info.insert(
        "stderr".into(),
        format!("{} not found", shell.display()).into(),
    );
    info.insert("timed_out".into(), false.into());
    Score::new(0.0).with_info(info)
}

fn wait_failure(source: io::Error) -> Failure {
    Failure::Io {
        context: "waiting for the command to exit".to_owned(),
        source,
    }
}

/// Sleeps until `deadline`, or forever when there is none (a timeout too large to add).
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// The exit code as Python reports it: `-N` for a process ended by signal N.
fn exit_code(status: ExitStatus) -> i64 {
    match (status.code(), status.signal()) {
        (Some(code), _) => i64::from(code),
        (None, Some(signal)) => -i64::from(signal),
        (None, None) => 1,
    }
}

/// A duration in seconds: an integer when it is whole, as the reference's default is written.
fn seconds(duration: Duration) -> Value {
    if duration.subsec_nanos() == 0 {
        duration.as_secs().into()
    } else {
        duration.as_secs_f64().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_shell_scores_zero_with_the_references_message() {
        let score = BashGrader::new("true")
            .run(Path::new("/nonexistent/bin/bash"))
            .await
            .expect("a missing shell is a score, not an error");
        assert_eq!(score.value, 0.0);
        let info = score.info.expect("info");
        assert_eq!(info["stderr"], "/nonexistent/bin/bash not found");
        assert_eq!(info["exit_code"], Value::Null);
        assert_eq!(info["timed_out"], false);
    }

    #[test]
    fn seconds_are_integers_when_whole() {
        assert_eq!(seconds(Duration::from_secs(600)), serde_json::json!(600));
        assert_eq!(seconds(Duration::from_millis(1500)), serde_json::json!(1.5));
    }

    #[test]
    fn debug_leaves_out_environment_values() {
        let grader = BashGrader::new("true").env("TOKEN", "s3cret");
        let shown = format!("{grader:?}");
        assert!(
            shown.contains("TOKEN") && !shown.contains("s3cret"),
            "{shown}"
        );
    }
}
