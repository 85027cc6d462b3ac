//! Workspaces: the directory an agent works in, and what graders learn of it.
//!
//! Today this is the change [`Tracker`]: what the agent added, removed and modified under the
//! root since the task started, as a Rust value ([`Changes`]), computed as hud's own file
//! tracker does (its excludes, its deny list for credential-shaped paths, its limits, and
//! Python `difflib`'s unified diffs byte for byte). The sandbox a workspace runs the agent in
//! is [`grader_core::sandbox`].

mod changes;
mod difflib;
mod pattern;

pub use changes::{Change, Changes, DEFAULT_MAX_FILE_SIZE, Status, Tracker, TrackerError};
pub use pattern::{DEFAULT_EXCLUDES, SECRET_DENY, fnmatch};
