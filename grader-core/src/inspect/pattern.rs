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

use regex::{Regex, RegexBuilder};

use super::pattern_match::{PatternOptions, score_groups};
use super::{Reason, Verdict, is_no_response};
use crate::text::pychar::{space_ranges, word_ranges};

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
    Ok(CompiledPattern::new(pattern, options.ignore_case)?.score(completion, targets, options))
}

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
            'w' => push_class(&mut out, word_ranges(), false),
            'W' => push_class(&mut out, word_ranges(), true),
            's' => push_class(&mut out, space_ranges(), false),
            'S' => push_class(&mut out, space_ranges(), true),
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

/// Writes a class of `ranges` (negated with `negate`): a nested class, valid inside a class too.
fn push_class(out: &mut String, ranges: &[(u32, u32)], negate: bool) {
    out.push('[');
    if negate {
        out.push('^');
    }
    for &(lo, hi) in ranges {
        out.push_str(&format!("\\x{{{lo:X}}}"));
        if hi != lo {
            out.push_str(&format!("-\\x{{{hi:X}}}"));
        }
    }
    out.push(']');
}
