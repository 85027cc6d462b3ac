//! A readable breakdown of a grade, for a terminal: `Display` for [`EvaluationResult`] and
//! [`SubScore`].
//!
//! Each subscore is a line of a tree with its name, weight, value, its contribution to the
//! reward, and a short reason taken from its info (an error, a timeout, an exit code, or the
//! info itself). The alternate form (`{:#}`) also shows each grader's `_parameters`.
//!
//! ```
//! use grader_core::{Grade, Grader, SubScore, all};
//!
//! let result = Grade::from_subscores(vec![
//!     SubScore::new("tests", 1.0)?.with_weight(0.8)?,
//!     all("checks", [SubScore::new("lint", 1.0)?, SubScore::new("types", 0.0)?]).grade(0.2).now()?,
//!     SubScore::new("deleted files", 1.0)?.with_weight(-0.1)?,
//! ])?;
//! let text = result.to_string();
//! assert!(text.starts_with("reward 0.7000\n"));
//! assert!(text.contains("├─ tests"));
//! assert!(text.contains("│  └─ types"));
//! assert!(text.contains("penalty"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::{self, Display, Formatter, Write as _};

use serde_json::Value;

use crate::grader::PARAMETERS_KEY;
use crate::score::{EvaluationResult, Info, SubScore};

/// The longest reason shown on a line, in characters; longer ones are cut with `…`.
const REASON_CHARS: usize = 72;

impl Display for EvaluationResult {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "reward {:.4}", self.reward)?;
        if self.is_error {
            f.write_str("  (evaluation error)")?;
        }
        if let Some(content) = &self.content {
            write!(f, "  {}", one_line(content, REASON_CHARS))?;
        }
        f.write_char('\n')?;
        let subscores = self.subscores.as_deref().unwrap_or_default();
        let widths = Widths::of(subscores, 0);
        for (index, sub) in subscores.iter().enumerate() {
            let last = index + 1 == subscores.len();
            write_node(f, sub, "", last, &widths, true)?;
        }
        Ok(())
    }
}

impl Display for SubScore {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let widths = Widths::of(std::slice::from_ref(self), 0);
        write_node(f, self, "", true, &widths, false)
    }
}

/// Column widths, so that weights and values line up across the whole tree.
struct Widths {
    name: usize,
}

impl Widths {
    fn of(subscores: &[SubScore], depth: usize) -> Self {
        let mut name = 0;
        for sub in subscores {
            name = name.max(sub.name().chars().count() + 3 * depth);
            if let Some(children) = sub.children() {
                name = name.max(Widths::of(children, depth + 1).name);
            }
        }
        Widths { name }
    }
}

fn write_node(
    f: &mut Formatter<'_>,
    sub: &SubScore,
    prefix: &str,
    last: bool,
    widths: &Widths,
    as_branch: bool,
) -> fmt::Result {
    let branch = match (as_branch, last) {
        (false, _) => "",
        (true, true) => "└─ ",
        (true, false) => "├─ ",
    };
    let pad = widths
        .name
        .saturating_sub(prefix.chars().count() + sub.name().chars().count());
    write!(
        f,
        "{prefix}{branch}{name}{blank:pad$}  weight {weight:>7.4}  value {value:.4}",
        name = sub.name(),
        blank = "",
        weight = sub.weight(),
        value = sub.value(),
    )?;
    if sub.weight() < 0.0 && sub.value() > 0.0 {
        write!(f, "  penalty {:.4}", sub.weight() * sub.value())?;
    }
    if let Some(reason) = sub.info().and_then(reason) {
        write!(f, "  {reason}")?;
    }
    f.write_char('\n')?;

    let child_prefix = match (as_branch, last) {
        (false, _) => String::from(prefix),
        (true, true) => format!("{prefix}   "),
        (true, false) => format!("{prefix}│  "),
    };
    if f.alternate()
        && let Some(params) = sub.info().and_then(|info| info.get(PARAMETERS_KEY))
        && params.as_object().is_some_and(|p| !p.is_empty())
    {
        writeln!(
            f,
            "{child_prefix}   parameters {}",
            one_line(&params.to_string(), REASON_CHARS * 2)
        )?;
    }
    let children = sub.children().unwrap_or_default();
    for (index, child) in children.iter().enumerate() {
        write_node(
            f,
            child,
            &child_prefix,
            index + 1 == children.len(),
            widths,
            true,
        )?;
    }
    Ok(())
}

