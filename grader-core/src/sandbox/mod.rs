//! Containment for commands that run the agent's code: resource [`Limits`] (a cgroup per
//! command where the machine offers one, v1 or v2, and rlimits otherwise) and the bubblewrap
//! [`Sandbox`] (a read-only system, the working directory read-write, its own namespaces, no
//! network).
//!
//! [`BashGrader`](crate::BashGrader) applies both ([`limits`](crate::BashGrader::limits) are
//! on by default; the [`sandbox`](crate::BashGrader::sandbox) is chosen), and the same
//! sandbox is what an environment's workspace runs the agent's sessions in.

mod bwrap;
mod cgroup;
mod hook;
mod limits;

pub use bwrap::{Sandbox, system_mounts};
pub use limits::{
    DEFAULT_FILE_SIZE, DEFAULT_MEMORY, DEFAULT_OPEN_FILES, DEFAULT_PROCESSES, Limits,
};

pub(crate) use limits::Applied;
