//! [`WorkspaceBuilder`]: how a [`Workspace`](super::Workspace) is set up (the reference's `Workspace(...)`
//! keywords, and the limits, uids and graded services it adds), and what it makes of them
//! before the server starts: the routes out, the peers' hosts file, the sandbox's makings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use grader_core::sandbox::Limits;

use super::egress::{Egress, Peer, Policy, valid_host};
use super::error::WorkspaceError;
use super::holder::{Spec, bind_fd, tmpfs_modes};
use super::mount::Mount;
use super::sandbox::on_path;
use super::seal::Graded;
use super::uid::DEFAULT_RANGE;

/// Whether sessions run sandboxed: the `isolation` param of the `ssh/2` capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Every session runs inside the workspace's bubblewrap sandbox.
    Bwrap,
    /// Sessions run directly on the host, in the root (bwrap cannot sandbox here, or the
    /// workspace was built with [`sandboxed(false)`](WorkspaceBuilder::sandboxed)).
    None,
}

impl Isolation {
    /// The param's value: `"bwrap"` or `"none"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Bwrap => "bwrap",
            Isolation::None => "none",
        }
    }
}

/// How a [`Workspace`](super::Workspace) is set up; [`start`](Self::start) serves it.
///
/// The options are the reference's `Workspace(...)` keywords of the same names.
#[derive(Debug, Clone)]
#[must_use]
pub struct WorkspaceBuilder {
    pub(super) root: PathBuf,
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) user: String,
    pub(super) guest_path: String,
    pub(super) network: bool,
    pub(super) env: BTreeMap<String, String>,
    pub(super) require_isolation: bool,
    pub(super) sandboxed: bool,
    pub(super) track_files: Option<bool>,
    pub(super) allowed_hosts: Option<BTreeSet<String>>,
    pub(super) private_addresses: bool,
    pub(super) peers: Vec<Peer>,
    pub(super) mounts: Vec<Mount>,
    pub(super) uids: std::ops::Range<u32>,
    pub(super) limits: Limits,
    pub(super) tmp_size: Option<u64>,
    pub(super) graded: Graded,
}

impl WorkspaceBuilder {
    /// A workspace on `root` with the reference's defaults (`Workspace::builder`).
    pub(super) fn new(root: PathBuf) -> Self {
        WorkspaceBuilder {
            root,
            host: "127.0.0.1".to_owned(),
            port: 0,
            user: "agent".to_owned(),
            guest_path: "/workspace".to_owned(),
            network: false,
            env: BTreeMap::new(),
            require_isolation: false,
            sandboxed: true,
            track_files: None,
            allowed_hosts: None,
            private_addresses: false,
            peers: Vec::new(),
            mounts: Vec::new(),
            uids: DEFAULT_RANGE,
            limits: Limits::default(),
            tmp_size: None,
            graded: Graded::default(),
        }
    }

