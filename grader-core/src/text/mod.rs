//! Comparing an agent's answer with a reference answer: [`normalize`], [`exact_match`],
//! [`contains`], [`contains_any`], [`contains_all`], [`numeric_match`] and [`f1_score`].
//!
//! Each returns the score the reference's `hud.graders` function of the same name returns for
//! the same strings, non-ASCII text included. Where the reference takes a keyword option, the
//! `*_with` variant takes an options struct whose [`Default`] is the reference's default:
//!
//! ```
//! use grader_core::text::{self, ContainsOptions, ExactMatchOptions, NumericMatchOptions};
//!
//! assert_eq!(text::normalize("  The Answer is: 42! "), "answer is 42");
//! assert_eq!(text::exact_match("The Paris.", "paris"), 1.0);
//! let raw = ExactMatchOptions { normalize_text: false };
//! assert_eq!(text::exact_match_with("The Paris.", "paris", raw), 0.0);
//! assert_eq!(text::contains("Hello World", "WORLD"), 1.0);
//! let exact_case = ContainsOptions { case_sensitive: true };
//! assert_eq!(text::contains_with("Hello World", "WORLD", exact_case), 0.0);
//! assert_eq!(text::numeric_match("about 3.14159", 3.14), 0.0);
//! let close = NumericMatchOptions { tolerance: 0.01 };
//! assert_eq!(text::numeric_match_with("about 3.14159", 3.14, close), 1.0);
//! assert_eq!(text::f1_score("The capital is Paris, France", "Paris"), 0.4);
//! ```
//!
//! The same comparisons are graders too ([`ExactMatch`], [`Contains`], [`ContainsAny`],
//! [`ContainsAll`], [`NumericMatch`], [`F1Score`]; see [`graders`]), recording their arguments
//! under `_parameters` like any grader.
//!
//! # Python's text semantics, exactly
//!
//! The reference works on Python `str`s with the `re` module, and so do these functions:
//!
//! - A word character is what `\w` matches in a Python `str` pattern: `str.isalnum()` or `_`.
//!   That counts superscripts and fractions (`²`, `½`) as word characters and combining marks
//!   (U+0301) as not, unlike the `regex` crate's `\w`. Whitespace is `str.isspace()`, which
//!   includes U+001C..U+001F, unlike [`char::is_whitespace`].
//! - Lowercasing is `str.lower()`: the full mapping (`İ` becomes `i` and U+0307, two
//!   characters) and the final-sigma rule (`ΟΔΟΣ` becomes `οδος`), which
//!   [`str::to_lowercase`] also applies but with the Unicode version of the compiler.
//! - A digit is any Unicode decimal digit, read by value: `numeric_match("٣", 3.0)` is 1.0.
//!
//! The character tables are read from CPython 3.11's own database (Unicode 14.0.0) by
//! `scripts/gen_text_tables.py`, not taken from Rust's standard library, whose Unicode version
//! moves with the compiler: a score does not change when the toolchain does. Python 3.12 and
//! later ship newer Unicode versions; they can differ from these tables only on characters
//! assigned after Unicode 14.0.
//!
//! # Cost
//!
//! No function compiles a pattern: the reference's regular expressions are hand-written
//! scanners here. [`normalize`] allocates its result; [`f1_score`] allocates the two normalized
//! texts with the positions of their words, and one map of token counts (hashed with
//! `foldhash`); the `contains` family allocates only to lowercase text that has uppercase
//! characters.

use std::collections::HashMap;
use std::ops::Range;

use foldhash::fast::RandomState;

#[cfg(feature = "macros")]
pub mod graders;
#[rustfmt::skip]
mod fold_tables;
pub mod pychar;
#[rustfmt::skip]
mod tables;

#[cfg(feature = "macros")]
pub use graders::{Contains, ContainsAll, ContainsAny, ExactMatch, F1Score, NumericMatch};

