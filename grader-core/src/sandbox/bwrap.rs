//! [`Sandbox`]: bubblewrap (`bwrap`) around a command: a read-only system, the working
//! directory read-write, a private `/tmp`, its own PID, IPC, UTS, user and network
//! namespaces, no capabilities, root inside an unprivileged user outside.

use std::ffi::OsString;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::entry::Entry;
use super::user::HostUser;

/// The system directories bound read-only, as the reference's workspace mounts them (where
/// one is a link, such as `/bin` to `usr/bin` on a merged `/usr`, the link is made instead).
const SYSTEM: [&str; 8] = [
    "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// A bubblewrap sandbox for a command: what it sees of the machine.
///
/// Inside it the command sees:
/// - `/usr`, `/etc`, and `/bin`, `/sbin`, `/lib*` (as links where the host's are links),
///   read-only; nothing else of the host's filesystem (no `/home`, `/root`, `/var`, `/run`,
///   `/sys`, `/mnt`) but what is [bound](Self::read_only);
/// - its working directory, read-write, at the same path;
/// - a private `/tmp` (an empty tmpfs), a fresh `/proc` and a minimal `/dev`;
/// - its own PID namespace (it cannot see or signal the grader's processes; bwrap is its
///   init and reaps what it orphans), its own IPC and UTS namespaces, a new session (no
///   controlling terminal to inject input into), no capabilities (root inside cannot raise
///   its rlimits, mount, or leave its cgroup);
/// - no network at all, not even the host's `127.0.0.1`, unless [allowed](Self::network);
/// - no descriptor of the grading process but its standard streams (see [`Entry`]).
///
/// **Root inside is not root outside.** Where the grading process runs as root, bwrap is
/// started as an unprivileged [`HostUser`] ([`host_user`](Self::host_user), else
/// [`HostUser::default`]) and maps root inside to it: host files only root may read (under
/// the read-only `/etc`, in a read-only bind) stay unreadable, and what the command writes is
/// that user's. The working directory and the [writable](Self::writable) binds are
/// [handed over](HostUser::hand_over) to the user first, so the command can still write
/// there. Where the grading process is not root, bwrap maps its user to itself inside.
///
/// The environment passes through as the command would have had it (credentials withheld as
/// [`BashGrader`](crate::BashGrader) withholds them). The grading process's own environment is
/// out of reach: its processes are not in the sandbox's PID namespace, and the host user
/// could not read their `/proc/<pid>/environ` if they were.
///
/// bwrap is found on `PATH` (the `bubblewrap` package), and checked once per process by
/// running it; where it cannot sandbox (missing, or user namespaces refused), a grade fails
/// with [`Failure::Sandbox`](crate::Failure::Sandbox) naming why, unless the sandbox was made
/// [`or_unsandboxed`](Self::or_unsandboxed).
///
/// ```
/// use grader_core::sandbox::Sandbox;
///
/// let sandbox = Sandbox::new().read_only("/opt/toolchain").network(false);
/// assert!(!sandbox.allows_network());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sandbox {
    network: bool,
    binds: Vec<(PathBuf, bool)>,
    fallback: bool,
    host_user: Option<HostUser>,
}

/// Where a bind's source comes from: a descriptor kept open into bwrap (`--bind-fd`, which
/// binds exactly the directory that was opened), or a path bwrap resolves itself.
#[derive(Debug)]
pub(crate) enum Source<'a> {
    Fd(RawFd),
    Path(&'a Path),
}

/// What this process knows of bwrap: where it is and whether it takes `--bind-fd`.
#[derive(Debug)]
pub(crate) struct Bwrap {
    pub(crate) path: PathBuf,
    pub(crate) bind_fd: bool,
}

impl Sandbox {
    /// The sandbox described above: no network, nothing bound but the working directory.
    #[must_use]
    pub fn new() -> Self {
        Sandbox::default()
    }

    /// Whether the command shares the host's network (`false` by default: a network
    /// namespace of its own with nothing in it but a loopback that reaches nothing outside).
    #[must_use]
    pub fn network(mut self, allow: bool) -> Self {
        self.network = allow;
        self
    }

