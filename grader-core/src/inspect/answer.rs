//! Inspect AI's `answer` scorer (`inspect_ai/scorer/_answer.py`): the answer after the last
//! `ANSWER:` of the completion, as a letter, a word or the rest of the line.
//!
//! Inspect reads it with three regular expressions (`inspect_ai/_util/pattern.py`) whose
//! lookarounds the `regex` crate does not support; they are hand-written scanners here, linear
//! in the completion, with the matches Python's `re.search` finds.

use serde::{Deserialize, Serialize};

use super::pattern_match::{PatternOptions, score_groups};
use super::{Reason, Verdict, is_no_response};
use crate::text::pychar::{is_space, is_word};

/// What [`answer`] extracts after `ANSWER:`: Inspect's `AnswerPattern`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnswerKind {
    /// One letter, followed by a non-word character or the end (multiple choice).
    Letter,
    /// The shortest run of non-space characters followed by an optional `.,;:!?`, spaces and a
    /// line break or the end (yes/no answers).
    Word,
    /// The rest of the line, which must be the last line with anything on it.
    Line,
}

impl AnswerKind {
    /// Inspect's regular expression for this kind (`ANSWER_PATTERN_*`), for reference.
    #[must_use]
    pub const fn python_pattern(self) -> &'static str {
        match self {
            AnswerKind::Letter => r"(?is)ANSWER\s*:\s*([A-Za-z])(?:[^\w]|\n|$)(?!.*ANSWER\s*:)",
            AnswerKind::Word => r"(?is)ANSWER\s*:\s*(\S+?)(?=[.,;:!?]?\s*(?:\n|$))(?!.*ANSWER\s*:)",
            AnswerKind::Line => r"(?i)ANSWER\s*:\s*([^\n]+)\s*\Z",
        }
    }
}

/// Inspect's `answer(kind)` scorer: the extracted answer compared with each target, ignoring
/// case (compared with the targets as Inspect's `pattern` scorer compares groups).
///
/// ```
/// use grader_core::inspect::{AnswerKind, answer};
///
/// let completion = "Let me think... ANSWER: C\nwait, no.\nANSWER: B";
/// let verdict = answer(completion, &["B"], AnswerKind::Letter);
/// assert!(verdict.is_correct());
/// assert_eq!(verdict.answer.as_deref(), Some("B"));
/// assert!(answer("ANSWER: yes.", &["Yes"], AnswerKind::Word).is_correct());
/// assert!(answer("ANSWER: Paris, France", &["paris, france"], AnswerKind::Line).is_correct());
/// ```
pub fn answer<S: AsRef<str>>(completion: &str, targets: &[S], kind: AnswerKind) -> Verdict {
    let options = PatternOptions {
        ignore_case: true,
        match_all: false,
    };
    match extract_answer(completion, kind) {
        Some(found) => score_groups(completion, &[Some(found)], targets, options),
        None => Verdict {
            value: 0.0,
            answer: None,
            reason: Some(if is_no_response(completion) {
                Reason::NoResponse
            } else {
                Reason::InvalidResponseFormat
            }),
        },
    }
}

/// The group Inspect's `ANSWER_PATTERN_*` captures in `completion`, if it matches.
///
/// ```
/// use grader_core::inspect::{AnswerKind, extract_answer};
///
/// assert_eq!(extract_answer("answer : (d) because", AnswerKind::Letter), None);
/// assert_eq!(extract_answer("ANSWER: D) because", AnswerKind::Letter), Some("D"));
/// assert_eq!(extract_answer("ANSWER: no!\n", AnswerKind::Word), Some("no"));
/// assert_eq!(extract_answer("ANSWER: 3 cats\n\n", AnswerKind::Line), Some("3 cats"));
/// ```
#[must_use]
pub fn extract_answer(completion: &str, kind: AnswerKind) -> Option<&str> {
    let occurrences = Occurrences::find(completion);
    match kind {
        AnswerKind::Letter => letter(completion, &occurrences),
        AnswerKind::Word => word(completion, &occurrences),
        AnswerKind::Line => line(completion, &occurrences),
    }
}

/// Where `ANSWER\s*:` matches, ignoring case as Python does (`ſ` is an `s`).
struct Occurrences {
    /// `(start, after)`: the byte where `ANSWER` starts and the byte after its `:`.
    found: Vec<(usize, usize)>,
}

impl Occurrences {
    fn find(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut found = Vec::new();
        let mut at = 0;
        // `ANSWER` starts with an `a` of either case, which has no other case variant.
        while let Some(offset) = bytes[at..].iter().position(|&b| b | 0x20 == b'a') {
            at += offset;
            match matches_answer(text, at) {
                Some(after) => {
                    found.push((at, after));
                    at = after;
                }
                None => at += 1,
            }
        }
        Self { found }
    }

