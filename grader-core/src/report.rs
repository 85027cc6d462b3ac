//! A readable breakdown of a grade, for a terminal: `Display` for [`EvaluationResult`] and
//! [`SubScore`].
//!
//! Each subscore is a line of a tree with its name, weight, value, its contribution to the
//! reward, and a short reason taken from its info (an error, why it was skipped, which stage of
//! a cascade decided, a timeout, an exit code, or the info itself). The alternate form (`{:#}`)
//! also shows each grader's `_parameters`.
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
//!
//! The report is safe to print whatever the result holds, since names, info and command output
//! come from the agent's world:
//! - No control character reaches the terminal: tabs and line breaks inside a text become
//!   spaces, colour and cursor sequences (`ESC [` … a final letter) are dropped so that a test
//!   runner's coloured summary reads as plain text, and every other C0 or C1 control,
//!   `DEL`, and every bidirectional mark, embedding, override or isolate (U+061C, U+200E,
//!   U+200F, U+202A–U+202E, U+2066–U+2069) becomes `�`. The only control character written is
//!   the `\n` ending each line, so no text can forge a line of the report.
//! - Its size is bounded by a small multiple of the result's JSON: a name shows at most
//!   48 characters and a reason 72, each cut with `…`; the tree is drawn 8 levels deep, and
//!   below that one line counts the subscores not shown; numbers of 100 000 or more are written
//!   in scientific notation.
//! - Nothing in it panics.

use std::borrow::Cow;
use std::fmt::{self, Display, Formatter, Write as _};

use serde::Serialize;
use serde_json::Value;

use crate::node::SKIPPED_KEY;
use crate::params::PARAMETERS_KEY;
use crate::score::{EvaluationResult, Info, SubScore};

/// The longest reason shown on a line, in characters; longer ones are cut with `…`.
const REASON_CHARS: usize = 72;
/// The longest name shown, in characters; longer ones are cut with `…`.
const NAME_CHARS: usize = 48;
/// How many levels of subscores are drawn; deeper ones are counted on one line.
const MAX_DEPTH: usize = 8;
/// The indentation each level adds, in characters.
const INDENT: usize = 3;

impl Display for EvaluationResult {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "reward {}", Number(self.reward()))?;
        if self.is_error {
            f.write_str("  (evaluation error)")?;
        }
        if let Some(content) = &self.content {
            write!(f, "  {}", clean(content, REASON_CHARS))?;
        }
        f.write_char('\n')?;
        let subscores = self.subscores.as_deref().unwrap_or_default();
        let width = name_width(subscores, 1);
        let mut prefix = String::new();
        for (index, sub) in subscores.iter().enumerate() {
            let last = index + 1 == subscores.len();
            write_node(f, sub, &mut prefix, Some(last), width, 1)?;
        }
        Ok(())
    }
}

impl Display for SubScore {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let width = name_width(std::slice::from_ref(self), 0);
        write_node(f, self, &mut String::new(), None, width, 0)
    }
}

/// The width of the name column: the widest drawn name plus its indentation.
fn name_width(subscores: &[SubScore], depth: usize) -> usize {
    let mut width = 0;
    for sub in subscores {
        width = width.max(clean(sub.name(), NAME_CHARS).chars().count() + INDENT * depth);
        if depth < MAX_DEPTH
            && let Some(children) = sub.children()
        {
            width = width.max(name_width(children, depth + 1));
        }
    }
    width
}

