//! Starting the command: the checks that touch the filesystem, the command line (the shell,
//! `env --default-signal` where signals need resetting, bwrap where sandboxed), the limits'
//! cgroup and hook, and the spawn itself, run on a [starter thread](super::start).

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::time::Instant;

use std::time::Duration;

use crate::error::Failure;
use crate::sandbox::{Applied, Limits, Sandbox};

use super::group::{self, BASH, CommandGuard, ENV};
use super::secrets::Inherit;
use super::sweep::{self, Tag};
use super::watch;

/// A command that started: its guard, when it started, its limits, and how it was sandboxed
/// (for `info.sandbox`). `None` in its place means there was no shell to run it with.
pub(super) struct Started {
    pub(super) guard: CommandGuard,
    pub(super) at: Instant,
    pub(super) limits: Applied,
    pub(super) sandbox: Option<String>,
}

/// What a command is started with: the grader's settings, borrowed.
pub(super) struct Launch<'a> {
    pub(super) command: &'a str,
    pub(super) cwd: Option<&'a Path>,
    pub(super) env: &'a [(OsString, OsString)],
    pub(super) login_shell: bool,
    pub(super) inherit: Inherit,
    pub(super) limits: &'a Limits,
    pub(super) sandbox: Option<&'a Sandbox>,
    pub(super) launcher: &'a [OsString],
    pub(super) timeout: Duration,
}

impl Launch<'_> {
    /// Checks the working directory, the shell and the sandbox, then starts the command: the
    /// part of a grade that blocks.
    pub(super) fn start(
        &self,
        shell: &Path,
        withheld: &[OsString],
    ) -> Result<Option<Started>, Failure> {
        if let Some(dir) = self.cwd {
            check_directory(dir)?;
        }
        if !shell.exists() {
            return Ok(None);
        }
        let sandbox = self.sandbox.map(sandboxing).transpose()?;
        sweep::start().map_err(|source| Failure::Io {
            context: "starting the thread that stops commands' processes".to_owned(),
            source,
        })?;
        watch::ensure(BASH).map_err(|source| Failure::Io {
            context: "starting the watcher that stops commands if this process ends".to_owned(),
            source,
        })?;

        let mut program: Vec<OsString> = Vec::new();
        if group::inherits_ignored_signals() && group::env_resets_signals() {
            program.extend([ENV.into(), "--default-signal".into()]);
        }
        program.extend(self.launcher.iter().cloned());
        let sandbox_label = match sandbox {
            Some(Sandboxing::Bwrap(bwrap, sandbox)) => {
                let cwd = match self.cwd {
                    Some(dir) => dir.to_owned(),
                    None => std::env::current_dir().map_err(|source| Failure::Io {
                        context: "finding the working directory to sandbox".to_owned(),
                        source,
                    })?,
                };
                program.extend(sandbox.arguments(bwrap, &cwd));
                Some("bwrap".to_owned())
            }
            Some(Sandboxing::Without(why)) => Some(format!("none: {why}")),
            None => None,
        };
        program.push(shell.into());
        let mut command = tokio::process::Command::new(&program[0]);
        command.args(&program[1..]);
        if self.login_shell {
            command.arg("-lc");
        } else {
            command
                .args(["--noprofile", "--norc", "-c"])
                .env_remove("BASH_ENV")
                .env_remove("ENV");
        }
        if self.inherit == Inherit::Nothing {
            command.env_clear();
        }
        for name in withheld {
            command.env_remove(name);
        }
        let tag = Tag::next();
        command
            .arg(self.command)
            .env(tag.name, tag.value())
            .envs(self.env.iter().map(|(key, value)| (key, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(dir) = self.cwd {
            command.current_dir(dir);
        }
        let mut limits = self.limits.prepare().map_err(|source| Failure::Io {
            context: "opening the command's cgroup".to_owned(),
            source,
        })?;
        limits.take_hook().install(&mut command);
        tracing::debug!(command = %self.command, cwd = ?self.cwd, timeout = ?self.timeout, "running grader command");

        let before = sweep::Counters::read();
        let at = Instant::now();
        match command.spawn() {
            Ok(child) => Ok(Some(Started {
                guard: CommandGuard::new(child, tag.id, before),
                at,
                limits,
                sandbox: sandbox_label,
            })),
            Err(error) => {
                // tokio starts the process before it registers its pipes and its pidfd with
                // the runtime, and leaves the process running when that fails (the runtime is
                // shutting down): stop whatever carries the tag.
                sweep::kill_now(tag.id, None, before.map(sweep::Window::after));
                if !shell.exists() {
                    return Ok(None);
                }
                if let Some(dir) = self.cwd {
                    // It was fine when checked; it is gone or closed now.
                    check_directory(dir)?;
                }
                Err(spawn_failure(&program[0], error))
            }
        }
    }
}

/// Fails on an environment variable that cannot be set as given.
pub(super) fn check_env(env: &[(OsString, OsString)]) -> Result<(), Failure> {
    for (name, value) in env {
        let bytes = name.as_bytes();
        let reason = if bytes.is_empty() {
            "has an empty name"
        } else if bytes.contains(&b'=') {
            "has `=` in its name"
        } else if bytes.contains(&0) {
            "has a NUL byte in its name"
        } else if value.as_bytes().contains(&0) {
            "has a NUL byte in its value"
        } else {
            continue;
        };
        return Err(Failure::Environment {
            name: name.to_string_lossy().into_owned(),
            reason: reason.to_owned(),
        });
    }
    Ok(())
}

/// How a command with a sandbox runs: in bwrap, or (the user chose it) without, and why.
enum Sandboxing<'a> {
    Bwrap(&'static Path, &'a Sandbox),
    Without(&'static str),
}

/// bwrap for `sandbox`, the fallback the user chose, or the failure.
fn sandboxing(sandbox: &Sandbox) -> Result<Sandboxing<'_>, Failure> {
    match Sandbox::check() {
        Ok(bwrap) => Ok(Sandboxing::Bwrap(bwrap, sandbox)),
        Err(why) if sandbox.falls_back() => {
            tracing::warn!(%why, "running a command unsandboxed, as its grader allows");
            Ok(Sandboxing::Without(why))
        }
        Err(why) => Err(Failure::Sandbox(why.to_owned())),
    }
}

/// Fails unless `dir` is an existing directory this process may enter.
fn check_directory(dir: &Path) -> Result<(), Failure> {
    let reason = match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => match rustix::fs::access(dir, rustix::fs::Access::EXEC_OK) {
            Ok(()) => return Ok(()),
            Err(error) => format!("cannot be entered: {}", io::Error::from(error)),
        },
        Ok(_) => "is not a directory".to_owned(),
        Err(error) if error.kind() == io::ErrorKind::NotFound => "does not exist".to_owned(),
        Err(error) => format!("cannot be used: {error}"),
    };
    Err(Failure::WorkingDirectory {
        path: PathBuf::from(dir),
        reason,
    })
}

fn spawn_failure(program: &OsString, source: io::Error) -> Failure {
    Failure::Io {
        context: format!("starting `{}`", Path::new(program).display()),
        source,
    }
}
