//! [`WorkspaceError`]: why a workspace could not start (and binding a listener, whose failure
//! is one).

use std::net::SocketAddr;
use std::path::PathBuf;

/// Why a [`Workspace`](super::Workspace) could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// Isolation was required ([`require_isolation`](super::WorkspaceBuilder::require_isolation))
    /// and bwrap cannot sandbox here; the message is the reference's, then why.
    #[error(
        "isolation was required but bwrap cannot sandbox here: install bubblewrap and use a \
         container runtime that allows unprivileged user namespaces. Refusing to serve sessions \
         that would silently run unisolated. ({reason})"
    )]
    IsolationUnavailable {
        /// Why bwrap cannot sandbox (missing, or the namespaces refused).
        reason: String,
    },
    /// The root could not be created or resolved.
    #[error("workspace root {}: {source}", path.display())]
    Root {
        /// The root as given.
        path: PathBuf,
        /// What the filesystem said.
        #[source]
        source: std::io::Error,
    },
    /// The path the root is mounted at inside the sandbox is not absolute, is `/`, or has `.`
    /// or `..` components.
    #[error(
        "the workspace's guest path must be an absolute directory other than / without . or .. \
         components: {0:?}"
    )]
    GuestPath(String),
    /// The host and port given do not name an address to listen on.
    #[error("cannot resolve the workspace's SSH address {0:?}")]
    Address(String),
    /// The SSH server could not listen there.
    #[error("cannot listen for SSH on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A key could not be generated or encoded.
    #[error("cannot make the workspace's SSH keys: {0}")]
    Key(String),
    /// A command run with [`Workspace::run`](super::Workspace::run) could not start.
    #[error("cannot run {command:?} in the workspace: {message}")]
    Command {
        /// The command.
        command: String,
        /// Why.
        message: String,
    },
    /// An entry of [`allowed_hosts`](super::WorkspaceBuilder::allowed_hosts) is not a host
    /// name or address (it has a scheme, a port, a path, whitespace, or is empty).
    #[error(
        "allowed hosts must be host names or addresses without scheme, port or path (or \"*\"): \
         {0:?}"
    )]
    AllowedHost(String),
    /// A [`Peer`](super::Peer) cannot be served.
    #[error("the workspace cannot serve peer {name:?}: {reason}")]
    Peer {
        /// The peer's name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// A [`Mount`](super::Mount) cannot be made.
    #[error("the workspace cannot mount at {}: {reason}", target.display())]
    Mount {
        /// Where it was to appear in the sandbox.
        target: PathBuf,
        /// Why.
        reason: &'static str,
    },
    /// The sandbox the sessions share did not start.
    #[error("the workspace sandbox did not start: {0}")]
    Sandbox(String),
    /// The file tracker ([`track_files`](super::WorkspaceBuilder::track_files)) could not take
    /// its baseline.
    #[error("the workspace's file tracking did not start: {0}")]
    Tracker(#[from] super::TrackerError),
    /// A template asked its session for a workspace the environment did not attach: none
    /// attached, none by that name, or several and no name given
    /// ([`Session::workspace`](crate::Session::workspace)).
    #[error("task {task:?}: {message}")]
    NotAttached {
        /// The task whose template asked.
        task: String,
        /// What it asked for and what there is.
        message: String,
    },
    /// `HUD_FILE_TRACKING_ENABLED` is set to something that is not a boolean (the reference's
    /// settings refuse it too).
    #[error(
        "HUD_FILE_TRACKING_ENABLED must be a boolean (true, false, 1, 0, yes, no, on, off): {0:?}"
    )]
    TrackFilesSetting(String),
}

/// A listener on `addr` and the address it got (the port the system picked for port 0), or
/// [`WorkspaceError::Bind`] naming the address asked for.
pub(super) async fn listen(
    addr: SocketAddr,
) -> Result<(tokio::net::TcpListener, SocketAddr), WorkspaceError> {
    let bind_error = |source| WorkspaceError::Bind { addr, source };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(bind_error)?;
    let bound = listener.local_addr().map_err(bind_error)?;
    Ok((listener, bound))
}
