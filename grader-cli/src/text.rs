//! Text from result files made safe for a terminal, and the few colours the output uses.

use anstyle::{AnsiColor, Style};
use grader_core::report::escape_controls;

/// `text` with every character that could act on a terminal replaced by a visible escape such
/// as `\u{1b}`: control characters (except the newline), and the bidirectional overrides and
/// isolates that reorder what is shown.
///
/// ```
/// use grader_cli::text::terminal_safe;
///
/// assert_eq!(terminal_safe("ok\x1b[31m red"), "ok\\u{1b}[31m red");
/// assert_eq!(terminal_safe("a\u{202e}b\nc"), "a\\u{202e}b\nc");
/// ```
#[must_use]
pub fn terminal_safe(text: &str) -> String {
    escaped(text, true)
}

/// `text` as [`terminal_safe`] writes it, with its line breaks escaped too (`\u{a}`): for a
/// name, a sample id or a quoted value from a file, which must not start a line of its own
/// that reads as the tool's.
///
/// ```
/// use grader_cli::text::one_line;
///
/// assert_eq!(one_line("tests\nnow passing"), "tests\\u{a}now passing");
/// assert_eq!(one_line("\x1b]0;title\x07"), "\\u{1b}]0;title\\u{7}");
/// ```
#[must_use]
pub fn one_line(text: &str) -> String {
    escaped(text, false)
}

/// `text` with the characters that could act on a terminal written as escapes, line breaks
/// kept when `keep_newlines`: grader-core's [`escape_controls`].
fn escaped(text: &str, keep_newlines: bool) -> String {
    escape_controls(text, keep_newlines).into_owned()
}

/// The style of a value in `[0, 1]`: green when full, red when zero, yellow between.
#[must_use]
pub fn value_style(value: f64) -> Style {
    let color = if value >= 1.0 {
        AnsiColor::Green
    } else if value <= 0.0 {
        AnsiColor::Red
    } else {
        AnsiColor::Yellow
    };
    Style::new().fg_color(Some(color.into()))
}

/// Bold, for headings.
pub const HEADING: Style = Style::new().bold();
/// Red, for errors.
pub const ERROR: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
/// Dim, for secondary details.
pub const DIM: Style = Style::new().dimmed();

/// `text` in `style` when `color` is on, else as it is.
#[must_use]
pub fn paint(text: &str, style: Style, color: bool) -> String {
    if color {
        format!("{style}{text}{style:#}")
    } else {
        text.to_owned()
    }
}

/// A number as a person writes it, with a true minus sign: `0.7`, `−0.5`.
///
/// ```
/// assert_eq!(grader_cli::text::signed(-0.5), "−0.5");
/// assert_eq!(grader_cli::text::signed(0.7), "0.7");
/// ```
#[must_use]
pub fn signed(number: f64) -> String {
    true_minus(format!("{number}"))
}

/// A number with four decimals and a true minus sign: `0.3500`, `−0.5000`.
///
/// ```
/// assert_eq!(grader_cli::text::signed_fixed(-0.5), "−0.5000");
/// ```
#[must_use]
pub fn signed_fixed(number: f64) -> String {
    true_minus(format!("{number:.4}"))
}

fn true_minus(text: String) -> String {
    match text.strip_prefix('-') {
        Some(rest) => format!("−{rest}"),
        None => text,
    }
}