    /// The address the SSH server listens on (default `127.0.0.1`).
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// The port (default 0: one the system picks).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The user name published in the capability (default `agent`); any name logs in with
    /// the managed key, as the reference's server.
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = user.into();
        self
    }

    /// Where the root is mounted inside the sandbox, and where sessions start (default
    /// `/workspace`).
    pub fn guest_path(mut self, path: impl Into<String>) -> Self {
        self.guest_path = path.into();
        self
    }

    /// Whether sessions share the host's network (default `false`: the sandbox has its own,
    /// with nothing in it but a loopback, so the host's `127.0.0.1` is out of reach).
    pub fn network(mut self, allow: bool) -> Self {
        self.network = allow;
        self
    }

    /// The hosts sessions may reach on the internet (the reference's `allowed_hosts`): the
    /// sandbox gets a network of its own (even with [`network(true)`](Self::network)) whose
    /// only way out is an HTTP proxy on its `127.0.0.1:3128`, which lets `CONNECT` tunnels and
    /// plain-HTTP requests through to a listed host or a subdomain of one (`"*"`,
    /// [`ANY_HOST`](super::ANY_HOST), for any), and only to public addresses. Sessions get
    /// `http_proxy`, `https_proxy`, `HTTP_PROXY`, `HTTPS_PROXY` and `no_proxy` pointing at it,
    /// which curl, pip, npm, cargo and git read. A refused request gets `403` with an
    /// `X-Proxy-Error` header saying why (`blocked-by-allowlist`, `blocked-by-address`).
    /// An empty list gives a sandbox with no way out at all, as `network(false)`.
    ///
    /// Nothing else on the host is reachable (the control channel included) but the
    /// [`peer`](Self::peer)s. Entries are host names or addresses without scheme, port or
    /// path; [`start`](Self::start) refuses any other.
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Whether the proxy of [`allowed_hosts`](Self::allowed_hosts) may also connect to
    /// private, loopback and other non-public addresses (default `false`, the reference's
    /// only behaviour: an allowed name that resolves to one is refused with
    /// `blocked-by-address`, so that a name cannot lead the agent into the host's own
    /// network). For an allowed host that is an internal mirror. It applies to the hosts
    /// listed by name only, never to those `"*"` lets through; and a name listed this way is
    /// the host's network for the agent: never list `localhost` or the host's own name, whose
    /// every port (the control channel's included) the agent would then reach.
    pub fn allow_private_addresses(mut self, allow: bool) -> Self {
        self.private_addresses = allow;
        self
    }

    /// A service on the host the sandbox reaches whatever the allowed hosts say (the
    /// reference's `peers`); see [`Peer`]. Only where the sandbox has a network of its own:
    /// with [`network(true)`](Self::network) and no allowed hosts, sessions share the host's
    /// network, where the service is already at its address.
    pub fn peer(mut self, peer: Peer) -> Self {
        self.peers.push(peer);
        self
    }

    /// A mount the sandbox gets after the system's and the root (the reference's `mounts`);
    /// see [`Mount`]. Without isolation there is no sandbox to mount into, and it is ignored.
    pub fn mount(mut self, mount: Mount) -> Self {
        self.mounts.push(mount);
        self
    }

    /// A variable every session gets (over the serving process's; a session's own `env`
    /// requests override it).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// The host uids a workspace's sandbox may run as when the server runs as root (default
    /// `1500000000..1500065536`): each workspace takes one no other workspace on the machine
    /// holds and no process runs as, and root inside its sandbox is that uid outside. Choose
    /// a range no other service of the machine uses (not one of `/etc/subuid`'s).
    pub fn uid_range(mut self, uids: std::ops::Range<u32>) -> Self {
        self.uids = uids;
        self
    }

    /// The workspace's limits, for the agent's sessions together (default
    /// [`Limits::default()`]: 4 GiB of memory, 4096 processes, files of 8 GiB, 4096 open
    /// files): memory and processes through the workspace's cgroup (its `/tmp` counts as
    /// memory), which every session and everything it starts is in; written file size, open
    /// files and CPU time as each session's rlimits. Where the machine offers no cgroup,
    /// processes are bounded per uid (the workspace's own, when the server runs as root) and
    /// memory is not. A fork bomb or a memory hog is contained, and the task is still
    /// graded: graders run in cgroups of their own.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The size of the sandbox's `/tmp` in bytes (default: unbounded but by the memory limit,
    /// which a tmpfs counts against). Needs bubblewrap 0.6 or later.
    pub fn tmp_size(mut self, bytes: u64) -> Self {
        self.tmp_size = Some(bytes);
        self
    }

    /// Processes named `name` (the kernel's `comm`: the program's file name, at most 15
    /// bytes) that the agent left running keep running into the grade, with what they
    /// started: a service the agent was asked to start and the template grades. Everything
    /// else the agent left is killed before grading ([`Workspace::seal`](super::Workspace::seal)). Prefer
    /// [`graded_port`](Self::graded_port): any process of the agent's can take a name.
    pub fn graded_process(mut self, name: impl Into<String>) -> Self {
        self.graded.processes.push(name.into());
        self
    }

    /// The processes listening on TCP `port` inside the sandbox (and what they started) keep
    /// running into the grade, as [`graded_process`](Self::graded_process) says.
    pub fn graded_port(mut self, port: u16) -> Self {
        self.graded.ports.push(port);
        self
    }

    /// Refuse to start where bwrap cannot sandbox (default `false`: start with
    /// `isolation: none`, and say so at warn level).
    pub fn require_isolation(mut self, require: bool) -> Self {
        self.require_isolation = require;
        self
    }

    /// Whether to sandbox at all (default `true`). `false` runs sessions directly in the root
    /// and publishes `isolation: none`, for a host that is the sandbox already.
    pub fn sandboxed(mut self, sandboxed: bool) -> Self {
        self.sandboxed = sandboxed;
        self
    }

    /// Whether to serve the `filetracking/1` capability beside `ssh/2`: the agent's changes,
    /// read by hud's eval loop (the setup's changes when a task starts, the agent's diffs
    /// while it works, the changed artifacts when it ends). Its baseline is taken when the
    /// workspace starts. [`Workspace::start`](Self::start) leaves it off unless asked, as the
    /// reference's `Workspace`; `Environment::workspace` turns it on unless
    /// `HUD_FILE_TRACKING_ENABLED` is false, as the reference's `env.workspace`.
    pub fn track_files(mut self, track: bool) -> Self {
        self.track_files = Some(track);
        self
    }

    /// `track_files` as given, or as `HUD_FILE_TRACKING_ENABLED` says (default on): the
    /// reference's `env.workspace(root, track_files=None)`.
    pub(super) fn track_files_or_setting(mut self) -> Result<Self, WorkspaceError> {
        if self.track_files.is_none() {
            self.track_files = Some(match std::env::var("HUD_FILE_TRACKING_ENABLED") {
                Err(_) => true,
                Ok(value) => parse_bool(&value).ok_or(WorkspaceError::TrackFilesSetting(value))?,
            });
        }
        Ok(self)
    }
}

