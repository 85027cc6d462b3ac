//! Starting the command: the checks that touch the filesystem, the command line (the shell,
//! `env --default-signal` where signals need resetting, bwrap where sandboxed), the limits'
//! cgroup and hook, and the spawn itself, run on a [starter thread](super::start).

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::time::Instant;

use std::time::Duration;

use crate::error::Failure;
use crate::sandbox::{
    Applied, Bind, Descriptors, HostUser, Limits, Sandbox, Source, group_parents,
};

use super::group::{self, BASH, CommandGuard, ENV};
use super::secrets::Inherit;
use super::sweep::{self, Tag};
use super::watch;

/// A command that started: its guard, when it started, its limits, how it was sandboxed
/// (for `info.sandbox`), the host uid its sandbox runs as where root was dropped, and the
/// directories it can write that outlive it. `None` in its place means there was no shell to
/// run it with.
pub(super) struct Started {
    pub(super) guard: CommandGuard,
    pub(super) at: Instant,
    pub(super) limits: Applied,
    pub(super) sandbox: Option<String>,
    pub(super) host_uid: Option<u32>,
    pub(super) writes: Vec<PathBuf>,
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
        watch::ensure(BASH, &group_parents(self.limits)).map_err(|source| Failure::Io {
            context: "starting the watcher that stops commands if this process ends".to_owned(),
            source,
        })?;

        let mut program: Vec<OsString> = Vec::new();
        if group::inherits_ignored_signals() && group::env_resets_signals() {
            program.extend([ENV.into(), "--default-signal".into()]);
        }
        program.extend(self.launcher.iter().cloned());
        let cwd = match self.cwd {
            Some(dir) => dir.to_owned(),
            None => std::env::current_dir().map_err(|source| Failure::Io {
                context: "finding the working directory".to_owned(),
                source,
            })?,
        };
        // Where a file the command cuts at the file-size limit is looked for afterwards: the
        // working directory the grader chose (not one inherited from this process, which may
        // be anything up to `/`), and the sandbox's writable binds.
        let mut writes: Vec<PathBuf> = self.cwd.iter().map(|dir| dir.to_path_buf()).collect();
        // Descriptors bwrap binds from; every other one is closed in the command.
        let mut keep: Vec<OwnedFd> = Vec::new();
        let mut host_user = None;
        let sandbox_label = match sandbox {
            Some(Sandboxing::Bwrap(bwrap, sandbox)) => {
                let (arguments, user) =
                    bwrap_command_line(bwrap, sandbox, &cwd, self.cwd.is_some(), &mut keep)?;
                program.extend(arguments);
                host_user = user;
                writes.extend(
                    sandbox
                        .binds()
                        .iter()
                        .filter(|(_, writable)| *writable)
                        .map(|(path, _)| path.clone()),
                );
                Some("bwrap".to_owned())
            }
            Some(Sandboxing::Without(why)) => Some(format!("none: {why}")),
            None => None,
        };
        let sandboxed = sandbox_label.as_deref() == Some("bwrap");
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
        let mut hook = limits.take_hook();
        // What the command inherits of this process's descriptors: nothing, in the sandbox and
        // wherever the hook runs anyway; with no limit and no sandbox the command starts as it
        // did before limits existed.
        if sandboxed || !hook.is_empty() {
            hook.descriptors = Some(Descriptors::keeping(keep));
        }
        hook.user = host_user;
        hook.install(&mut command);
        tracing::debug!(command = %self.command, cwd = ?self.cwd, timeout = ?self.timeout, "running grader command");

        let before = sweep::Counters::read();
        let at = Instant::now();
        match command.spawn() {
            Ok(child) => Ok(Some(Started {
                guard: CommandGuard::new(child, tag.id, before),
                at,
                limits,
                sandbox: sandbox_label,
                host_uid: host_user.map(|user| user.uid()),
                writes,
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
    Bwrap(&'static crate::sandbox::Bwrap, &'a Sandbox),
    Without(&'static str),
}

/// bwrap's command line for `sandbox` with the working directory `cwd`, and the host user it
/// runs as where this process is root. Then the working directory, when the grader `chose`
/// it, and the writable binds are handed to that user first, and bound from the descriptors
/// of what was handed over where bwrap takes them (added to `keep`), so that bwrap binds
/// exactly those. A working directory inherited from this process is never handed over (it
/// is bound as it is: the command writes there only what the files' permissions let the host
/// user write). What is not handed over is opened by this process too, so a path the host
/// user could not reach is still bound (what it may read of it is up to the files'
/// permissions).
fn bwrap_command_line(
    bwrap: &crate::sandbox::Bwrap,
    sandbox: &Sandbox,
    cwd: &Path,
    chosen: bool,
    keep: &mut Vec<OwnedFd>,
) -> Result<(Vec<OsString>, Option<HostUser>), Failure> {
    if !HostUser::applies() {
        return Ok((sandbox.arguments(&bwrap.path, cwd), None));
    }
    let user = sandbox.effective_host_user();
    let failed = |error: crate::sandbox::SandboxError| Failure::Sandbox(error.to_string());
    user.check_mapped().map_err(failed)?;
    let open = |path: &Path| {
        rustix::fs::open(
            path,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| Failure::Sandbox(format!("cannot open {} to bind it: {e}", path.display())))
    };
    let handed = if chosen {
        user.hand_over(cwd).map_err(failed)?.0
    } else {
        open(cwd)?
    };
    let cwd_bind = Bind {
        source: source(bwrap, keep, handed, cwd),
        at: cwd,
        writable: true,
        must_exist: true,
    };
    let mut binds = Vec::new();
    for (path, writable) in sandbox.binds() {
        // As bwrap's `--bind-try`: a path that does not exist is skipped.
        if std::fs::symlink_metadata(path).is_err() {
            continue;
        }
        let fd = if *writable {
            user.hand_over(path).map_err(failed)?.0
        } else {
            open(path)?
        };
        binds.push(Bind {
            source: source(bwrap, keep, fd, path),
            at: path,
            writable: *writable,
            must_exist: false,
        });
    }
    Ok((
        sandbox.command_line(&bwrap.path, &cwd_bind, &binds, true),
        Some(user),
    ))
}

/// Where bwrap binds from: `fd` (kept open into it) where it takes descriptors, else `path`.
fn source<'p>(
    bwrap: &crate::sandbox::Bwrap,
    keep: &mut Vec<OwnedFd>,
    fd: OwnedFd,
    path: &'p Path,
) -> Source<'p> {
    if bwrap.bind_fd {
        let number = fd.as_raw_fd();
        keep.push(fd);
        Source::Fd(number)
    } else {
        Source::Path(path)
    }
}

/// bwrap for `sandbox`, the fallback the user chose, or the failure.
fn sandboxing(sandbox: &Sandbox) -> Result<Sandboxing<'_>, Failure> {
    match Sandbox::checked() {
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
