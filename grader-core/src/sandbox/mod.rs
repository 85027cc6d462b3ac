//! Containment for commands that run the agent's code: resource [`Limits`] (a cgroup per
//! command where the machine offers one, v1 or v2, and rlimits otherwise) and the bubblewrap
//! [`Sandbox`] (a read-only system, the working directory read-write, its own namespaces, no
//! network, root inside an unprivileged [`HostUser`] outside, no inherited descriptor).
//!
//! [`BashGrader`](crate::BashGrader) applies both ([`limits`](crate::BashGrader::limits) are
//! on by default; the [`sandbox`](crate::BashGrader::sandbox) is chosen), and the same
//! sandbox is what an environment's workspace runs the agent's sessions in. The pieces a
//! workspace needs to start a sandbox of its own are public: [`system_mounts`], [`Entry`]
//! (what bwrap inherits: no descriptor, not root) and [`HostUser`] (who root inside is on the
//! host, and [`HostUser::hand_over`] to give it the directories it writes).

mod bwrap;
mod cgroup;
mod entry;
mod hook;
mod limits;
mod tree;
mod user;

pub use bwrap::{Sandbox, system_mounts};
pub use entry::Entry;
pub use limits::{
    DEFAULT_FILE_SIZE, DEFAULT_MEMORY, DEFAULT_OPEN_FILES, DEFAULT_PROCESSES, Limits,
};
pub use user::{DEFAULT_HOST_UID, HandedOver, HostUser, SandboxError};

pub(crate) use bwrap::{Bind, Bwrap, Source};
pub(crate) use cgroup::group_prefix;
pub(crate) use hook::Descriptors;
pub(crate) use limits::{Applied, group_parents};
