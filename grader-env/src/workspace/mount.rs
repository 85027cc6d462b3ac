//! [`Mount`]: a host path (or a fresh tmpfs) the author adds to the workspace's sandbox.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// What a [`Mount`] puts at its target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// A host path, read-only.
    ReadOnly(PathBuf),
    /// A host path, read-write.
    ReadWrite(PathBuf),
    /// An empty tmpfs.
    Tmpfs,
}

/// One mount the author adds to the sandbox (the reference's `Mount("ro" | "rw" | "tmpfs",
/// ...)`), made after the system's and after the root, so that one may go inside the root
/// (a read-only `tests/` the agent cannot edit).
///
/// ```
/// use grader_env::workspace::Mount;
///
/// let data = Mount::read_only("/srv/datasets", "/data");
/// let cache = Mount::read_write("/var/cache/pip", "/root/.cache/pip").optional();
/// let scratch = Mount::tmpfs("/scratch");
/// assert_eq!(data.target(), std::path::Path::new("/data"));
/// # let _ = (cache, scratch);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    kind: Kind,
    target: PathBuf,
    optional: bool,
}

impl Mount {
    /// The host path `source`, read-only at `target` in the sandbox.
    #[must_use]
    pub fn read_only(source: impl Into<PathBuf>, target: impl Into<PathBuf>) -> Self {
        Mount {
            kind: Kind::ReadOnly(source.into()),
            target: target.into(),
            optional: false,
        }
    }

    /// The host path `source`, read-write at `target` in the sandbox: what the agent writes
    /// there lands on the host.
    #[must_use]
    pub fn read_write(source: impl Into<PathBuf>, target: impl Into<PathBuf>) -> Self {
        Mount {
            kind: Kind::ReadWrite(source.into()),
            target: target.into(),
            optional: false,
        }
    }

    /// An empty tmpfs at `target`, gone with the sandbox.
    #[must_use]
    pub fn tmpfs(target: impl Into<PathBuf>) -> Self {
        Mount {
            kind: Kind::Tmpfs,
            target: target.into(),
            optional: false,
        }
    }

    /// Skipped when the source does not exist, rather than failing the sandbox (bwrap's
    /// `--ro-bind-try` and `--bind-try`; a tmpfs is always made).
    #[must_use]
    pub fn optional(mut self) -> Self {
        self.optional = true;
        self
    }

    /// Where it appears in the sandbox.
    #[must_use]
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The host path mounted, if any.
    #[must_use]
    pub fn source(&self) -> Option<&Path> {
        match &self.kind {
            Kind::ReadOnly(source) | Kind::ReadWrite(source) => Some(source),
            Kind::Tmpfs => None,
        }
    }

    /// Why it cannot be mounted: a target that is not absolute, is `/` or has `..`; a source
    /// that is not absolute.
    pub(crate) fn invalid(&self) -> Option<&'static str> {
        let plain = |path: &Path| {
            path.is_absolute()
                && path
                    .components()
                    .all(|part| !matches!(part, Component::ParentDir | Component::CurDir))
        };
        if !plain(&self.target) || self.target == Path::new("/") {
            Some("the target must be an absolute path other than / without . or ..")
        } else if self.source().is_some_and(|source| !plain(source)) {
            Some("the source must be an absolute path without . or ..")
        } else {
            None
        }
    }

    /// bwrap's arguments for it.
    pub(crate) fn bwrap_args(&self) -> Vec<OsString> {
        let (flag, source) = match (&self.kind, self.optional) {
            (Kind::ReadOnly(source), false) => ("--ro-bind", Some(source)),
            (Kind::ReadOnly(source), true) => ("--ro-bind-try", Some(source)),
            (Kind::ReadWrite(source), false) => ("--bind", Some(source)),
            (Kind::ReadWrite(source), true) => ("--bind-try", Some(source)),
            (Kind::Tmpfs, _) => ("--tmpfs", None),
        };
        let mut args = vec![OsString::from(flag)];
        args.extend(source.map(|source| source.as_os_str().to_owned()));
        args.push(self.target.as_os_str().to_owned());
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_bwraps_flag_for_it() {
        let args = |mount: Mount| -> Vec<String> {
            mount
                .bwrap_args()
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            args(Mount::read_only("/a", "/b")),
            ["--ro-bind", "/a", "/b"]
        );
        assert_eq!(
            args(Mount::read_only("/a", "/b").optional()),
            ["--ro-bind-try", "/a", "/b"]
        );
        assert_eq!(args(Mount::read_write("/a", "/b")), ["--bind", "/a", "/b"]);
        assert_eq!(
            args(Mount::read_write("/a", "/b").optional()),
            ["--bind-try", "/a", "/b"]
        );
        assert_eq!(args(Mount::tmpfs("/t").optional()), ["--tmpfs", "/t"]);
    }

    #[test]
    fn targets_and_sources_must_be_plain_absolute_paths() {
        assert_eq!(Mount::read_only("/a", "/workspace/tests").invalid(), None);
        assert!(Mount::read_only("/a", "relative").invalid().is_some());
        assert!(Mount::read_only("/a", "/").invalid().is_some());
        assert!(Mount::read_only("/a", "/x/../etc").invalid().is_some());
        assert!(Mount::read_only("a", "/x").invalid().is_some());
        assert!(Mount::tmpfs("/scratch").invalid().is_none());
    }
}
