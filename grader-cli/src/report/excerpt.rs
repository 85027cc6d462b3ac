//! The excerpting of long texts: a text a grader recorded (a command's output, a judge's
//! reason) is shown whole when short, else its first and last lines with what lies between
//! counted. `grader export` cuts texts the same way.

/// Lines kept at each end of a long text.
pub const KEEP_LINES: usize = 20;

/// Bytes kept at each end of a long text, at most (a text of very long lines is cut within a
/// line).
pub const KEEP_BYTES: usize = 2000;

/// A text as a page shows it: whole when short, else its first and last lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt<'a> {
    /// The beginning (the whole text when nothing is left out).
    pub head: &'a str,
    /// The end; empty when nothing is left out.
    pub tail: &'a str,
    /// Lines left out between the two (newlines in the part left out).
    pub lines_left_out: usize,
    /// Bytes left out between the two.
    pub bytes_left_out: usize,
}

/// Cuts `text` for the page: a text of at most `2 × KEEP_LINES + 1` lines and
/// `2 × KEEP_BYTES` bytes is kept whole; a longer one keeps its first [`KEEP_LINES`] lines and
/// its last [`KEEP_LINES`] lines (each end at most [`KEEP_BYTES`] bytes, cut on a character
/// boundary), and counts what lies between.
///
/// ```
/// use grader_cli::report::{KEEP_LINES, excerpt};
///
/// assert_eq!(excerpt("OK\n").head, "OK\n");
/// let log: String = (1..=100).map(|n| format!("line {n}\n")).collect();
/// let cut = excerpt(&log);
/// assert!(cut.head.starts_with("line 1\n") && cut.head.ends_with("line 20\n"));
/// assert!(cut.tail.starts_with("line 81\n") && cut.tail.ends_with("line 100\n"));
/// assert_eq!(cut.lines_left_out, 100 - 2 * KEEP_LINES);
/// assert_eq!(cut.head.len() + cut.bytes_left_out + cut.tail.len(), log.len());
/// ```
#[must_use]
pub fn excerpt(text: &str) -> Excerpt<'_> {
    let whole = Excerpt {
        head: text,
        tail: "",
        lines_left_out: 0,
        bytes_left_out: 0,
    };
    let body = text.strip_suffix('\n').unwrap_or(text);
    let newlines = memchr::memchr_iter(b'\n', body.as_bytes()).count();
    if newlines <= 2 * KEEP_LINES && text.len() <= 2 * KEEP_BYTES {
        return whole;
    }
    // The head ends after its KEEP_LINES-th newline, or at KEEP_BYTES.
    let head_end = memchr::memchr_iter(b'\n', text.as_bytes())
        .nth(KEEP_LINES - 1)
        .map_or(text.len(), |at| at + 1);
    let head_end = floor_boundary(text, head_end.min(KEEP_BYTES));
    // The tail starts after the newline that precedes its first line, or KEEP_BYTES from the
    // end.
    let tail_start = memchr::memrchr_iter(b'\n', body.as_bytes())
        .nth(KEEP_LINES - 1)
        .map_or(0, |at| at + 1);
    let tail_start = ceil_boundary(text, tail_start.max(text.len().saturating_sub(KEEP_BYTES)));
    if tail_start <= head_end {
        return whole;
    }
    let middle = &text[head_end..tail_start];
    Excerpt {
        head: &text[..head_end],
        tail: &text[tail_start..],
        lines_left_out: memchr::memchr_iter(b'\n', middle.as_bytes()).count(),
        bytes_left_out: middle.len(),
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}