/// Why a subscore has its value, in a few words, from its info: an error, a timeout, an exit
/// code, or else the info itself (without `_parameters`).
fn reason(info: &Info) -> Option<String> {
    if let Some(error) = info.get("error") {
        return Some(format!(
            "error: {}",
            one_line(&text_of(error), REASON_CHARS)
        ));
    }
    if info.get("timed_out") == Some(&Value::Bool(true)) {
        let after = info
            .get("timeout")
            .map(|timeout| format!(" after {}s", text_of(timeout)))
            .unwrap_or_default();
        return Some(format!("timed out{after}"));
    }
    if let Some(code) = info.get("exit_code").filter(|code| !code.is_null()) {
        let mut text = format!("exit code {}", text_of(code));
        if code.as_i64() != Some(0)
            && let Some(line) = ["stderr", "stdout"]
                .iter()
                .find_map(|stream| info.get(*stream).and_then(|out| last_line(&text_of(out))))
        {
            let _ = write!(text, ": {}", one_line(&line, REASON_CHARS));
        }
        return Some(text);
    }
    let rest: Info = info
        .iter()
        .filter(|(key, _)| *key != PARAMETERS_KEY)
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    if rest.is_empty() {
        return None;
    }
    Some(one_line(&Value::Object(rest).to_string(), REASON_CHARS))
}

/// The last line of a command's output that is not blank or a rule (`----`, `====`): where
/// test runners put their summary (`FAILED (failures=1)`, `1 failed in 0.12s`).
fn last_line(output: &str) -> Option<String> {
    output
        .lines()
        .map(str::trim)
        .rev()
        .find(|line| line.chars().any(char::is_alphanumeric))
        .map(str::to_owned)
}

/// A JSON value as text: strings without their quotes.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `text` on one line, cut to `max` characters with `…`.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Grade;

    fn info(pairs: &[(&str, Value)]) -> Info {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn lines_show_name_weight_value_and_reason() {
        let result = Grade::from_subscores(vec![
            SubScore::new("tests", 0.0)
                .expect("valid")
                .with_info(info(&[
                    ("exit_code", Value::from(1)),
                    ("stdout", Value::from("F.\n=====\n1 failed in 0.1s\n\n")),
                    ("stderr", Value::from("")),
                    ("_parameters", serde_json::json!({"command": "pytest"})),
                ])),
            SubScore::new("slow", 0.0).expect("valid").with_info(info(&[
                ("timed_out", Value::Bool(true)),
                ("timeout", Value::from(2.5)),
            ])),
        ])
        .expect("combinable");
        let text = result.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "reward 0.0000");
        assert_eq!(
            lines[1],
            "├─ tests  weight  0.5000  value 0.0000  exit code 1: 1 failed in 0.1s"
        );
        assert_eq!(
            lines[2],
            "└─ slow   weight  0.5000  value 0.0000  timed out after 2.5s"
        );
        assert!(!text.contains("parameters"));
        let verbose = format!("{result:#}");
        assert!(verbose.contains(r#"│     parameters {"command":"pytest"}"#));
    }

    #[test]
    fn a_passing_command_shows_only_its_exit_code_and_an_unfired_penalty_nothing() {
        let passed = SubScore::new("tests", 1.0)
            .expect("valid")
            .with_info(info(&[
                ("exit_code", Value::from(0)),
                ("stderr", Value::from("----\nRan 2 tests\n\nOK\n")),
            ]));
        assert!(
            passed
                .to_string()
                .trim_end()
                .ends_with("value 1.0000  exit code 0")
        );
        let unfired = SubScore::new("tampered", 0.0)
            .and_then(|s| s.with_weight(-1.0))
            .expect("valid");
        assert!(!unfired.to_string().contains("penalty"));
        let failed_to_stderr = SubScore::new("tests", 0.0)
            .expect("valid")
            .with_info(info(&[
                ("exit_code", Value::from(1)),
                ("stdout", Value::from("partial")),
                (
                    "stderr",
                    Value::from("Ran 2 tests\n\nFAILED (failures=1)\n"),
                ),
            ]));
        assert!(
            failed_to_stderr
                .to_string()
                .contains("exit code 1: FAILED (failures=1)")
        );
    }

    #[test]
    fn long_or_multiline_reasons_are_cut_to_one_line() {
        let long = "x".repeat(200);
        let sub = SubScore::new("judge", 0.5)
            .expect("valid")
            .with_info(info(&[("error", Value::from(format!("bad\n{long}")))]));
        let line = sub.to_string();
        assert_eq!(line.lines().count(), 1);
        assert!(line.contains("error: bad x"));
        assert!(line.trim_end().ends_with('…'));
    }
}
