//! The watcher: a small bash process, one per grading process, that stops every tagged
//! command (see [`sweep`](super::sweep)) when the grading process is gone, however it ended
//! (SIGKILL included).
//!
//! It blocks reading a pipe whose write end only this process holds (close-on-exec, so no
//! command inherits it). When this process ends, the kernel closes that end and the read
//! returns: the watcher then finds every process whose environment carries this process's tag
//! name (`grep` over `/proc/*/task/*/environ`, so that a process whose main thread exited is
//! found through its other threads), sends SIGTERM and SIGCONT, and after half a second
//! SIGKILL to whatever is left, then exits. It runs in a process group of its own and ignores
//! SIGINT, SIGQUIT, SIGHUP and SIGTERM, so a Ctrl-C in a terminal, a hang-up or a `timeout`
//! that ends the grading process does not end the watcher first.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

/// What the watcher runs, with the tag name as `$1`.
const SCRIPT: &str = r#"
trap '' INT QUIT HUP TERM
while read -r _; do :; done
pattern="^$1="
round=0
while :; do
    pids=()
    # Each thread's environment: a process whose main thread exited can only be read there.
    for file in $(grep -lsz -e "$pattern" /proc/[0-9]*/task/[0-9]*/environ); do
        pid=${file#/proc/}
        pids+=("${pid%%/*}")
    done
    (( ${#pids[@]} )) || exit 0
    if (( round < 10 )); then
        kill -TERM "${pids[@]}" 2>/dev/null
        kill -CONT "${pids[@]}" 2>/dev/null
    else
        kill -KILL "${pids[@]}" 2>/dev/null
    fi
    (( ++round < 100 )) || exit 1
    sleep 0.05
done
"#;

/// The running watcher, whose stdin is the pipe it waits on.
static WATCHER: Mutex<Option<Child>> = Mutex::new(None);

/// Starts the watcher unless it is running.
///
/// # Errors
/// When `bash` cannot be started.
pub(super) fn ensure(bash: &str) -> std::io::Result<()> {
    let mut watcher = WATCHER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(child) = watcher.as_mut()
        && matches!(child.try_wait(), Ok(None))
    {
        return Ok(());
    }
    let child = Command::new(bash)
        .args(["--noprofile", "--norc", "-c", SCRIPT, "grader-bash-watcher"])
        .arg(super::sweep::tag_name())
        .env_remove("BASH_ENV")
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    *watcher = Some(child);
    Ok(())
}
