//! Python's `str` character classes, `str.lower()` and `str.casefold()`, from tables read out
//! of CPython's own character database (see `tables.rs` and `fold_tables.rs`), with fast paths
//! for ASCII.

use std::borrow::Cow;
use std::cmp::Ordering;

use super::fold_tables::{CASEFOLD, DIGIT, NUMERIC};
use super::tables::{CASE_IGNORABLE, CASED, DECIMAL, LOWER, SPACE, WORD};

const CAPITAL_SIGMA: char = '\u{3A3}';
const SMALL_SIGMA: char = '\u{3C3}';
const FINAL_SIGMA: char = '\u{3C2}';
const CAPITAL_I_WITH_DOT: char = '\u{130}';
const COMBINING_DOT_ABOVE: char = '\u{307}';

fn in_ranges(table: &[(u32, u32)], c: char) -> bool {
    let c = u32::from(c);
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                Ordering::Less
            } else if lo > c {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        })
        .is_ok()
}

/// `\w` of a `str` pattern: `c.isalnum() or c == "_"`.
#[inline]
pub fn is_word(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        in_ranges(WORD, c)
    }
}

/// `\s` of a `str` pattern, and what `str.split()`/`str.strip()` remove: `c.isspace()`.
#[inline]
pub fn is_space(c: char) -> bool {
    if c.is_ascii() {
        matches!(c, '\t'..='\r' | '\x1c'..='\x1f' | ' ')
    } else {
        in_ranges(SPACE, c)
    }
}

/// The value of a `\d` (`str.isdecimal()`) character, as `float()` reads it.
#[inline]
pub fn decimal_value(c: char) -> Option<u8> {
    if c.is_ascii() {
        return c.to_digit(10).and_then(|d| u8::try_from(d).ok());
    }
    let code = u32::from(c);
    let index = DECIMAL
        .binary_search_by(|&(lo, hi, _)| {
            if hi < code {
                Ordering::Less
            } else if lo > code {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        })
        .ok()?;
    let (lo, _, first) = DECIMAL[index];
    u8::try_from(code - lo).ok().map(|offset| first + offset)
}

/// Python's `float()` of a string: surrounding whitespace stripped (`\x1c` to `\x1f` are not
/// whitespace there), `_` allowed between two
/// digits, any Unicode decimal digit read as its ASCII digit, then the ASCII grammar that
/// Python and Rust share (`[+-]` then digits with an optional `.` and exponent, or `inf`,
/// `infinity`, `nan` in any case). `None` where Python raises `ValueError`.
pub fn parse_float(s: &str) -> Option<f64> {
    // ASCII without `_`: Rust's grammar is Python's once the whitespace is stripped.
    if s.is_ascii() && !s.contains('_') {
        let trimmed =
            s.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r'));
        return trimmed.parse().ok();
    }
    // `float()` strips ASCII whitespace as C's `isspace` has it (not U+001C to U+001F, which
    // `str.isspace()` counts) and non-ASCII whitespace as `str.isspace()`.
    let s = s.trim_matches(|c: char| {
        if c.is_ascii() {
            matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
        } else {
            is_space(c)
        }
    });
    let chars: Vec<char> = s.chars().collect();
    let is_digit = |at: usize| chars.get(at).is_some_and(|&c| decimal_value(c).is_some());
    let mut ascii = String::with_capacity(s.len());
    for (at, &c) in chars.iter().enumerate() {
        if let Some(digit) = decimal_value(c) {
            ascii.push(char::from(b'0' + digit));
        } else if c == '_' {
            if !(at > 0 && is_digit(at - 1) && is_digit(at + 1)) {
                return None;
            }
        } else if c.is_ascii() {
            ascii.push(c);
        } else {
            return None;
        }
    }
    ascii.parse().ok()
}

/// `str.strip()` with no argument.
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// The one-character lowercase of a non-ASCII character other than U+03A3 and U+0130.
fn lower_one(c: char) -> char {
    let code = u32::from(c);
    LOWER
        .binary_search_by_key(&code, |&(from, _)| from)
        .ok()
        .and_then(|index| char::from_u32(LOWER[index].1))
        .unwrap_or(c)
}

/// Whether `str.lower()` changes `c` (for U+03A3, whatever its context).
fn lower_changes(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_uppercase()
    } else {
        c == CAPITAL_SIGMA || c == CAPITAL_I_WITH_DOT || lower_one(c) != c
    }
}