/// The Unicode version of the character tables: the one CPython 3.11 ships.
pub const UNICODE_VERSION: &str = tables::UNICODE_VERSION;

/// Options of [`exact_match_with`]; the default is the reference's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExactMatchOptions {
    /// Compare the [`normalize`]d texts (the default, `true`), or compare the texts trimmed and
    /// lowercased only (`false`), keeping punctuation and articles.
    pub normalize_text: bool,
}

impl Default for ExactMatchOptions {
    fn default() -> Self {
        Self {
            normalize_text: true,
        }
    }
}

/// Options of [`contains_with`], [`contains_any_with`] and [`contains_all_with`]; the default
/// is the reference's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ContainsOptions {
    /// Compare characters as written (`true`), or after lowercasing both sides as Python's
    /// `str.lower()` does (the default, `false`).
    pub case_sensitive: bool,
}

/// Options of [`numeric_match_with`]; the default is the reference's.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NumericMatchOptions {
    /// The largest accepted `|found - expected|` (default `0.0`: exactly equal).
    pub tolerance: f64,
}

fn score(matched: bool) -> f64 {
    if matched { 1.0 } else { 0.0 }
}

fn is_article(word: &[u8]) -> bool {
    matches!(word, b"a" | b"an" | b"the")
}

/// Normalizes text for comparison: lowercase, punctuation to spaces, the articles `a`, `an` and
/// `the` removed, runs of whitespace collapsed to one space, trimmed.
///
/// The reference's `normalize`: `str.lower()`, then `[^\w\s]` becomes a space, then
/// `\b(a|an|the)\b` (ignoring case) becomes a space, then `\s+` becomes one space, then
/// `strip()`, all with Python's character classes (see the [module docs](self)).
///
/// ```
/// use grader_core::text::normalize;
///
/// assert_eq!(normalize("  The Answer is: 42! "), "answer is 42");
/// assert_eq!(normalize("An apple, a day..."), "apple day");
/// assert_eq!(normalize("Theatre"), "theatre");
/// assert_eq!(normalize("ΟΔΟΣ İstanbul"), "οδος i stanbul"); // U+0307 is not a word char
/// ```
#[must_use]
pub fn normalize(text: &str) -> String {
    Words::read(text, false).out
}

/// The output of [`normalize`] as it is written: words joined by one space, each checked for
/// being an article when it ends, and optionally where each kept word is.
struct Words {
    out: String,
    /// Where the current word starts in `out`, and `out`'s length before its separator.
    word: Option<(usize, usize)>,
    /// Where each kept word is in `out`, when asked for.
    spans: Option<Vec<Range<usize>>>,
}

impl Words {
    /// Normalizes `text`, recording where its words are if `spans`.
    fn read(text: &str, spans: bool) -> Self {
        let mut words = Self {
            out: String::new(),
            word: None,
            spans: spans.then(Vec::new),
        };
        words.fill(text);
        words
    }

    /// Normalizes `text` into these buffers (whatever they held before is gone).
    fn fill(&mut self, text: &str) {
        self.out.clear();
        self.out.reserve(text.len());
        self.word = None;
        if let Some(spans) = &mut self.spans {
            spans.clear();
            // Room for the words of ordinary text (about one per four bytes or more), so
            // that the list rarely grows.
            spans.reserve(text.len() / 4 + 1);
        }
        let words = self;
        let bytes = text.as_bytes();
        let mut i = 0;
        while let Some(&byte) = bytes.get(i) {
            if byte.is_ascii() {
                if byte.is_ascii_alphanumeric() || byte == b'_' {
                    words.word_char(char::from(byte.to_ascii_lowercase()));
                } else {
                    words.separator();
                }
                i += 1;
            } else {
                let Some(c) = text[i..].chars().next() else {
                    break;
                };
                pychar::lower_non_ascii(text, i, c, |c| {
                    if pychar::is_word(c) {
                        words.word_char(c);
                    } else {
                        words.separator();
                    }
                });
                i += c.len_utf8();
            }
        }
        words.separator();
    }