/// A boolean setting as pydantic reads one.
fn parse_bool(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
        "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
        _ => None,
    }
}

/// The routes out of a sandbox with a network of its own; none where sessions share the
/// host's network. Refuses an allowed host, a peer or a mount that cannot be served, whether
/// or not the workspace ends up sandboxed.
fn egress(options: &WorkspaceBuilder) -> Result<Option<Egress>, WorkspaceError> {
    if let Some(bad) = options
        .allowed_hosts
        .iter()
        .flatten()
        .find(|host| !valid_host(host))
    {
        return Err(WorkspaceError::AllowedHost(bad.clone()));
    }
    if let Some((mount, reason)) = options
        .mounts
        .iter()
        .find_map(|mount| mount.invalid().map(|reason| (mount, reason)))
    {
        return Err(WorkspaceError::Mount {
            target: mount.target().to_path_buf(),
            reason,
        });
    }
    if options.network && options.allowed_hosts.is_none() {
        return Ok(None);
    }
    let policy = Policy::new(
        options.allowed_hosts.iter().flatten().cloned(),
        options.private_addresses,
    );
    Egress::new(policy, options.peers.clone()).map(Some)
}

/// The sandbox's own `/etc/hosts` where its peers need one: the host's, plus a line per peer,
/// in a private temporary directory removed with the workspace.
fn hosts_file(egress: Option<&Egress>) -> Result<Option<tempfile::TempDir>, WorkspaceError> {
    let base = || std::fs::read_to_string("/etc/hosts").unwrap_or_default();
    let Some(text) = egress.and_then(|egress| egress.hosts_text(&base())) else {
        return Ok(None);
    };
    let failed =
        |e: std::io::Error| WorkspaceError::Sandbox(format!("cannot write its hosts file: {e}"));
    let dir = tempfile::Builder::new()
        .prefix("grader-workspace-")
        .tempdir()
        .map_err(failed)?;
    std::fs::write(dir.path().join("hosts"), text).map_err(failed)?;
    // Readable by the uid the sandbox runs as.
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).map_err(failed)?;
    Ok(Some(dir))
}

/// The sandbox's makings, or `None` (said at warn level) where bwrap cannot sandbox.
pub(super) fn isolation_spec(
    options: &WorkspaceBuilder,
    grading: &Arc<tempfile::TempDir>,
) -> Result<Option<Spec>, WorkspaceError> {
    let egress = egress(options)?;
    if !options.sandboxed {
        if options.require_isolation {
            return Err(WorkspaceError::IsolationUnavailable {
                reason: "the workspace was built unsandboxed".to_owned(),
            });
        }
        return Ok(None);
    }
    let found = grader_core::sandbox::Sandbox::check()
        .map(Path::to_path_buf)
        .map_err(str::to_owned)
        .and_then(|bwrap| {
            on_path("nsenter")
                .map(|nsenter| (bwrap, nsenter))
                .ok_or_else(|| "nsenter (util-linux) is not on PATH".to_owned())
        });
    match found {
        Ok((bwrap, nsenter)) => {
            let tmpfs_modes = tmpfs_modes(&bwrap);
            if !tmpfs_modes {
                tracing::warn!(
                    "bwrap cannot set tmpfs modes (bubblewrap 0.5+ is required); \
                     the sandbox's /tmp keeps bwrap's default mode"
                );
            }
            Ok(Some(Spec {
                bind_fd: bind_fd(&bwrap),
                bwrap,
                nsenter,
                network: egress.is_none(),
                tmpfs_modes,
                hosts: hosts_file(egress.as_ref())?.map(Arc::new),
                egress,
                mounts: options.mounts.clone(),
                uid: None,
                limits: options.limits,
                tmp_size: options.tmp_size,
                grading: Arc::clone(grading),
            }))
        }
        Err(reason) if options.require_isolation => {
            Err(WorkspaceError::IsolationUnavailable { reason })
        }
        Err(reason) => {
            tracing::warn!(
                %reason,
                "bwrap cannot sandbox here; SSH sessions will run WITHOUT isolation"
            );
            if options.allowed_hosts.is_some() {
                tracing::warn!(
                    "without isolation the allowed hosts are NOT enforced: sessions share the \
                     host's network"
                );
            }
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_is_read_as_pydantic_reads_a_boolean() {
        for yes in ["1", "on", "t", "TRUE", "Yes", "y"] {
            assert_eq!(parse_bool(yes), Some(true), "{yes}");
        }
        for no in ["0", "OFF", "f", "false", "No", "n"] {
            assert_eq!(parse_bool(no), Some(false), "{no}");
        }
        for neither in ["", " true", "off ", "2", "enabled"] {
            assert_eq!(parse_bool(neither), None, "{neither:?}");
        }
    }
}
