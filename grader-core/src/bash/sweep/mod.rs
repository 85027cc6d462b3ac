//! Finding and stopping every process a command started, wherever it went.
//!
//! Each command's environment carries a tag, `GRADER_BASH_<token>=<n>`: `<token>` is unique to
//! this grading process and `<n>` to the command. Every process the command starts inherits it,
//! including those that leave the process group (`setsid`, `set -m`, a double fork,
//! `setpgid`). One sweeper thread per process serves every grader: when a grader ends, it asks
//! the sweeper to stop its tag, and the sweeper reads `/proc/<pid>/environ` once per round for
//! all the graders waiting, sends SIGTERM to what carries their tags, then SIGKILL after their
//! grace, and answers each grader once nothing of its tag is alive. A round reads only the pids
//! handed out since the oldest waiting command started (see [`Window`]) when the kernel's
//! counters allow, and remembers what it learned of each process from round to round (see
//! [`Memo`](scan)). The executor threads never list `/proc`: [`nothing_left`] reads at most a
//! few hundred pids' files, once per grade, when bash exited by itself.
//!
//! Signals go through pidfds opened once the process is known to be the tagged one (its tag
//! read again, or, while the memo is kept, no pid reused since it was read), so a process
//! that exits and whose pid is reused by an unrelated process is never signalled.
//!
//! The parts, bottom up: [`tag`] names a command's processes and keeps the list of running
//! commands' bash; [`pids`] reads the kernel's counters and tells which pids a command's
//! processes can have; [`lineage`] tells, from `/proc/<pid>/stat` alone, which processes can
//! descend from a command; [`scan`] finds the processes that carry a tag; [`sweeper`] is the
//! thread that signals them and answers the graders.

mod lineage;
mod pids;
mod scan;
mod sweeper;
mod tag;

pub(super) use pids::{Counters, Window};
pub(super) use scan::nothing_left;
pub(super) use sweeper::{kill_now, start, stop};
pub(super) use tag::{Tag, add_leader, leader, remove_leader, tag_name};
