//! Inspect AI's `pattern` scorer (`inspect_ai/scorer/_pattern.py`): a regular expression
//! searched in the completion, its groups compared with the targets. Feature `pattern`.
//!
//! The expression runs on the `regex` crate, whose matching takes time linear in the text
//! whatever the pattern: no pattern can backtrack catastrophically. It finds the same
//! leftmost-first match and groups as Python's `re.search`, with Python's `\w`, `\W`, `\s`
//! and `\S` (rewritten to the classes Python's `re` uses) and `\Z`. What it cannot run is
//! refused with a [`PatternError`], never a panic: lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`),
//! backreferences (`\1`, `(?P=name)`), conditionals, atomic groups and possessive
//! quantifiers, and the `(?a)` flag. Two differences remain, documented in `docs/graders.md`:
//! `$` (without `(?m)`) matches only at the very end, where Python's also matches before a
//! final line break, and `\b`/`\B` use the `regex` crate's Unicode word characters.

use std::cell::RefCell;
use std::rc::Rc;

use regex::{Regex, RegexBuilder};

use super::pattern_match::{PatternOptions, score_groups};
use super::{Reason, Verdict, is_no_response};

/// A pattern [`pattern`] cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{grader}: the pattern {pattern:?} cannot run on the regex crate: {reason}")]
pub struct PatternError {
    /// The grader or function that was given the pattern.
    pub grader: &'static str,
    /// The pattern as given.
    pub pattern: String,
    /// Why: the `regex` crate's message (unsupported Python syntax, or a pattern too large).
    pub reason: String,
}

/// A compiled pattern, to search many completions with one compilation.
///
/// ```
/// use grader_core::inspect::{CompiledPattern, PatternOptions};
///
/// let pattern = CompiledPattern::new(r"(\d+) apples", true)?;
/// let verdict = pattern.score("I have 12 Apples", &["12"], PatternOptions::default());
/// assert!(verdict.is_correct());
/// # Ok::<(), grader_core::inspect::PatternError>(())
/// ```
#[derive(Debug, Clone)]
pub struct CompiledPattern {
    regex: Regex,
}

impl CompiledPattern {
    /// Compiles `pattern` as Python's `re.compile(pattern, re.IGNORECASE if ignore_case else 0)`
    /// would read it.
    ///
    /// # Errors
    /// [`PatternError`] when the `regex` crate cannot run the pattern (see the
    /// [module docs](self)).
    pub fn new(pattern: &str, ignore_case: bool) -> Result<Self, PatternError> {
        let error = |reason: String| PatternError {
            grader: "pattern",
            pattern: pattern.to_owned(),
            reason,
        };
        let translated = translate(pattern).map_err(error)?;
        let regex = RegexBuilder::new(&translated)
            .case_insensitive(ignore_case)
            .build()
            .map_err(|e| error(e.to_string()))?;
        Ok(Self { regex })
    }

    /// Inspect's `pattern` scorer on one completion: the first match's groups (or the whole
    /// match when the pattern has no group) compared with `targets`.
    pub fn score<S: AsRef<str>>(
        &self,
        completion: &str,
        targets: &[S],
        options: PatternOptions,
    ) -> Verdict {
        let Some(captures) = self.regex.captures(completion) else {
            return Verdict {
                value: 0.0,
                answer: None,
                reason: Some(if is_no_response(completion) {
                    Reason::NoResponse
                } else {
                    Reason::InvalidResponseFormat
                }),
            };
        };
        let groups: Vec<Option<&str>> = if captures.len() > 1 {
            captures
                .iter()
                .skip(1)
                .map(|g| g.map(|g| g.as_str()))
                .collect()
        } else {
            vec![captures.get(0).map(|g| g.as_str())]
        };
        score_groups(completion, &groups, targets, options)
    }
}

/// Inspect's `pattern(pattern, ignore_case, match_all)` scorer on one completion.
///
/// ```
/// use grader_core::inspect::{PatternOptions, pattern};
///
/// let both = PatternOptions { match_all: true, ..PatternOptions::default() };
/// let verdict = pattern("x=4, y=4", r"x=(\d), y=(\d)", &["4"], both)?;
/// assert!(verdict.is_correct());
/// assert!(pattern("x=(a+)+$ y", r"(a+)+$", &["a"], PatternOptions::default())?.value == 0.0);
/// assert!(pattern("x", r"(?<=x)y", &["y"], PatternOptions::default()).is_err());
/// # Ok::<(), grader_core::inspect::PatternError>(())
/// ```
///
/// # Errors
/// [`PatternError`] when the `regex` crate cannot run the pattern.
pub fn pattern<S: AsRef<str>>(
    completion: &str,
    pattern: &str,
    targets: &[S],
    options: PatternOptions,
) -> Result<Verdict, PatternError> {
    Ok(cached(pattern, options.ignore_case)?.score(completion, targets, options))
}