/// Writes `sub`'s line and its children's. `branch` is `Some(is_last_sibling)` for a node drawn
/// as a branch of the tree, `None` for a root drawn alone; `depth` counts the levels drawn so
/// far, and `prefix` holds the indentation drawn for them (restored before returning).
fn write_node(
    f: &mut Formatter<'_>,
    sub: &SubScore,
    prefix: &mut String,
    branch: Option<bool>,
    width: usize,
    depth: usize,
) -> fmt::Result {
    let name = clean(sub.name(), NAME_CHARS);
    f.write_str(prefix)?;
    f.write_str(match branch {
        None => "",
        Some(true) => "└─ ",
        Some(false) => "├─ ",
    })?;
    f.write_str(&name)?;
    let drawn = INDENT * depth + name.chars().count();
    pad(f, width.saturating_sub(drawn))?;
    write!(
        f,
        "  weight {:>7}  value {}",
        Number(sub.weight()),
        Number(sub.value())
    )?;
    if sub.weight() < 0.0 && sub.value() > 0.0 {
        write!(f, "  penalty {}", Number(sub.weight() * sub.value()))?;
    }
    if let Some(reason) = sub.info().and_then(reason) {
        write!(f, "  {reason}")?;
    }
    f.write_char('\n')?;

    let before = prefix.len();
    match branch {
        None => {}
        Some(true) => prefix.push_str("   "),
        Some(false) => prefix.push_str("│  "),
    }
    if f.alternate()
        && let Some(params) = sub.info().and_then(|info| info.get(PARAMETERS_KEY))
        && params.as_object().is_some_and(|p| !p.is_empty())
    {
        writeln!(
            f,
            "{prefix}   parameters {}",
            clean(&json_head(params), REASON_CHARS * 2)
        )?;
    }
    let children = sub.children().unwrap_or_default();
    if !children.is_empty() && depth >= MAX_DEPTH {
        let hidden = count(children);
        let plural = if hidden == 1 { "" } else { "s" };
        writeln!(f, "{prefix}└─ … {hidden} deeper subscore{plural} not shown")?;
    } else {
        for (index, child) in children.iter().enumerate() {
            let last = index + 1 == children.len();
            write_node(f, child, prefix, Some(last), width, depth + 1)?;
        }
    }
    prefix.truncate(before);
    Ok(())
}

/// `count` spaces.
fn pad(f: &mut Formatter<'_>, mut count: usize) -> fmt::Result {
    const SPACES: &str = "                                                                ";
    while count > 0 {
        let now = count.min(SPACES.len());
        f.write_str(&SPACES[..now])?;
        count -= now;
    }
    Ok(())
}

/// How many subscores there are in these trees, counted without recursion (a tree built in
/// code can be deeper than the stack).
fn count(subscores: &[SubScore]) -> usize {
    let mut total = 0;
    let mut pending = vec![subscores];
    while let Some(level) = pending.pop() {
        total += level.len();
        pending.extend(level.iter().filter_map(SubScore::children));
    }
    total
}

/// A number for the report: four decimals, or scientific notation from 100 000 on, so that a
/// huge weight is a few characters, not hundreds.
struct Number(f64);

impl Display for Number {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x.abs() >= 1e5 {
            return f.pad(&format!("{x:.3e}"));
        }
        let scaled = x * 1e4;
        if scaled.fract() != 0.0 {
            return f.pad(&format!("{x:.4}"));
        }
        // A whole number of ten-thousandths (0, 1, 0.5, 0.25, …: most weights and values):
        // written from the integer, which is what `{:.4}` gives (the product is within an ulp
        // of an integer below 1e9, far from a rounding tie) without its slow exact path.
        let units = scaled.abs() as u64; // below 1e9: exact
        let sign = if x.is_sign_negative() { "-" } else { "" };
        let mut text = String::with_capacity(16);
        let _ = write!(text, "{sign}{}.{:04}", units / 10_000, units % 10_000);
        f.pad(&text)
    }
}

/// Why `sub` has its value, in a few words, as the readable report writes it after the
/// subscore's value: an error, why it was skipped, which stage of a cascade decided, a timeout
/// (`timed out after 10s`), an exit code with the last line of the command's output, or else the
/// start of its info. At most 72 characters, on one line, with control and bidirectional
/// characters replaced; `None` when its info says nothing (or it has none).
///
/// ```
/// use grader_core::{SubScore, info_from_value};
/// use grader_core::report::subscore_reason;
///
/// let info = info_from_value(serde_json::json!({"exit_code": null, "timed_out": true, "timeout": 10}))?;
/// let sub = SubScore::new("tests", 0.0)?.with_info(info);
/// assert_eq!(subscore_reason(&sub).as_deref(), Some("timed out after 10s"));
/// assert_eq!(subscore_reason(&SubScore::new("bare", 1.0)?), None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn subscore_reason(sub: &SubScore) -> Option<String> {
    sub.info().and_then(reason)
}