    /// Binds the host's `path` read-only at the same path (a toolchain, a data set). A path
    /// that does not exist is skipped.
    #[must_use]
    pub fn read_only(mut self, path: impl Into<PathBuf>) -> Self {
        self.binds.push((path.into(), false));
        self
    }

    /// Binds the host's `path` read-write at the same path. A path that does not exist is
    /// skipped.
    #[must_use]
    pub fn writable(mut self, path: impl Into<PathBuf>) -> Self {
        self.binds.push((path.into(), true));
        self
    }

    /// Where bwrap cannot sandbox, runs the command without the sandbox (saying why in
    /// `info.sandbox`) instead of failing the grade. A choice to make knowingly: the
    /// command then sees everything the grading process sees.
    #[must_use]
    pub fn or_unsandboxed(mut self) -> Self {
        self.fallback = true;
        self
    }

    /// The unprivileged host user that root inside the sandbox is, where the grading process
    /// runs as root ([`HostUser::default`] unless set). Give each kind of sandbox a user of
    /// its own, which no other account or service of the host uses. Recorded in
    /// `_parameters.sandbox.host_uid` when set.
    #[must_use]
    pub fn host_user(mut self, user: HostUser) -> Self {
        self.host_user = Some(user);
        self
    }

    /// The host user set with [`host_user`](Self::host_user), if any.
    #[must_use]
    pub fn chosen_host_user(&self) -> Option<HostUser> {
        self.host_user
    }

    /// The host user the sandbox's processes run as where the grading process is root.
    #[must_use]
    pub fn effective_host_user(&self) -> HostUser {
        self.host_user.unwrap_or_default()
    }

    /// Whether the command may use the network.
    #[must_use]
    pub fn allows_network(&self) -> bool {
        self.network
    }

    /// Whether the command runs unsandboxed where bwrap cannot sandbox.
    #[must_use]
    pub fn falls_back(&self) -> bool {
        self.fallback
    }

    /// The paths bound, each with whether it is writable.
    #[must_use]
    pub fn binds(&self) -> &[(PathBuf, bool)] {
        &self.binds
    }

    /// What `_parameters.sandbox` records: whether the network is allowed, the paths bound
    /// read-only and writable, and the host user when one was chosen.
    pub(crate) fn recorded(&self) -> serde_json::Map<String, serde_json::Value> {
        let paths = |writable: bool| {
            let paths = self.binds.iter().filter(|(_, w)| *w == writable);
            serde_json::Value::Array(
                paths
                    .map(|(path, _)| path.to_string_lossy().into_owned().into())
                    .collect(),
            )
        };
        let mut described = serde_json::Map::new();
        described.insert("network".into(), self.network.into());
        described.insert("read_only".into(), paths(false));
        described.insert("writable".into(), paths(true));
        if let Some(user) = self.host_user {
            described.insert("host_uid".into(), user.uid().into());
        }
        described
    }

    /// Whether bwrap can sandbox here: the path of `bwrap`, or why not (checked once per
    /// process, by sandboxing `true`). Where the grading process runs as root, the check runs
    /// bwrap as [`HostUser::default`] (or `nobody`, in a container that does not map it), as a
    /// sandbox will: it fails where the kernel refuses unprivileged user namespaces.
    ///
    /// # Errors
    /// The reason, when bwrap is missing or cannot make the namespaces.
    pub fn check() -> Result<&'static Path, &'static str> {
        Sandbox::checked().map(|bwrap| bwrap.path.as_path())
    }