    #[inline]
    fn word_char(&mut self, c: char) {
        if self.word.is_none() {
            let before = self.out.len();
            if before != 0 {
                self.out.push(' ');
            }
            self.word = Some((self.out.len(), before));
        }
        self.out.push(c);
    }

    #[inline]
    fn separator(&mut self) {
        if let Some((start, before)) = self.word.take() {
            if is_article(&self.out.as_bytes()[start..]) {
                self.out.truncate(before);
            } else if let Some(spans) = &mut self.spans {
                spans.push(start..self.out.len());
            }
        }
    }

    /// The words, in order.
    fn tokens(&self) -> impl Iterator<Item = &str> {
        self.spans
            .iter()
            .flatten()
            .map(|span| &self.out[span.clone()])
    }
}

/// Texts at most this long are kept with their words in [`RECENT`].
const RECENT_TEXT_BYTES: usize = 4096;

/// How many texts [`RECENT`] keeps.
const RECENT_TEXTS: usize = 4;

/// A text read into words, kept for the next comparison of the same text.
struct Recent {
    /// The text; `None` while its words are being read (so that an entry left half-read is
    /// never taken for a text's).
    text: Option<String>,
    words: Words,
    /// When it was last used, to let the longest unused go first.
    used: u64,
}

thread_local! {
    /// The texts this thread read into words last, with their words: the graders of one
    /// answer (an exact match and an F1 score, say) read it once, and each new text reuses the
    /// buffers of the one it replaces.
    static RECENT: std::cell::RefCell<(Vec<Recent>, u64)> =
        const { std::cell::RefCell::new((Vec::new(), 0)) };
}

/// `f` of the words of `a` and of `b` (with their spans), read once per thread for texts
/// compared again and again.
fn recent_words<R>(a: &str, b: &str, f: impl FnOnce(&Words, &Words) -> R) -> R {
    if a.len() > RECENT_TEXT_BYTES || b.len() > RECENT_TEXT_BYTES {
        return f(&Words::read(a, true), &Words::read(b, true));
    }
    let mut f = Some(f);
    let cached = RECENT.try_with(|recent| {
        let Ok(mut recent) = recent.try_borrow_mut() else {
            return None;
        };
        let (entries, clock) = &mut *recent;
        let ia = recent_entry(entries, clock, a, None);
        let ib = recent_entry(entries, clock, b, Some(ia));
        let f = f.take()?;
        Some(f(&entries[ia].words, &entries[ib].words))
    });
    match (cached, f) {
        (Ok(Some(result)), _) => result,
        // The cache is in use further up this thread's stack, or the thread is ending.
        (_, Some(f)) => f(&Words::read(a, true), &Words::read(b, true)),
        (_, None) => unreachable!("f is taken only where its result is returned"),
    }
}

/// The index in `entries` of `text`'s words, read now if they are not there (into a new
/// entry, or the longest unused one other than `keep`).
fn recent_entry(
    entries: &mut Vec<Recent>,
    clock: &mut u64,
    text: &str,
    keep: Option<usize>,
) -> usize {
    *clock += 1;
    if let Some(i) = entries.iter().position(|e| e.text.as_deref() == Some(text)) {
        entries[i].used = *clock;
        return i;
    }
    let i = if entries.len() < RECENT_TEXTS {
        entries.push(Recent {
            text: None,
            words: Words {
                out: String::new(),
                word: None,
                spans: Some(Vec::new()),
            },
            used: 0,
        });
        entries.len() - 1
    } else {
        (0..entries.len())
            .filter(|&i| Some(i) != keep)
            .min_by_key(|&i| entries[i].used)
            .unwrap_or(0)
    };
    let entry = &mut entries[i];
    let mut key = entry.text.take().unwrap_or_default();
    entry.words.fill(text);
    key.clear();
    key.push_str(text);
    entry.text = Some(key);
    entry.used = *clock;
    i
}