/// Why a subscore has its value, in a few words, from its info: an error, why it was skipped,
/// which stage of a cascade decided, a timeout, an exit code, or else the info itself (without
/// `_parameters`).
fn reason(info: &Info) -> Option<String> {
    // One pass over the keys (an info has a handful) instead of a hashed lookup for each.
    let (mut error, mut skipped, mut decided_by) = (None, None, None);
    let (mut timed_out, mut timeout, mut exit_code, mut stdout, mut stderr) =
        (false, None, None, None, None);
    for (key, value) in info {
        match key.as_str() {
            "error" => error = Some(value),
            SKIPPED_KEY => skipped = Some(value),
            "decided_by" => decided_by = Some(value),
            "timed_out" => timed_out = value == &Value::Bool(true),
            "timeout" => timeout = Some(value),
            "exit_code" => exit_code = Some(value).filter(|code| !code.is_null()),
            "stdout" => stdout = value.as_str(),
            "stderr" => stderr = value.as_str(),
            _ => {}
        }
    }
    if let Some(error) = error {
        return Some(format!("error: {}", clean(&text_of(error), REASON_CHARS)));
    }
    if let Some(why) = skipped {
        return Some(format!("skipped: {}", clean(&text_of(why), REASON_CHARS)));
    }
    if let Some(stage) = decided_by {
        return Some(match stage {
            Value::Null => "no stage decided".to_owned(),
            stage => format!("decided by {}", clean(&text_of(stage), NAME_CHARS)),
        });
    }
    if timed_out {
        let after = timeout
            .map(|timeout| format!(" after {}s", clean(&text_of(timeout), 32)))
            .unwrap_or_default();
        return Some(format!("timed out{after}"));
    }
    if let Some(code) = exit_code {
        let mut text = format!("exit code {}", clean(&text_of(code), 32));
        if code.as_i64() != Some(0)
            && let Some(line) = stderr
                .and_then(last_line)
                .or_else(|| stdout.and_then(last_line))
        {
            let _ = write!(text, ": {}", clean(line, REASON_CHARS));
        }
        return Some(text);
    }
    if info.keys().all(|key| key == PARAMETERS_KEY) {
        return None;
    }
    /// The info without `_parameters`, serialized in place (no copy of the info is made).
    struct WithoutParameters<'a>(&'a Info);

    impl Serialize for WithoutParameters<'_> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_map(self.0.iter().filter(|(key, _)| *key != PARAMETERS_KEY))
        }
    }
    Some(clean(&json_head(&WithoutParameters(info)), REASON_CHARS).into_owned())
}

/// The last line of a command's output that is not blank or a rule (`----`, `====`): where
/// test runners put their summary (`FAILED (failures=1)`, `1 failed in 0.12s`).
fn last_line(output: &str) -> Option<&str> {
    output
        .lines()
        .map(str::trim)
        .rev()
        .find(|line| line.chars().any(char::is_alphanumeric))
}

/// A JSON value as text: strings without their quotes, anything else as (the start of) its
/// JSON.
fn text_of(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(text) => text.as_str().into(),
        other => json_head(other).into(),
    }
}

/// The start of `value`'s JSON: enough for any text the report shows (more than the longest
/// cut, in bytes), without serializing, say, megabytes of output.
fn json_head<T: Serialize + ?Sized>(value: &T) -> String {
    /// Collects bytes up to a limit, then refuses more, which stops the serializer.
    struct Head(Vec<u8>);

    impl std::io::Write for Head {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let room = HEAD_BYTES - self.0.len();
            if room == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            let now = bytes.len().min(room);
            self.0.extend_from_slice(&bytes[..now]);
            Ok(now)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    const HEAD_BYTES: usize = 4 * (2 * REASON_CHARS + 1);

    let mut head = Head(Vec::new());
    // An error here means the limit was reached (what was written is kept), or the value has
    // no JSON form, which a `Value` always has.
    let _ = serde_json::to_writer(&mut head, value);
    match String::from_utf8(head.0) {
        Ok(text) => text,
        // Cut inside a character at the limit, far past what any line shows.
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    }
}

/// `text` made safe to print on one line and cut to `max` characters with `…`.
///
/// Line breaks, tabs and other spacing controls become spaces; colour and cursor sequences
/// (`ESC [` … a final byte) are dropped; every other control character (C0, `DEL`, C1) and
/// every bidirectional formatting character becomes `�`. Only the first `max` characters of
/// `text` are looked at, so a megabyte of output costs no more than a line.
pub(crate) fn clean(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max && text.bytes().all(|byte| (b' '..=b'~').contains(&byte)) {
        return Cow::Borrowed(text); // printable ASCII that fits: nothing to do
    }
    let mut out = String::with_capacity(text.len().min(4 * max));
    let mut shown = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            // A CSI sequence: parameters 0x30–0x3F, intermediates 0x20–0x2F, a final byte
            // 0x40–0x7E. Drop it if it is complete; otherwise show the ESC as `�`.
            let mut rest = chars.clone();
            rest.next();
            while rest
                .next_if(|c| ('\u{30}'..='\u{3f}').contains(c))
                .is_some()
            {}
            while rest
                .next_if(|c| ('\u{20}'..='\u{2f}').contains(c))
                .is_some()
            {}
            if rest
                .next_if(|c| ('\u{40}'..='\u{7e}').contains(c))
                .is_some()
            {
                chars = rest;
                continue;
            }
        }
        if shown == max {
            // One more character than fits: replace the last one shown by `…`.
            out.pop();
            out.push('…');
            return Cow::Owned(out);
        }
        out.push(safe_char(c));
        shown += 1;
    }
    Cow::Owned(out)
}