    /// bwrap, checked once per process (see [`check`](Self::check)).
    pub(crate) fn checked() -> Result<&'static Bwrap, &'static str> {
        static CHECKED: OnceLock<Result<Bwrap, String>> = OnceLock::new();
        CHECKED
            .get_or_init(|| {
                let path = find_bwrap()
                    .ok_or_else(|| "bwrap (the bubblewrap package) is not on PATH".to_owned())?;
                let drop = HostUser::applies();
                // Who tries it: the default host user, or, in a container that does not map it,
                // `nobody` (a sandbox then needs a host user the container maps, which each
                // grade checks).
                let nobody = HostUser::new(65_534, 65_534).map_err(|error| error.to_string())?;
                let prober = [HostUser::default(), nobody]
                    .into_iter()
                    .find(|user| user.check_mapped().is_ok())
                    .unwrap_or_default();
                let root = Bind {
                    source: Source::Path(Path::new("/")),
                    at: Path::new("/"),
                    writable: false,
                    must_exist: true,
                };
                let probe = Sandbox::new().command_line(&path, &root, &[], drop);
                let mut command = Command::new(&probe[0]);
                command
                    .args(&probe[1..])
                    .arg("true")
                    .current_dir("/")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped());
                Entry::new().user(prober).apply(&mut command);
                let output = command
                    .output()
                    .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
                if !output.status.success() {
                    let as_whom = if drop {
                        format!(" as uid {}", prober.uid())
                    } else {
                        String::new()
                    };
                    return Err(format!(
                        "bwrap cannot sandbox here{as_whom} ({}): {}",
                        output.status,
                        String::from_utf8_lossy(&output.stderr).trim()
                    ));
                }
                let help = Command::new(&path)
                    .arg("--help")
                    .stdin(Stdio::null())
                    .stderr(Stdio::null())
                    .output()
                    .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
                    .unwrap_or_default();
                Ok(Bwrap {
                    path,
                    bind_fd: help.contains("--bind-fd"),
                })
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// bwrap's command line for a command run in `cwd`: `bwrap`, its options, then `--`;
    /// the command's own program and arguments follow. It is the command line for bwrap run
    /// by a user that is not root, with the sources of its binds as paths;
    /// [`BashGrader`](crate::BashGrader) adds, where the grading process is root, the options
    /// that map root inside to the [host user](Self::host_user), and binds from descriptors
    /// where bwrap takes them.
    #[must_use]
    pub fn arguments(&self, bwrap: &Path, cwd: &Path) -> Vec<OsString> {
        let binds: Vec<Bind<'_>> = self
            .binds
            .iter()
            .map(|(path, writable)| Bind {
                source: Source::Path(path),
                at: path,
                writable: *writable,
                must_exist: false,
            })
            .collect();
        let cwd = Bind {
            source: Source::Path(cwd),
            at: cwd,
            writable: true,
            must_exist: true,
        };
        self.command_line(bwrap, &cwd, &binds, false)
    }

    /// bwrap's command line with the working directory `cwd` and the `binds` as given (their
    /// sources paths or descriptors), and, when `drop`, root inside mapped to the user bwrap
    /// runs as.
    pub(crate) fn command_line(
        &self,
        bwrap: &Path,
        cwd: &Bind<'_>,
        binds: &[Bind<'_>],
        drop: bool,
    ) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![bwrap.into()];
        let mut push = |items: &[&str]| args.extend(items.iter().map(OsString::from));
        push(&[
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
        ]);
        if drop {
            // bwrap runs as the host user: root inside is that user outside.
            push(&["--unshare-user", "--uid", "0", "--gid", "0"]);
        }
        if self.network {
            push(&["--share-net"]);
        }
        args.extend(system_mounts());
        args.extend(["--tmpfs", "/tmp"].map(OsString::from));
        for bind in binds.iter().chain([cwd]) {
            bind.push_to(&mut args);
        }
        args.extend([OsString::from("--chdir"), cwd.at.into(), "--".into()]);
        args
    }
}

/// One bind of a sandbox: its source, where it appears inside, whether it is writable, and
/// whether bwrap fails when a source path is missing (the working directory) or skips it.
#[derive(Debug)]
pub(crate) struct Bind<'a> {
    pub(crate) source: Source<'a>,
    pub(crate) at: &'a Path,
    pub(crate) writable: bool,
    pub(crate) must_exist: bool,
}

impl Bind<'_> {
    fn push_to(&self, args: &mut Vec<OsString>) {
        match self.source {
            Source::Fd(fd) => {
                let flag = if self.writable {
                    "--bind-fd"
                } else {
                    "--ro-bind-fd"
                };
                args.extend([flag.into(), fd.to_string().into(), self.at.into()]);
            }
            Source::Path(path) => {
                let flag = match (self.writable, self.must_exist) {
                    (true, true) => "--bind",
                    (true, false) => "--bind-try",
                    (false, true) => "--ro-bind",
                    (false, false) => "--ro-bind-try",
                };
                args.extend([flag.into(), path.into(), self.at.into()]);
            }
        }
    }
}