/// CPython's `handle_capital_sigma`: the capital sigma at byte `at` of `s` lowers to the final
/// form when a cased character precedes it and none follows it, skipping case-ignorable
/// characters on both sides.
fn is_final_sigma(s: &str, at: usize) -> bool {
    let cased_before = s[..at]
        .chars()
        .rev()
        .find(|&c| !in_ranges(CASE_IGNORABLE, c))
        .is_some_and(|c| in_ranges(CASED, c));
    cased_before
        && !s[at + CAPITAL_SIGMA.len_utf8()..]
            .chars()
            .find(|&c| !in_ranges(CASE_IGNORABLE, c))
            .is_some_and(|c| in_ranges(CASED, c))
}

/// Calls `emit` with each character of `str.lower()` of the non-ASCII character `c` at byte
/// `at` of `s` (the final-sigma rule looks at `s` on both sides).
#[inline]
pub(super) fn lower_non_ascii(s: &str, at: usize, c: char, mut emit: impl FnMut(char)) {
    if c == CAPITAL_SIGMA {
        emit(if is_final_sigma(s, at) {
            FINAL_SIGMA
        } else {
            SMALL_SIGMA
        });
    } else if c == CAPITAL_I_WITH_DOT {
        emit('i');
        emit(COMBINING_DOT_ABOVE);
    } else {
        emit(lower_one(c));
    }
}

/// Calls `emit` with each character of `str.lower()` of `s[from..]`, where `s` is the whole
/// string.
fn lower_each(s: &str, from: usize, mut emit: impl FnMut(char)) {
    for (i, c) in s[from..].char_indices() {
        if c.is_ascii() {
            emit(c.to_ascii_lowercase());
        } else {
            lower_non_ascii(s, from + i, c, &mut emit);
        }
    }
}

/// `str.lower()`: the full lowercase mapping (U+0130 becomes two characters) with the final
/// sigma rule. Borrows when nothing changes.
pub fn lower(s: &str) -> Cow<'_, str> {
    let Some(first) = s
        .char_indices()
        .find(|&(_, c)| lower_changes(c))
        .map(|(i, _)| i)
    else {
        return Cow::Borrowed(s);
    };
    if s.is_ascii() {
        return Cow::Owned(s.to_ascii_lowercase());
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push_str(&s[..first]);
    lower_each(s, first, |c| out.push(c));
    Cow::Owned(out)
}

/// `str.casefold()`: the full case folding (`ß` becomes `ss`, `ς` and `Σ` become `σ`), which
/// unlike [`lower`] looks at no neighbouring character. Borrows when nothing changes.
pub fn casefold(s: &str) -> Cow<'_, str> {
    let folds =
        |c: char| lower_changes(c) || (!c.is_ascii() && fold_of(c).is_some()) || c == FINAL_SIGMA;
    let Some(first) = s.char_indices().find(|&(_, c)| folds(c)).map(|(i, _)| i) else {
        return Cow::Borrowed(s);
    };
    if s.is_ascii() {
        return Cow::Owned(s.to_ascii_lowercase());
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push_str(&s[..first]);
    for (i, c) in s[first..].char_indices() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if c == CAPITAL_SIGMA || c == FINAL_SIGMA {
            out.push(SMALL_SIGMA);
        } else if let Some(folded) = fold_of(c) {
            out.push_str(folded);
        } else {
            lower_non_ascii(s, first + i, c, |c| out.push(c));
        }
    }
    Cow::Owned(out)
}

/// `c.casefold()` where it differs from `c.lower()`.
fn fold_of(c: char) -> Option<&'static str> {
    CASEFOLD
        .binary_search_by_key(&c, |&(from, _)| from)
        .ok()
        .map(|index| CASEFOLD[index].1)
}