/// `c`, or what the report shows instead of it (see [`clean`]).
fn safe_char(c: char) -> char {
    match c {
        '\t' | '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}' => ' ',
        c if c.is_control() || is_bidi_control(c) => '\u{fffd}',
        c => c,
    }
}

/// Whether `c` is a Unicode bidirectional formatting character (a mark, an embedding, an
/// override or an isolate: U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which
/// reorders how a terminal shows the text around it.
#[must_use]
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character that could act on a terminal written as a visible escape
/// (`\u{1b}`): control characters, line breaks too unless `keep_newlines` (then `\n` stays),
/// and the [bidirectional formatting characters](is_bidi_control). Unlike the report, which
/// shows a placeholder, the escape says which character it was. Borrowed when nothing needs it.
///
/// ```
/// use grader_core::report::escape_controls;
///
/// assert_eq!(escape_controls("tests\nnow passing", false), "tests\\u{a}now passing");
/// assert_eq!(escape_controls("a\u{202e}b\nc\x1b[2J", true), "a\\u{202e}b\nc\\u{1b}[2J");
/// ```
#[must_use]
pub fn escape_controls(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    let acts = |c: char| (c != '\n' || !keep_newlines) && (c.is_control() || is_bidi_control(c));
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut safe = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts(c) {
            safe.extend(c.escape_unicode());
        } else {
            safe.push(c);
        }
    }
    Cow::Owned(safe)
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

    proptest::proptest! {
        #[test]
        fn numbers_are_written_as_four_decimals_would_write_them(
            x in -1e5..1e5_f64,
            units in -999_999_999_i64..999_999_999,
        ) {
            proptest::prop_assert_eq!(Number(x).to_string(), format!("{x:.4}"));
            // Whole ten-thousandths and their neighbours: the integer path and its edges.
            let y = units as f64 / 1e4;
            for z in [y, y.next_up(), y.next_down()] {
                proptest::prop_assert_eq!(Number(z).to_string(), format!("{z:.4}"));
            }
        }
    }

    #[test]
    fn numbers_of_every_kind_are_short() {
        for (x, text) in [
            (0.0, "0.0000"),
            (-0.0, "-0.0000"),
            (1.0, "1.0000"),
            (-0.1, "-0.1000"),
            (1.0 / 3.0, "0.3333"),
            (0.00005, "0.0001"),
            (99_999.999_99, "100000.0000"),
            (1e5, "1.000e5"),
            (-1e300, "-1.000e300"),
            (f64::MAX, "1.798e308"),
        ] {
            assert_eq!(Number(x).to_string(), text, "{x:e}");
        }
        assert_eq!(format!("[{:>9}]", Number(0.5)), "[   0.5000]");
    }

    #[test]
    fn skipped_subscores_and_cascades_say_why_in_words() {
        let skipped = SubScore::new("review", 0.0)
            .expect("valid")
            .with_info(info(&[(
                SKIPPED_KEY,
                Value::from("an earlier stage decided"),
            )]));
        assert!(
            skipped
                .to_string()
                .ends_with("value 0.0000  skipped: an earlier stage decided\n")
        );
        let decided = |stage: Value| {
            SubScore::new("answer", 1.0)
                .expect("valid")
                .with_info(info(&[("decided_by", stage), ("stages", Value::Null)]))
                .to_string()
        };
        assert!(decided(Value::from("exact_match")).ends_with("  decided by exact_match\n"));
        assert!(decided(Value::Null).ends_with("  no stage decided\n"));
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