/// How many compiled patterns each thread keeps (Python's `re` keeps 512 per process).
const CACHE_SIZE: usize = 64;

/// A cached pattern: its text and `ignore_case`, compiled.
type CacheEntry = ((String, bool), Rc<CompiledPattern>);

thread_local! {
    /// The patterns this thread compiled last, as Python's `re` caches them: a grader that
    /// runs the same pattern on many completions compiles it once per thread.
    static CACHE: RefCell<Vec<CacheEntry>> = const { RefCell::new(Vec::new()) };
}

/// The compiled `pattern`, from this thread's cache or compiled now (and kept). Shared, not
/// cloned: a cloned `Regex` starts with empty search caches.
fn cached(pattern: &str, ignore_case: bool) -> Result<Rc<CompiledPattern>, PatternError> {
    let hit = CACHE.with_borrow(|cache| {
        cache
            .iter()
            .find(|((p, i), _)| p == pattern && *i == ignore_case)
            .map(|(_, compiled)| Rc::clone(compiled))
    });
    if let Some(compiled) = hit {
        return Ok(compiled);
    }
    let compiled = Rc::new(CompiledPattern::new(pattern, ignore_case)?);
    CACHE.with_borrow_mut(|cache| {
        if cache.len() == CACHE_SIZE {
            cache.remove(0);
        }
        cache.push(((pattern.to_owned(), ignore_case), Rc::clone(&compiled)));
    });
    Ok(compiled)
}

/// Python's `\w` in a `str` pattern (`str.isalnum()` or `_`): exactly the letters, the numbers
/// and `_` (checked on every code point by the tests). Nested classes, valid inside a class too.
pub(crate) const PY_WORD: &str = r"[\p{L}\p{N}_]";
/// Python's `\W`.
pub(crate) const PY_NOT_WORD: &str = r"[^\p{L}\p{N}_]";
/// Python's `\s` (`str.isspace()`): the separators, the ASCII controls `\t` to `\r` and
/// `\x1C` to `\x1F`, and U+0085.
pub(crate) const PY_SPACE: &str = r"[\p{Zs}\p{Zl}\p{Zp}\t-\r\x1C-\x1F\x{85}]";
/// Python's `\S`.
pub(crate) const PY_NOT_SPACE: &str = r"[^\p{Zs}\p{Zl}\p{Zp}\t-\r\x1C-\x1F\x{85}]";

/// Rewrites the escapes whose meaning differs between Python's `re` and the `regex` crate.
fn translate(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escaped) = chars.next() else {
            return Err("the pattern ends with a lone backslash".to_owned());
        };
        match escaped {
            'w' => out.push_str(PY_WORD),
            'W' => out.push_str(PY_NOT_WORD),
            's' => out.push_str(PY_SPACE),
            'S' => out.push_str(PY_NOT_SPACE),
            'Z' => out.push_str(r"\z"),
            '1'..='9' => {
                return Err(format!("backreference \\{escaped} is not supported"));
            }
            _ => {
                out.push('\\');
                out.push(escaped);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::pychar::{is_space, is_word};

    /// The classes written for `\w` and `\s` are Python's on every code point the tables know
    /// (Unicode 14.0; the `regex` crate's newer Unicode may add characters assigned since).
    #[test]
    fn python_classes_match_the_tables() -> Result<(), regex::Error> {
        let word = Regex::new(&format!("^{PY_WORD}$"))?;
        let space = Regex::new(&format!("^{PY_SPACE}$"))?;
        let not_word = Regex::new(&format!("^{PY_NOT_WORD}$"))?;
        let mut newer = 0;
        for c in (0..=0x10_FFFF_u32).filter_map(char::from_u32) {
            let text = c.to_string();
            assert_eq!(space.is_match(&text), is_space(c), "{c:?}");
            assert_ne!(word.is_match(&text), not_word.is_match(&text), "{c:?}");
            if word.is_match(&text) != is_word(c) {
                // Only letters and numbers assigned after Unicode 14.0 may differ.
                assert!(!is_word(c), "{c:?} is a word character to Python");
                newer += 1;
            }
        }
        assert!(newer < 10_000, "{newer} newer word characters");
        Ok(())
    }
}