/// `unicodedata.digit(c)`: the value of a decimal digit, or of a character such as `²` or `①`
/// that has a digit value without being a decimal.
pub fn digit_value(c: char) -> Option<u8> {
    decimal_value(c).or_else(|| {
        DIGIT
            .binary_search_by_key(&c, |&(from, _)| from)
            .ok()
            .map(|index| DIGIT[index].1)
    })
}

/// `unicodedata.numeric(c)`: the value of a digit, or of a character such as `½`, `Ⅻ` or `万`
/// that has a numeric value without being a digit.
pub fn numeric_value(c: char) -> Option<f64> {
    digit_value(c).map(f64::from).or_else(|| {
        NUMERIC
            .binary_search_by_key(&c, |&(from, _)| from)
            .ok()
            .map(|index| NUMERIC[index].1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_fast_paths_agree_with_the_tables() {
        for c in (0u8..128).map(char::from) {
            assert_eq!(is_word(c), in_ranges(WORD, c), "{c:?}");
            assert_eq!(is_space(c), in_ranges(SPACE, c), "{c:?}");
            let from_table = LOWER
                .binary_search_by_key(&u32::from(c), |&(from, _)| from)
                .map_or(c, |i| char::from_u32(LOWER[i].1).unwrap_or(c));
            assert_eq!(c.to_ascii_lowercase(), from_table, "{c:?}");
        }
    }

    #[test]
    fn classes_follow_python_where_rust_differs() {
        // Combining marks are not `\w` in Python (`regex` and `char::is_alphanumeric` agree
        // here, but `\w` of the `regex` crate includes them).
        assert!(!is_word('\u{301}'));
        // Superscript two and vulgar fraction one half are numeric, so `isalnum()`.
        assert!(is_word('²') && is_word('½'));
        // U+001C..U+001F are whitespace to Python, not to Rust.
        assert!(is_space('\x1c') && !'\x1c'.is_whitespace());
        // U+200B is neither.
        assert!(!is_space('\u{200B}'));
        assert_eq!(decimal_value('٣'), Some(3));
        assert_eq!(decimal_value('𝟗'), Some(9));
        assert_eq!(decimal_value('²'), None);
    }

    #[test]
    fn lower_is_pythons() {
        assert_eq!(lower("ABC"), "abc");
        assert!(matches!(lower("abc é"), Cow::Borrowed(_)));
        assert_eq!(lower("İ"), "i\u{307}");
        assert_eq!(lower("ΟΔΟΣ"), "οδος");
        assert_eq!(lower("ΟΔΟΣ."), "οδος.");
        assert_eq!(lower("Σ"), "σ");
        assert_eq!(lower("ΣΑ"), "σα");
        assert_eq!(lower("ΑΣ'Α"), "ασ'α");
        assert_eq!(lower("ΑΣ' x"), "ας' x");
        assert_eq!(lower("ΣΣ"), "σς");
        assert_eq!(lower("ǅ"), "ǆ");
        assert_eq!(strip("\u{85} x \x1f"), "x");
    }

    #[test]
    fn casefold_is_pythons() {
        assert!(matches!(casefold("abc é"), Cow::Borrowed(_)));
        assert_eq!(casefold("ABC"), "abc");
        assert_eq!(casefold("Straße"), "strasse");
        assert_eq!(casefold("ΟΔΟΣ"), "οδοσ");
        assert_eq!(casefold("οδος"), "οδοσ");
        assert_eq!(casefold("İ"), "i\u{307}");
        assert_eq!(casefold("ﬁ µ"), "fi μ");
        assert_eq!(digit_value('²'), Some(2));
        assert_eq!(digit_value('٣'), Some(3));
        assert_eq!(digit_value('½'), None);
        assert_eq!(numeric_value('½'), Some(0.5));
        assert_eq!(numeric_value('Ⅻ'), Some(12.0));
        assert_eq!(numeric_value('٣'), Some(3.0));
        assert_eq!(numeric_value('x'), None);
    }
}
