//! [`Sandbox`]: bubblewrap (`bwrap`) around a command: a read-only system, the working
//! directory read-write, a private `/tmp`, its own PID, IPC, UTS, user and network
//! namespaces, no capabilities.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

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
/// - no network at all, not even the host's `127.0.0.1`, unless [allowed](Self::network).
///
/// The environment passes through as the command would have had it (credentials withheld as
/// [`BashGrader`](crate::BashGrader) withholds them).
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

    /// Whether bwrap can sandbox here: the path of `bwrap`, or why not (checked once per
    /// process, by sandboxing `true`).
    ///
    /// # Errors
    /// The reason, when bwrap is missing or cannot make the namespaces.
    pub fn check() -> Result<&'static Path, &'static str> {
        static CHECKED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
        CHECKED
            .get_or_init(|| {
                let bwrap = find_bwrap()
                    .ok_or_else(|| "bwrap (the bubblewrap package) is not on PATH".to_owned())?;
                let probe = Sandbox::new().arguments(&bwrap, Path::new("/"));
                let output = Command::new(&probe[0])
                    .args(&probe[1..])
                    .arg("true")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .output()
                    .map_err(|e| format!("cannot run {}: {e}", bwrap.display()))?;
                if output.status.success() {
                    Ok(bwrap)
                } else {
                    Err(format!(
                        "bwrap cannot sandbox here ({}): {}",
                        output.status,
                        String::from_utf8_lossy(&output.stderr).trim()
                    ))
                }
            })
            .as_ref()
            .map(PathBuf::as_path)
            .map_err(String::as_str)
    }

    /// bwrap's command line for a command run in `cwd`: `bwrap`, its options, then `--`;
    /// the command's own program and arguments follow.
    #[must_use]
    pub fn arguments(&self, bwrap: &Path, cwd: &Path) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![bwrap.into()];
        let mut push = |items: &[&str]| args.extend(items.iter().map(OsString::from));
        push(&[
            "--unshare-all",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
        ]);
        if self.network {
            push(&["--share-net"]);
        }
        args.extend(system_mounts());
        args.extend(["--tmpfs", "/tmp"].map(OsString::from));
        for (path, writable) in &self.binds {
            let flag = if *writable {
                "--bind-try"
            } else {
                "--ro-bind-try"
            };
            args.extend([flag.into(), path.into(), path.into()]);
        }
        args.extend([
            OsString::from("--bind"),
            cwd.into(),
            cwd.into(),
            "--chdir".into(),
            cwd.into(),
            "--".into(),
        ]);
        args
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
    fn network_is_shared_only_when_allowed() {
        let args = Sandbox::new()
            .network(true)
            .arguments(Path::new("bwrap"), Path::new("/"));
        assert!(args.iter().any(|a| a == "--share-net"));
    }
}
