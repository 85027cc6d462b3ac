//! Text from result files made safe for a terminal (and JSON written for one), and the few
//! colours the output uses.

use anstyle::{AnsiColor, Style};
use grader_core::report::escape_controls;
use serde_json::ser::{Formatter, PrettyFormatter};

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

/// Writes `value` as pretty JSON that is safe for a terminal: as `serde_json` writes it
/// (control characters below U+0020 escaped, as JSON requires), and also every other control
/// character (DEL and the C1 controls U+007F–U+009F, which terminals act on: U+009B is the
/// escape sequence introducer) and the bidirectional formatting characters (U+202E reorders
/// what follows) written as `\uXXXX` escapes. The JSON means the same: a reader gets the same
/// strings back.
///
/// ```
/// let mut out = Vec::new();
/// grader_cli::text::write_json(&mut out, &serde_json::json!({"id": "a\u{9b}2J\u{202e}b"}))?;
/// assert_eq!(String::from_utf8(out)?, "{\n  \"id\": \"a\\u009b2J\\u202eb\"\n}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// When writing fails, or `value` cannot be written as JSON.
pub fn write_json<T: serde::Serialize + ?Sized>(
    out: &mut dyn std::io::Write,
    value: &T,
) -> serde_json::Result<()> {
    let mut serializer =
        serde_json::Serializer::with_formatter(out, SafeFormatter(PrettyFormatter::new()));
    value.serialize(&mut serializer)
}

/// serde_json's pretty formatter, with every character that could act on a terminal escaped in
/// strings ([`write_json`]).
struct SafeFormatter<'a>(PrettyFormatter<'a>);

/// Whether `c` is written as a `\uXXXX` escape beyond what JSON requires.
fn escaped_in_json(c: char) -> bool {
    c.is_control() || grader_core::report::is_bidi_control(c)
}

impl Formatter for SafeFormatter<'_> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if escaped_in_json(c) {
                writer.write_all(&fragment.as_bytes()[start..at])?;
                // Every such character is in the Basic Multilingual Plane: one escape.
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = at + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        self.0.end_object_value(writer)
    }
}
