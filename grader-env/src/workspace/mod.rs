//! Workspaces: the directory an agent works in, and what graders learn of it.
//!
//! The change [`Tracker`]: what the agent added, removed and modified under the root since the
//! task started, as a Rust value ([`Changes`]), computed as hud's own file tracker does (its
//! excludes, its deny list for credential-shaped paths, its limits, and Python `difflib`'s
//! unified diffs byte for byte).
//!
//! With the `workspace` feature, `Workspace` serves a root to the agent as hud's `ssh/2`
//! capability: an SSH server whose sessions all run in one bubblewrap sandbox, ended with
//! every process in it when the workspace stops (`Environment::workspace` attaches one to an
//! environment). Its sandbox has no network unless the task names the hosts it may reach
//! (`allowed_hosts`: an HTTP proxy applies the policy) or the host's services it may call
//! (`Peer`); the author may add `Mount`s. The sandbox a `BashGrader` runs in is
//! `grader_core::sandbox`.

#[cfg(feature = "workspace")]
mod attach;
#[cfg(feature = "workspace")]
mod builder;
mod capture;
#[cfg(feature = "workspace")]
mod cgroup;
mod changes;
mod difflib;
#[cfg(feature = "workspace")]
mod egress;
#[cfg(feature = "workspace")]
mod error;
#[cfg(feature = "workspace")]
mod filetracking;
#[cfg(feature = "workspace")]
mod handle;
#[cfg(feature = "workspace")]
mod holder;
#[cfg(feature = "workspace")]
mod hook;
#[cfg(feature = "workspace")]
mod mount;
mod pattern;
#[cfg(feature = "workspace")]
mod procs;
#[cfg(feature = "workspace")]
mod pty;
mod root;
#[cfg(feature = "workspace")]
mod sandbox;
#[cfg(feature = "workspace")]
mod seal;
#[cfg(feature = "workspace")]
mod server;
#[cfg(feature = "workspace")]
mod ssh;
#[cfg(feature = "workspace")]
mod uid;

#[cfg(feature = "workspace")]
pub use builder::{Isolation, WorkspaceBuilder};
pub use capture::{Artifact, CAPTURE_CONTENT_TYPES, Capture, Flush};
pub use changes::{
    Change, Changes, DEFAULT_MAX_FILE_SIZE, Diff, MAX_PATH_BYTES, ManifestEntry, Status, Tracker,
    TrackerError,
};
#[cfg(feature = "workspace")]
pub use egress::{ANY_HOST, Peer};
#[cfg(feature = "workspace")]
pub use error::WorkspaceError;
#[cfg(feature = "workspace")]
pub(crate) use handle::Attached;
#[cfg(feature = "workspace")]
pub use handle::WorkspaceHandle;
#[cfg(feature = "workspace")]
pub use mount::Mount;
pub use pattern::{DEFAULT_EXCLUDES, SECRET_DENY, fnmatch};
pub use root::{MAX_DEPTH, Root, RootError};
#[cfg(feature = "workspace")]
pub use server::Workspace;