/// The system a sandbox sees, as bwrap's arguments: `/usr` and `/etc` read-only, `/bin`,
/// `/sbin` and `/lib*` as the host has them (links where the host's are links, as on a merged
/// `/usr`; read-only binds otherwise), a fresh `/proc` and a minimal `/dev`: the reference
/// workspace's system mounts, shared by [`Sandbox`] and grader-env's workspaces (each adds its
/// own `/tmp`, working directory and namespaces).
#[must_use]
pub fn system_mounts() -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    for dir in SYSTEM {
        let path = Path::new(dir);
        match std::fs::read_link(path) {
            Ok(target) => {
                args.push("--symlink".into());
                args.push(target.into());
                args.push(dir.into());
            }
            Err(_) if path.is_dir() => {
                args.extend(["--ro-bind".into(), dir.into(), dir.into()]);
            }
            Err(_) => {}
        }
    }
    args.extend(["--proc", "/proc", "--dev", "/dev"].map(OsString::from));
    args
}

/// `bwrap` on `PATH`.
fn find_bwrap() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_working_directory_is_the_one_writable_place_and_comes_last() {
        let args = Sandbox::new()
            .read_only("/opt/data")
            .arguments(Path::new("/usr/bin/bwrap"), Path::new("/work/repo"));
        let text: Vec<String> = args.iter().map(|a| a.to_string_lossy().into()).collect();
        let tail = &text[text.len() - 6..];
        assert_eq!(
            tail,
            [
                "--bind",
                "/work/repo",
                "/work/repo",
                "--chdir",
                "/work/repo",
                "--"
            ]
        );
        assert!(
            text.windows(3)
                .any(|w| w == ["--ro-bind-try", "/opt/data", "/opt/data"])
        );
        assert!(text.contains(&"--unshare-all".to_owned()));
        assert!(!text.contains(&"--share-net".to_owned()));
        assert!(text.windows(2).any(|w| w == ["--cap-drop", "ALL"]));
    }

    #[test]
    fn dropping_root_maps_it_and_binds_come_from_descriptors() {
        let cwd = Bind {
            source: Source::Fd(11),
            at: Path::new("/work/repo"),
            writable: true,
            must_exist: true,
        };
        let data = Bind {
            source: Source::Fd(12),
            at: Path::new("/opt/data"),
            writable: false,
            must_exist: false,
        };
        let args = Sandbox::new().command_line(Path::new("bwrap"), &cwd, &[data], true);
        let text: Vec<String> = args.iter().map(|a| a.to_string_lossy().into()).collect();
        assert!(
            text.windows(5)
                .any(|w| w == ["--unshare-user", "--uid", "0", "--gid", "0"])
        );
        assert!(
            text.windows(3)
                .any(|w| w == ["--ro-bind-fd", "12", "/opt/data"])
        );
        let tail = &text[text.len() - 6..];
        assert_eq!(
            tail,
            [
                "--bind-fd",
                "11",
                "/work/repo",
                "--chdir",
                "/work/repo",
                "--"
            ]
        );
        let plain = Sandbox::new().arguments(Path::new("bwrap"), Path::new("/"));
        assert!(!plain.iter().any(|a| a == "--uid"));
    }

    #[test]
    fn network_is_shared_only_when_allowed() {
        let args = Sandbox::new()
            .network(true)
            .arguments(Path::new("bwrap"), Path::new("/"));
        assert!(args.iter().any(|a| a == "--share-net"));
    }
}