/// 1.0 if `answer` and `expected` are equal after [`normalize`], 0.0 otherwise.
///
/// ```
/// use grader_core::text::exact_match;
///
/// assert_eq!(exact_match("Paris!", "paris"), 1.0);
/// assert_eq!(exact_match("The Eiffel Tower", "eiffel tower"), 1.0);
/// assert_eq!(exact_match("Paris", "London"), 0.0);
/// ```
#[must_use]
pub fn exact_match(answer: &str, expected: &str) -> f64 {
    exact_match_with(answer, expected, ExactMatchOptions::default())
}

/// [`exact_match`] with options: with `normalize_text: false`, 1.0 if the texts are equal
/// after trimming whitespace and lowercasing (Python's `strip().lower()`), punctuation and
/// articles kept.
///
/// ```
/// use grader_core::text::{exact_match_with, ExactMatchOptions};
///
/// let raw = ExactMatchOptions { normalize_text: false };
/// assert_eq!(exact_match_with("  PARIS \n", "paris", raw), 1.0);
/// assert_eq!(exact_match_with("Paris!", "paris", raw), 0.0);
/// ```
#[must_use]
pub fn exact_match_with(answer: &str, expected: &str, options: ExactMatchOptions) -> f64 {
    if options.normalize_text {
        score(recent_words(answer, expected, |answer, expected| {
            answer.out == expected.out
        }))
    } else {
        score(pychar::lower(pychar::strip(answer)) == pychar::lower(pychar::strip(expected)))
    }
}

/// 1.0 if `answer` contains `substring`, ignoring case, 0.0 otherwise. The empty string is in
/// every answer.
///
/// ```
/// use grader_core::text::contains;
///
/// assert_eq!(contains("The answer is 42", "ANSWER"), 1.0);
/// assert_eq!(contains("The answer is 42", "43"), 0.0);
/// ```
#[must_use]
pub fn contains(answer: &str, substring: &str) -> f64 {
    contains_with(answer, substring, ContainsOptions::default())
}

/// [`contains`] with options (case-sensitive or not).
///
/// ```
/// use grader_core::text::{contains_with, ContainsOptions};
///
/// let exact_case = ContainsOptions { case_sensitive: true };
/// assert_eq!(contains_with("The answer is 42", "answer", exact_case), 1.0);
/// assert_eq!(contains_with("The answer is 42", "ANSWER", exact_case), 0.0);
/// ```
#[must_use]
pub fn contains_with(answer: &str, substring: &str, options: ContainsOptions) -> f64 {
    if options.case_sensitive {
        score(answer.contains(substring))
    } else {
        score(pychar::lower(answer).contains(&*pychar::lower(substring)))
    }
}

/// 1.0 if `answer` contains at least one of `substrings`, ignoring case, 0.0 otherwise (and
/// 0.0 for no substrings).
///
/// ```
/// use grader_core::text::contains_any;
///
/// assert_eq!(contains_any("The sky is BLUE", &["red", "blue"]), 1.0);
/// assert_eq!(contains_any("The sky is BLUE", &["red", "green"]), 0.0);
/// assert_eq!(contains_any("anything", &[] as &[&str]), 0.0);
/// ```
#[must_use]
pub fn contains_any<S: AsRef<str>>(answer: &str, substrings: &[S]) -> f64 {
    contains_any_with(answer, substrings, ContainsOptions::default())
}

/// [`contains_any`] with options (case-sensitive or not).
///
/// ```
/// use grader_core::text::{contains_any_with, ContainsOptions};
///
/// let exact_case = ContainsOptions { case_sensitive: true };
/// let colors = vec![String::from("red"), String::from("blue")];
/// assert_eq!(contains_any_with("The sky is BLUE", &colors, exact_case), 0.0);
/// ```
#[must_use]
pub fn contains_any_with<S: AsRef<str>>(
    answer: &str,
    substrings: &[S],
    options: ContainsOptions,
) -> f64 {
    contains_substrings(answer, substrings, options, Quantifier::Any)
}

