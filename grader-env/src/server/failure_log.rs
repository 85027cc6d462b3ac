//! A task that fails to start or to grade is logged: an error-level `tracing` event with its
//! `task`, `session`, `method` and `error`, and, when the program installed no `tracing`
//! subscriber of its own, the same on standard error, as hud's server prints the exception.
//!
//! The library never installs a subscriber (a program's own `set_global_default` would then
//! fail): whether one is installed is `tracing::dispatcher::has_been_set()`. Without one,
//! `RUST_LOG` is read as `tracing-subscriber`'s `EnvFilter` and `env_logger` read it, for this
//! one line: `RUST_LOG=off`, or a directive that turns this crate off (`grader_env=off`,
//! `grader_env::server=off`), silences it; any other value (`warn`, `error`, `info`, a
//! directive for another crate) leaves it on, since an error passes every level.

use std::io::Write as _;

/// The module path of the events, which `RUST_LOG` directives are matched against.
const TARGET: &str = module_path!();

/// Logs a task that failed in `method` (`tasks.start` or `tasks.grade`).
pub(crate) fn task_failed(method: &str, task: &str, session: &str, error: &str) {
    tracing::error!(task, session, method, error, "task failed");
    if tracing::dispatcher::has_been_set() {
        return;
    }
    let filter = std::env::var("RUST_LOG").unwrap_or_default();
    if silenced(&filter, TARGET) {
        return;
    }
    let line = line(method, task, session, error);
    // A closed standard error leaves nowhere to say it.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The line written on standard error: what failed, then where, then why; what came from the
/// task (its id, its error) escaped, so that nothing an agent's answer put in an error message
/// acts on the operator's terminal or starts a line of its own.
pub(crate) fn line(method: &str, task: &str, session: &str, error: &str) -> String {
    let escape = |text: &str| grader_core::report::escape_controls(text, false).into_owned();
    format!(
        "grader-env: error handling {method}: task '{}' failed (session {session}): {}\n",
        escape(task),
        escape(error)
    )
}

/// Whether the `RUST_LOG` value `filter` turns error-level events of `target` off: the
/// directive for the longest module path that `target` is in (or is), else the directive
/// without a path, says `off`. Directives with span or field filters (`[span]`, `{field}`)
/// are left out: they select events by what this line has none of.
pub(crate) fn silenced(filter: &str, target: &str) -> bool {
    let mut chosen: Option<(usize, bool)> = None;
    for directive in filter.split(',').map(str::trim) {
        if directive.is_empty() || directive.contains(['[', '{']) {
            continue;
        }
        let (path, level) = match directive.rsplit_once('=') {
            Some((path, level)) => (path.trim(), level.trim()),
            None if is_level(directive) => ("", directive),
            // A bare path turns its target on at every level.
            None => (directive, "trace"),
        };
        if !is_level(level) {
            continue;
        }
        let matches = path.is_empty()
            || target == path
            || target
                .strip_prefix(path)
                .is_some_and(|rest| rest.starts_with("::"));
        if !matches {
            continue;
        }
        let off = level.eq_ignore_ascii_case("off") || level == "0";
        if chosen.is_none_or(|(length, _)| path.len() >= length) {
            chosen = Some((path.len(), off));
        }
    }
    chosen.is_some_and(|(_, off)| off)
}

fn is_level(text: &str) -> bool {
    ["off", "error", "warn", "info", "debug", "trace"]
        .iter()
        .any(|level| text.eq_ignore_ascii_case(level))
        || matches!(text, "0" | "1" | "2" | "3" | "4" | "5")
}

#[cfg(test)]
mod tests {
    use super::*;

    const HERE: &str = "grader_env::server::failure_log";

    #[test]
    fn only_off_for_this_crate_silences_it() {
        for on in [
            "",
            "warn",
            "error",
            "info,hyper=off",
            "grader_env=error",
            "off,grader_env=warn",
            "grader_env::server=off,grader_env::server::failure_log=error",
            "grader_envx=off",
            "grader=off",
            "[task]=off",
            "nonsense",
        ] {
            assert!(!silenced(on, HERE), "{on:?} silences it");
        }
        for off in [
            "off",
            "OFF",
            "grader_env=off",
            "info,grader_env=off",
            "grader_env::server=off",
            "grader_env=warn,grader_env::server=off",
            "0",
        ] {
            assert!(silenced(off, HERE), "{off:?} does not silence it");
        }
    }

    #[test]
    fn the_line_escapes_what_came_from_the_task() {
        let text = line("tasks.grade", "fix\x1b[2J", "sess-1", "bad\nanswer\u{202e}");
        assert_eq!(
            text,
            "grader-env: error handling tasks.grade: task 'fix\\u{1b}[2J' failed (session \
             sess-1): bad\\u{a}answer\\u{202e}\n"
        );
    }
}