    /// The start of the last occurrence.
    fn last_start(&self) -> Option<usize> {
        self.found.last().map(|&(start, _)| start)
    }
}

/// Whether `ANSWER\s*:` matches at byte `at` of `text` (a character boundary or not), and where
/// it ends.
fn matches_answer(text: &str, at: usize) -> Option<usize> {
    let rest = text.get(at..)?;
    let mut chars = rest.char_indices();
    for expected in ['a', 'n', 's', 'w', 'e', 'r'] {
        let (_, c) = chars.next()?;
        let same = c.to_ascii_lowercase() == expected || (expected == 's' && c == '\u{17F}');
        if !same {
            return None;
        }
    }
    for (i, c) in chars {
        if c == ':' {
            return Some(at + i + 1);
        }
        if !is_space(c) {
            return None;
        }
    }
    None
}

/// The first byte at or after `from` that is not a space (or the end).
fn skip_spaces(text: &str, from: usize) -> usize {
    text[from..]
        .find(|c: char| !is_space(c))
        .map_or(text.len(), |i| from + i)
}

/// `ANSWER_PATTERN_LETTER`: only the last occurrence can match (the lookahead forbids a later
/// one, and a letter followed by a word character fails).
fn letter<'a>(text: &'a str, occurrences: &Occurrences) -> Option<&'a str> {
    let &(_, after) = occurrences.found.last()?;
    let start = skip_spaces(text, after);
    let c = text[start..].chars().next()?;
    let is_letter =
        c.is_ascii_alphabetic() || matches!(c, '\u{130}' | '\u{131}' | '\u{17F}' | '\u{212A}');
    let end = start + c.len_utf8();
    let followed = text[end..].chars().next().is_none_or(|next| !is_word(next));
    (is_letter && followed).then(|| &text[start..end])
}

/// Whether the lookahead `[.,;:!?]?\s*(?:\n|$)` holds at byte `at`.
fn ends_word(text: &str, at: usize) -> bool {
    let tail_ok = |from: usize| {
        let spaces = text[from..]
            .find(|c: char| !is_space(c))
            .map_or(text.len(), |i| from + i);
        spaces == text.len() || text[from..spaces].contains('\n')
    };
    if tail_ok(at) {
        return true;
    }
    match text[at..].chars().next() {
        Some(c @ ('.' | ',' | ';' | ':' | '!' | '?')) => tail_ok(at + c.len_utf8()),
        _ => false,
    }
}

/// `ANSWER_PATTERN_WORD`: the lazy `\S+?` ends at the first place where the line ends after an
/// optional punctuation mark and no `ANSWER\s*:` follows.
fn word<'a>(text: &'a str, occurrences: &Occurrences) -> Option<&'a str> {
    let last = occurrences.last_start()?;
    // Occurrences whose word runs into the last one all see the same ends: one scan decides.
    let mut failed_run_end = None;
    for &(_, after) in &occurrences.found {
        let start = skip_spaces(text, after);
        let run_end = text[start..]
            .find(is_space)
            .map_or(text.len(), |i| start + i);
        if run_end <= start || run_end <= last || failed_run_end == Some(run_end) && start <= last {
            continue;
        }
        let mut ends = text[start..run_end]
            .char_indices()
            .map(|(i, c)| start + i + c.len_utf8())
            .filter(|&end| end > last);
        if let Some(end) = ends.find(|&end| ends_word(text, end)) {
            return Some(&text[start..end]);
        }
        if start <= last {
            failed_run_end = Some(run_end);
        }
    }
    None
}

/// `ANSWER_PATTERN_LINE`: the first occurrence whose answer starts on the last line with
/// anything on it, or, when only spaces follow, the last character that is not a line break.
fn line<'a>(text: &'a str, occurrences: &Occurrences) -> Option<&'a str> {
    let last_content = text.rfind(|c: char| !is_space(c));
    let last_line_start = last_content.map(|i| text[..i].rfind('\n').map_or(0, |n| n + 1));
    for &(_, after) in &occurrences.found {
        let start = skip_spaces(text, after);
        if start == text.len() {
            let (i, c) = text[after..]
                .char_indices()
                .rev()
                .find(|&(_, c)| c != '\n')?;
            return Some(&text[after + i..after + i + c.len_utf8()]);
        }
        if last_line_start.is_some_and(|line_start| start >= line_start) {
            let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
            return Some(&text[start..end]);
        }
    }
    None
}