/// 1.0 if `answer` contains every one of `substrings`, ignoring case, 0.0 otherwise (and 1.0
/// for no substrings).
///
/// ```
/// use grader_core::text::contains_all;
///
/// assert_eq!(contains_all("Paris is the capital of France", &["paris", "FRANCE"]), 1.0);
/// assert_eq!(contains_all("Paris is the capital of France", &["paris", "Spain"]), 0.0);
/// assert_eq!(contains_all("anything", &[] as &[&str]), 1.0);
/// ```
#[must_use]
pub fn contains_all<S: AsRef<str>>(answer: &str, substrings: &[S]) -> f64 {
    contains_all_with(answer, substrings, ContainsOptions::default())
}

/// [`contains_all`] with options (case-sensitive or not).
///
/// ```
/// use grader_core::text::{contains_all_with, ContainsOptions};
///
/// let exact_case = ContainsOptions { case_sensitive: true };
/// assert_eq!(contains_all_with("Paris, France", &["Paris", "france"], exact_case), 0.0);
/// ```
#[must_use]
pub fn contains_all_with<S: AsRef<str>>(
    answer: &str,
    substrings: &[S],
    options: ContainsOptions,
) -> f64 {
    contains_substrings(answer, substrings, options, Quantifier::All)
}

/// Whether [`contains_any_with`] or [`contains_all_with`] is asked.
#[derive(Clone, Copy)]
enum Quantifier {
    Any,
    All,
}

/// 1.0 if `answer` contains any or all of `substrings`, lowercasing both sides (as Python's
/// `str.lower()`) unless the options say the comparison is case-sensitive.
fn contains_substrings<S: AsRef<str>>(
    answer: &str,
    substrings: &[S],
    options: ContainsOptions,
    quantifier: Quantifier,
) -> f64 {
    let lowered;
    let answer = if options.case_sensitive {
        answer
    } else {
        lowered = pychar::lower(answer);
        &*lowered
    };
    let found = |s: &S| {
        if options.case_sensitive {
            answer.contains(s.as_ref())
        } else {
            answer.contains(&*pychar::lower(s.as_ref()))
        }
    };
    score(match quantifier {
        Quantifier::Any => substrings.iter().any(found),
        Quantifier::All => substrings.iter().all(found),
    })
}

/// 1.0 if the first number in `answer` equals `expected`, 0.0 otherwise (and 0.0 when the
/// answer has no number).
///
/// The number is the first match of the reference's pattern
/// `[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?`, where `\d` is any Unicode decimal digit,
/// read as Python's `float()` reads it (correctly rounded). A thousands separator ends the
/// number: `"1,000"` reads as 1.
///
/// ```
/// use grader_core::text::numeric_match;
///
/// assert_eq!(numeric_match("The answer is 42.", 42.0), 1.0);
/// assert_eq!(numeric_match("1e5 meters", 100_000.0), 1.0);
/// assert_eq!(numeric_match("about .5 of it", 0.5), 1.0);
/// assert_eq!(numeric_match("1,000", 1.0), 1.0);
/// assert_eq!(numeric_match("٣ apples", 3.0), 1.0);
/// assert_eq!(numeric_match("no number", 0.0), 0.0);
/// ```
#[must_use]
pub fn numeric_match(answer: &str, expected: f64) -> f64 {
    numeric_match_with(answer, expected, NumericMatchOptions::default())
}

/// [`numeric_match`] with a tolerance: 1.0 if `|found - expected| <= tolerance`. A NaN on
/// either side never matches.
///
/// ```
/// use grader_core::text::{numeric_match_with, NumericMatchOptions};
///
/// let close = NumericMatchOptions { tolerance: 0.01 };
/// assert_eq!(numeric_match_with("pi is 3.14159", 3.14, close), 1.0);
/// assert_eq!(numeric_match_with("pi is 3.2", 3.14, close), 0.0);
/// ```
#[must_use]
pub fn numeric_match_with(answer: &str, expected: f64, options: NumericMatchOptions) -> f64 {
    match first_number(answer) {
        Some(found) => score((found - expected).abs() <= options.tolerance),
        None => 0.0,
    }
}

/// The byte just after the decimal digits of `s` that start at byte `at`.
fn skip_digits(s: &str, at: usize) -> usize {
    at + s[at..]
        .char_indices()
        .find(|&(_, c)| pychar::decimal_value(c).is_none())
        .map_or(s.len() - at, |(i, _)| i)
}

/// Where the match of `[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?` starting at byte `at`
/// ends, if there is one. The pattern's greedy, backtracking reading is the longest one here:
/// nothing follows the optional parts that could make a shorter one succeed instead.
fn number_at(s: &str, at: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = at;
    if matches!(bytes.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let integer_end = skip_digits(s, i);
    if integer_end > i {
        i = integer_end;
        if bytes.get(i) == Some(&b'.') {
            i = skip_digits(s, i + 1);
        }
    } else if bytes.get(i) == Some(&b'.') {
        let fraction_end = skip_digits(s, i + 1);
        if fraction_end == i + 1 {
            return None;
        }
        i = fraction_end;
    } else {
        return None;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exponent_end = skip_digits(s, j);
        if exponent_end > j {
            i = exponent_end;
        }
    }
    Some(i)
}

/// The value of the first number in `s`, as the reference finds and reads it.
fn first_number(s: &str) -> Option<f64> {
    let (start, end) = s.char_indices().find_map(|(i, c)| {
        let may_start = matches!(c, '+' | '-' | '.') || pychar::decimal_value(c).is_some();
        may_start
            .then(|| number_at(s, i).map(|end| (i, end)))
            .flatten()
    })?;
    let ascii: String = s[start..end]
        .chars()
        .map(|c| match pychar::decimal_value(c) {
            Some(digit) => char::from(b'0' + digit),
            None => c,
        })
        .collect();
    // The match is `[+-]? digits [. digits] [e [+-] digits]` in ASCII now, which Rust's parser
    // accepts in every form the pattern allows ("5.", ".5", "+1e-3").
    ascii.parse().ok()
}

/// Up to this many words, [`f1_score`] counts a reference's words in a list, not a table.
const SHORT_TEXT_WORDS: usize = 32;

/// Token-level F1 between `answer` and `reference`: both are [`normalize`]d and split into
/// words; precision and recall count the words they share as a multiset (a word shared twice
/// counts twice only if it is in both twice). 0.0 if either side has no words.
///
/// ```
/// use grader_core::text::f1_score;
///
/// assert_eq!(f1_score("The capital is Paris, France", "Paris"), 0.4);
/// assert_eq!(f1_score("Paris", "Paris"), 1.0);
/// assert_eq!(f1_score("paris paris", "paris"), 2.0 / 3.0);
/// assert_eq!(f1_score("", "Paris"), 0.0);
/// ```
#[must_use]
pub fn f1_score(answer: &str, reference: &str) -> f64 {
    recent_words(answer, reference, f1_of_words)
}

fn f1_of_words(answer: &Words, reference: &Words) -> f64 {
    if answer.out.is_empty() || reference.out.is_empty() {
        return 0.0;
    }
    let reference_len = reference.spans.as_ref().map_or(0, Vec::len);
    let answer_len = answer.spans.as_ref().map_or(0, Vec::len);
    // Python counts both with `Counter`s and sums the smaller count of each common token.
    // For the few words of a typical answer, a list searched from the front costs less than
    // hashing every word; long texts get a table.
    let common = if reference_len <= SHORT_TEXT_WORDS {
        let mut counts: Vec<(&str, usize)> = Vec::with_capacity(reference_len);
        for token in reference.tokens() {
            match counts.iter_mut().find(|(seen, _)| *seen == token) {
                Some((_, count)) => *count += 1,
                None => counts.push((token, 1)),
            }
        }
        answer
            .tokens()
            .filter(|token| {
                counts
                    .iter_mut()
                    .find(|(seen, count)| *count > 0 && seen == token)
                    .map(|(_, count)| *count -= 1)
                    .is_some()
            })
            .count()
    } else {
        let mut counts: HashMap<&str, usize, RandomState> =
            HashMap::with_capacity_and_hasher(reference_len, RandomState::default());
        for token in reference.tokens() {
            *counts.entry(token).or_default() += 1;
        }
        answer
            .tokens()
            .filter(|token| match counts.get_mut(token) {
                Some(count) if *count > 0 => {
                    *count -= 1;
                    true
                }
                _ => false,
            })
            .count()
    };
    if common == 0 {
        return 0.0;
    }
    // Python divides the integers with true division: both are exact in f64, so one IEEE
    // division gives the same correctly rounded quotient.
    #[allow(clippy::cast_precision_loss)] // token counts are far below 2^53
    let (common, answer_len, reference_len) =
        (common as f64, answer_len as f64, reference_len as f64);
    let precision = common / answer_len;
    let recall = common / reference_len;
    2.0 * precision * recall / (precision + recall)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the comparisons give without the texts kept between calls.
    fn uncached(answer: &str, reference: &str) -> (f64, f64) {
        let (a, b) = (Words::read(answer, true), Words::read(reference, true));
        (score(a.out == b.out), f1_of_words(&a, &b))
    }

    /// Comparisons through the kept texts equal those made afresh, whatever the order of the
    /// texts: repeated, alternating, more than are kept, the same text twice in one call,
    /// texts that differ only past a prefix, and texts too long to keep.
    #[test]
    fn kept_texts_give_what_reading_afresh_gives() {
        let long = "word ".repeat(RECENT_TEXT_BYTES / 4);
        let texts = [
            "The answer is 42",
            "the answer is 42!",
            "The answer is 42 apples",
            "an apple, a day",
            "ΟΔΟΣ İstanbul",
            "",
            "42",
            long.as_str(),
            "The answer is 4",
        ];
        let mut seed = 7_u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % texts.len()
        };
        for _ in 0..2000 {
            let (a, b) = (texts[next()], texts[next()]);
            let fresh = uncached(a, b);
            let options = ExactMatchOptions {
                normalize_text: true,
            };
            assert_eq!(exact_match_with(a, b, options), fresh.0, "{a:?} {b:?}");
            assert_eq!(f1_score(a, b).to_bits(), fresh.1.to_bits(), "{a:?} {b:?}");
        }
        RECENT.with(|recent| {
            let recent = recent.borrow();
            assert!(recent.0.len() <= RECENT_TEXTS);
            assert!(
                recent
                    .0
                    .iter()
                    .all(|e| e.text.as_deref() != Some(long.as_str())),
                "a long text is not kept"
            );
        });
    }

    #[test]
    fn numbers_are_found_as_the_pattern_finds_them() {
        let cases: &[(&str, Option<f64>)] = &[
            ("42", Some(42.0)),
            ("x-3.5y", Some(-3.5)),
            ("+.5", Some(0.5)),
            ("5.", Some(5.0)),
            ("5.e3", Some(5000.0)),
            ("1e", Some(1.0)),
            ("1e+", Some(1.0)),
            ("2E-2", Some(0.02)),
            ("--7", Some(-7.0)),
            ("-.", None),
            ("-.x .7", Some(0.7)),
            ("...", None),
            ("v1.2.3", Some(1.2)),
            ("1,000", Some(1.0)),
            ("٣.٥", Some(3.5)),
            ("1e999", Some(f64::INFINITY)),
            ("", None),
        ];
        for &(text, expected) in cases {
            assert_eq!(first_number(text), expected, "{text:?}");
        }
    }
}
