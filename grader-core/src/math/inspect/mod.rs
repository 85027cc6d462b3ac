//! Why this file is long: Inspect's scorer is one pipeline (candidates, their checks, two
//! parsers, the comparison), easiest to check against `inspect_ai/scorer/_math.py` in one place.
//!
//! Inspect AI 0.3.285's `math()` scorer: the answer found in a completion (the last
//! `\boxed{}`, the line after "answer:", the last delimited math, the last line, the last
//! number), each candidate checked against Inspect's limits (its length, digits, commands,
//! operators, nesting, matrix cells, code-shaped text), read as a Python-like plain expression
//! or as LaTeX (latex2sympy2_extended's normalization, mixed numbers), or as text where it is
//! prose, and compared with each target: the same value, the same relation, a matrix cell by
//! cell, or, where one side is not exact, numerically within 10⁻¹⁰.
//!
//! ```
//! use grader_core::math::{InspectMathStatus, inspect_math};
//!
//! let score = inspect_math("So the answer is \\boxed{\\frac{1}{2}}.", &["0.5"])?;
//! assert_eq!(score.status, InspectMathStatus::Correct);
//! assert_eq!(score.answer.as_deref(), Some("\\frac{1}{2}"));
//! let wrong = inspect_math("\\boxed{2^{2025}}", &["3^{2025}"])?;
//! assert_eq!(wrong.status, InspectMathStatus::Incorrect);
//! # Ok::<(), grader_core::math::MathError>(())
//! ```
//!
//! Values are compared exactly ([`Semantics::Exact`]): where Inspect accepts an exact
//! transcendental number against a rational within 10⁻¹⁰ (`\pi` against a fraction), we do not;
//! [`inspect_math_with`] and [`Semantics::Parity`] give Inspect's verdict.

mod plain;

use plain::{Fail, LIMIT_NODES};

use serde::Serialize;

use super::budget::Budget;
use super::config::{BoxedMode, NormalizationConfig, Semantics, VerifyOptions};
use super::error::{MathError, excerpt};
use super::expr::{Expr, Func, Rel};
use super::limits::Limits;
use super::numeric::{self, Ctx};
use super::{latex, normalize};

const MAX_COMPLETION_CHARS: usize = 1_000_000;
const MAX_CANDIDATE_CHARS: usize = 4_096;
const MAX_NESTING: usize = 64;
const MAX_COMMANDS: usize = 256;
const MAX_OPERATORS: usize = 1_024;
const MAX_DIGIT_RUN: usize = 256;
const MAX_TOTAL_DIGITS: usize = 2_048;
const MAX_MATRIX_CELLS: usize = 256;
const MAX_EXPRESSION_DEPTH: usize = 64;
const MAX_SYMBOLS: usize = 64;
const MAX_SYMBOL_CHARS: usize = 128;
const MAX_INTEGER_BITS: u64 = 4_096;
const SYMBOLIC_POWER_EXPONENT_LIMIT: u64 = 10_000;
const MAX_FACTORIAL_ARGUMENT: u64 = 10_000;

/// Inspect's `math_scorer_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum InspectMathStatus {
    /// The answer equals a target.
    Correct,
    /// It does not.
    Incorrect,
    /// No candidate could be read (Inspect's `invalid_response_format`).
    AnswerParseError,
    /// A candidate is past one of Inspect's limits (`invalid_response_format` too).
    AnswerLimit,
}

/// Inspect's `math()` score of one completion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InspectMathScore {
    /// The status.
    pub status: InspectMathStatus,
    /// The answer as Inspect records it (the candidate read, at most 4 096 characters), or
    /// the completion where none was read.
    pub answer: Option<String>,
    /// Why no answer was read (`could not parse …`, `… exceeded a complexity limit …`).
    pub reason: Option<String>,
}

impl InspectMathScore {
    /// Whether the answer is correct.
    #[must_use]
    pub fn is_correct(&self) -> bool {
        self.status == InspectMathStatus::Correct
    }

    /// 1 for a correct answer, 0 otherwise (Inspect's `CORRECT` and `INCORRECT`).
    #[must_use]
    pub fn value(&self) -> f64 {
        if self.is_correct() { 1.0 } else { 0.0 }
    }
}

/// A read candidate: an expression or a text, and where it came from.
#[derive(Debug, Clone)]
struct Value {
    expression: Option<Expr>,
    text: Option<String>,
    source: String,
    expensive: bool,
}

/// `_replace_unicode`.
fn replace_unicode(text: &str) -> String {
    let mut out: String = text
        .chars()
        .filter(|&c| !matches!(c, '\x00'..='\x08' | '\x0b'..='\x0c' | '\x0e'..='\x1f' | '\x7f'))
        .collect();
    for (from, to) in [
        ("\u{23a7}", "\\boxed{"),
        ("\u{23ab}", "}"),
        ("\n\u{2502}", "\\boxed{"),
        ("\u{2502}", "}"),
        ("\n\u{2503}", "\\boxed{"),
        ("\u{2503}", "}"),
        ("\n\u{f8f0}", "\\boxed{"),
        ("\u{f8fb}", "}"),
        ("\u{221a}", "\\sqrt"),
        ("\u{00d7}", "\\cdot"),
        ("\u{00f7}", "/"),
        ("\u{202f}", " "),
        ("\u{2212}", "-"),
        ("\u{2013}", "-"),
        ("\u{03c0}", "\\pi"),
        ("\u{00b0}", "^\\circ"),
        ("\u{221e}", "\\infty"),
        ("\u{2264}", "\\le"),
        ("\u{2265}", "\\ge"),
        ("\u{2260}", "\\ne"),
        ("\u{222a}", "\\cup"),
        ("\u{2229}", "\\cap"),
    ] {
        if out.contains(from) {
            out = out.replace(from, to);
        }
    }
    out
}

/// `_balanced_content`: the content of the group opening at byte `opening` (cut at 4 096
/// characters past it) and the position after it.
fn balanced_content(text: &str, opening: usize) -> Option<(String, usize)> {
    let mut depth = 0usize;
    for (index, c) in text[opening..].char_indices() {
        let index = opening + index;
        if c == '{' {
            depth += 1;
            if depth > MAX_NESTING {
                return None;
            }
        } else if c == '}' {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                let inner = &text[opening + 1..index];
                let cut: String = inner.chars().take(MAX_CANDIDATE_CHARS + 1).collect();
                return Some((cut, index + 1));
            }
        }
    }
    None
}

fn is_ascii_letter_or_backslash(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '\\'
}

/// `_BOX_START` searched from `from`: the position of the `{` after it.
fn box_start(text: &str, from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while i < text.len() {
        let rest = &text[i..];
        let after = if let Some(r) = rest.strip_prefix('\\') {
            ["beginboxed", "boxed", "fbox"]
                .iter()
                .find(|w| r.starts_with(**w))
                .map(|w| i + 1 + w.len())
        } else if !text[..i]
            .chars()
            .next_back()
            .is_some_and(is_ascii_letter_or_backslash)
        {
            ["boxed", "fbox", "oxed"]
                .iter()
                .find(|w| rest.starts_with(**w))
                .map(|w| i + w.len())
        } else {
            None
        };
        if let Some(after) = after {
            let spaces = text[after..].len() - text[after..].trim_start().len();
            if text[after + spaces..].starts_with('{') {
                return Some((i, after + spaces));
            }
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// `_boxed_candidates`: the content of the last `\boxed{}` that closes.
fn last_box(text: &str) -> Option<String> {
    let mut last = None;
    let mut position = 0;
    while let Some((_, brace)) = box_start(text, position) {
        match balanced_content(text, brace) {
            None => position = brace + 1,
            Some((content, end)) => {
                last = Some(content);
                position = end;
            }
        }
    }
    last
}

/// `_last_single_dollar_math`.
fn last_single_dollar(text: &str) -> Option<String> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut positions = Vec::new();
    for (k, &(index, c)) in chars.iter().enumerate() {
        if c == '$' && (k == 0 || chars[k - 1].1 != '\\') {
            if chars.get(k + 1).is_some_and(|&(_, d)| d == '$') {
                continue;
            }
            if k > 0 && chars[k - 1].1 == '$' {
                continue;
            }
            positions.push(index);
        }
    }
    let mut last = None;
    let mut k = 0;
    while k + 1 < positions.len() {
        last = Some(text[positions[k] + 1..positions[k + 1]].to_owned());
        k += 2;
    }
    last
}

/// `_last_delimited_math`.
fn last_delimited(text: &str) -> Option<String> {
    let mut matches: Vec<(usize, String)> = Vec::new();
    for (opening, closing) in [("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)")] {
        let Some(end) = text.rfind(closing) else {
            continue;
        };
        if let Some(start) = text[..end].rfind(opening) {
            matches.push((end, text[start + opening.len()..end].to_owned()));
        }
    }
    if let Some(single) = last_single_dollar(text) {
        let end = text.rfind('$').unwrap_or(0);
        matches.push((end, single));
    }
    // `max` keeps the first of equal keys.
    let mut best: Option<(usize, String)> = None;
    for m in matches {
        if best.as_ref().is_none_or(|b| m.0 > b.0) {
            best = Some(m);
        }
    }
    best.map(|(_, s)| s)
}

fn strip_spacing_commands(text: &str, leading: bool) -> &str {
    let mut t = text;
    loop {
        let before = t;
        for command in ["\\,", "\\;", "\\:", "\\!", "\\qquad", "\\quad"] {
            if leading {
                if let Some(rest) = t.strip_prefix(command) {
                    t = rest.trim_start();
                }
            } else if let Some(rest) = t.trim_end().strip_suffix(command) {
                t = rest;
            }
        }
        if t == before {
            return t;
        }
    }
}

/// `_strip_delimiters`.
fn strip_delimiters(text: &str) -> String {
    let mut t = text.trim();
    while t.chars().count() >= 4 && t.starts_with("**") && t.ends_with("**") {
        t = t[2..t.len() - 2].trim();
    }
    for (opening, closing) in [("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$")] {
        if t.len() >= opening.len() + closing.len()
            && t.starts_with(opening)
            && t.ends_with(closing)
            && (opening != "$" || t.matches('$').count() == 2)
        {
            t = t[opening.len()..t.len() - closing.len()].trim();
        }
    }
    let t = strip_spacing_commands(t, true);
    let t = strip_spacing_commands(t, false);
    t.trim_end_matches([' ', '\t', '\r', '\n', '.', ',', ';', ':'])
        .to_owned()
}

fn append(candidates: &mut Vec<String>, candidate: Option<String>) {
    let Some(candidate) = candidate else {
        return;
    };
    let candidate = strip_delimiters(&candidate);
    if !candidate.is_empty() && !candidates.contains(&candidate) {
        candidates.push(candidate);
    }
}

/// `_ANSWER_MARKER`'s last match: the position after it.
fn last_answer_marker(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut last = None;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &lower[i..];
        let word = if let Some(after) = rest.strip_prefix("final") {
            let spaces = after.len() - after.trim_start().len();
            if spaces > 0 && after[spaces..].starts_with("answer") {
                Some(5 + spaces + 6)
            } else {
                None
            }
        } else {
            None
        }
        .or_else(|| rest.starts_with("answer").then_some(6))
        .or_else(|| rest.starts_with("result").then_some(6));
        if let Some(len) = word {
            let mut k = i + len;
            k += lower[k..].len() - lower[k..].trim_start().len();
            let marker = if lower[k..].starts_with("is")
                && !lower[k + 2..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
            {
                Some(k + 2)
            } else if lower[k..].starts_with([':', '=']) {
                Some(k + 1)
            } else {
                None
            };
            if let Some(end) = marker {
                let end = end + (lower[end..].len() - lower[end..].trim_start().len());
                last = Some(end);
                i = end.max(i + 1);
                continue;
            }
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    last
}

/// Python's `str.splitlines()` first line.
fn first_line(text: &str) -> &str {
    let end = text
        .find([
            '\n', '\r', '\u{0b}', '\u{0c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
            '\u{2029}',
        ])
        .unwrap_or(text.len());
    &text[..end]
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.split([
        '\n', '\r', '\u{0b}', '\u{0c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
        '\u{2029}',
    ])
}

/// `_NUMBER`'s last match.
fn last_number(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let digits = |k: usize| {
        b[k.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let mut last = None;
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let mut k = i;
        if matches!(b.get(k), Some(b'-' | b'+')) {
            k += 1;
        }
        let mut matched = false;
        let n = digits(k);
        if n > 0 {
            // `\d{1,3}(?:,\d{3})+` first.
            let mut grouped = None;
            for lead in (1..=n.min(3)).rev() {
                let mut j = k + lead;
                let mut groups = 0;
                while b.get(j) == Some(&b',') && digits(j + 1) >= 3 {
                    j += 4;
                    groups += 1;
                }
                if groups > 0 {
                    grouped = Some(j);
                    break;
                }
            }
            k = grouped.unwrap_or(k + n);
            if b.get(k) == Some(&b'.') && digits(k + 1) > 0 {
                k += 1 + digits(k + 1);
            }
            matched = true;
        } else if b.get(k) == Some(&b'.') && digits(k + 1) > 0 {
            k += 1 + digits(k + 1);
            matched = true;
        }
        if matched {
            if matches!(b.get(k), Some(b'e' | b'E')) {
                let mut j = k + 1;
                if matches!(b.get(j), Some(b'+' | b'-')) {
                    j += 1;
                }
                if digits(j) > 0 {
                    k = j + digits(j);
                }
            }
            let rest = &text[k..];
            let spaced = k + rest.len() - rest.trim_start().len();
            if text[spaced..].starts_with('%') {
                k = spaced + 1;
            }
            last = Some(text[start..k].to_owned());
            i = k;
            continue;
        }
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    last
}

/// `_is_short_composite_answer`.
fn short_composite(text: &str) -> bool {
    if text.chars().count() > 512 || text.matches('\n').count() > 2 {
        return false;
    }
    if !text.contains('$') && !text.contains("\\(") && !text.contains("\\[") {
        return false;
    }
    if text.contains('\n') && text.matches('$').count() >= 4 {
        return true;
    }
    let outside = outside_math(text);
    has_word(&outside)
}

/// The text with its `$$…$$`, `$…$`, `\(…\)` and `\[…\]` parts replaced by spaces.
fn outside_math(text: &str) -> String {
    let mut out = String::new();
    let mut i = 0;
    'scan: while i < text.len() {
        for (open, close) in [("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")] {
            if text[i..].starts_with(open)
                && let Some(end) = text[i + open.len()..].find(close)
            {
                out.push(' ');
                i += open.len() + end + close.len();
                continue 'scan;
            }
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// `_WORD`: two ASCII letters in a row.
fn has_word(text: &str) -> bool {
    text.as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_alphabetic() && w[1].is_ascii_alphabetic())
}

fn word_count(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 2)
        .count()
}

/// `_answer_candidates`.
fn answer_candidates(text: &str) -> Result<Vec<String>, Fail> {
    let text = replace_unicode(text);
    if text.chars().count() > MAX_COMPLETION_CHARS {
        return Err(Fail::Limit("model output is too long"));
    }
    let mut candidates = Vec::new();
    append(&mut candidates, last_box(&text));
    if let Some(end) = last_answer_marker(&text) {
        let suffix = &text[end..];
        append(
            &mut candidates,
            (!suffix.is_empty()).then(|| first_line(suffix).to_owned()),
        );
    }
    let composite = short_composite(&text);
    if composite {
        append(&mut candidates, Some(text.clone()));
    }
    append(&mut candidates, last_delimited(&text));
    if text.chars().count() <= MAX_CANDIDATE_CHARS && !composite {
        append(&mut candidates, Some(text.clone()));
    }
    if let Some(line) = lines(&text).map(str::trim).filter(|l| !l.is_empty()).last() {
        append(&mut candidates, Some(line.to_owned()));
    }
    append(&mut candidates, last_number(&text));
    Ok(candidates)
}

/// `_target_candidates`.
fn target_candidates(text: &str) -> Vec<String> {
    let text = replace_unicode(text);
    let mut candidates = Vec::new();
    append(&mut candidates, last_box(&text));
    append(&mut candidates, Some(text));
    candidates
}

/// `_CODE_SHAPED`.
fn code_shaped(text: &str) -> bool {
    if text.contains("__") {
        return true;
    }
    let word_before = |i: usize| {
        text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    };
    for (words, next) in [
        (
            &[
                "breakpoint",
                "compile",
                "eval",
                "exec",
                "getattr",
                "globals",
                "import",
                "locals",
                "open",
                "setattr",
            ][..],
            '(',
        ),
        (&["builtins", "os", "pathlib", "subprocess", "sys"][..], '.'),
    ] {
        for word in words {
            for (i, _) in text.match_indices(word) {
                if word_before(i) {
                    continue;
                }
                if text[i + word.len()..].trim_start().starts_with(next) {
                    return true;
                }
            }
        }
    }
    false
}

/// `_EAGER_PARSER_OPERATION` (case-insensitive).
fn eager_operation(text: &str) -> bool {
    let lower = text.to_lowercase();
    if lower.contains("\\begin{vmatrix}")
        || lower.contains("\\xrightarrow")
        || lower.contains("\\|")
    {
        return true;
    }
    for command in ["\\det", "\\gcd", "\\lcm"] {
        for (i, _) in lower.match_indices(command) {
            if !lower[i + command.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                return true;
            }
        }
    }
    const NAMES: &[&str] = &[
        "cols",
        "diag",
        "diagonalize",
        "eig",
        "eigen",
        "eigenvals",
        "eigenvalues",
        "eigenvects",
        "eigenvectors",
        "eye",
        "gcd",
        "hstack",
        "lcm",
        "nullspace",
        "norm",
        "ones",
        "orth",
        "ortho",
        "orthogonal",
        "orthogonalize",
        "rank",
        "ref",
        "rows",
        "rref",
        "svd",
        "trace",
        "tr",
        "vstack",
        "zeros",
    ];
    for (i, _) in lower.match_indices("\\operatorname") {
        let rest = lower[i + 13..].trim_start();
        if let Some(inner) = rest.strip_prefix('{')
            && let Some(close) = inner.find('}')
            && NAMES.contains(&inner[..close].trim())
        {
            return true;
        }
    }
    false
}

/// `_contains_nested_latex_power`.
fn nested_power(text: &str) -> bool {
    for (i, _) in text.match_indices('^') {
        let rest = &text[i + 1..];
        let at = i + 1 + rest.len() - rest.trim_start().len();
        if text[at..].starts_with('{')
            && let Some((inner, _)) = balanced_content(text, at)
            && inner.contains('^')
            && !inner.chars().any(|c| c.is_ascii_alphabetic())
        {
            return true;
        }
    }
    false
}

/// `_validate_candidate`.
fn validate_candidate(candidate: &str) -> Result<(), Fail> {
    if candidate.is_empty() {
        return Err(Fail::Parse);
    }
    if candidate.chars().count() > MAX_CANDIDATE_CHARS {
        return Err(Fail::Limit("expression is too long"));
    }
    if code_shaped(candidate) {
        return Err(Fail::Unsafe);
    }
    if eager_operation(candidate) {
        return Err(Fail::Limit(
            "expression requests an eager mathematical operation",
        ));
    }
    if nested_power(candidate) {
        return Err(Fail::Limit("expression contains a nested exponent"));
    }
    let runs: Vec<usize> = candidate
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .filter(|&l| l > 0)
        .collect();
    if runs.iter().any(|&l| l > MAX_DIGIT_RUN) {
        return Err(Fail::Limit(
            "expression contains an oversized numeric literal",
        ));
    }
    if runs.iter().sum::<usize>() > MAX_TOTAL_DIGITS {
        return Err(Fail::Limit("expression contains too many digits"));
    }
    let commands = candidate
        .match_indices('\\')
        .filter(|(i, _)| candidate[i + 1..].starts_with(|c: char| c.is_ascii_alphabetic()))
        .count();
    if commands > MAX_COMMANDS {
        return Err(Fail::Limit("expression contains too many LaTeX commands"));
    }
    if candidate
        .chars()
        .filter(|c| "+-*/^=!<>".contains(*c))
        .count()
        > MAX_OPERATORS
    {
        return Err(Fail::Limit("expression contains too many operators"));
    }
    let (mut depth, mut max_depth) = (0usize, 0usize);
    let mut stack = Vec::new();
    for c in candidate.chars() {
        match c {
            '(' | '[' | '{' => {
                stack.push(c);
                depth += 1;
                max_depth = max_depth.max(depth);
            }
            ')' | ']' | '}' => {
                let open = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if stack.last() == Some(&open) {
                    stack.pop();
                    depth -= 1;
                }
            }
            _ => {}
        }
    }
    if max_depth > MAX_NESTING {
        return Err(Fail::Limit("expression is nested too deeply"));
    }
    let rows = candidate.matches("\\\\").count() + 1;
    let columns = candidate.matches('&').count() + 1;
    if rows * columns > MAX_MATRIX_CELLS {
        return Err(Fail::Limit("expression contains an oversized matrix"));
    }
    Ok(())
}

/// `_looks_like_prose`.
fn looks_like_prose(candidate: &str) -> bool {
    if candidate.contains('\\')
        || candidate.contains([
            '=', '+', '-', '*', '/', '^', '<', '>', '[', ']', '{', '}', '(', ')',
        ])
    {
        return false;
    }
    word_count(candidate) >= 2
}

/// `_normalize_text`.
fn normalize_text(candidate: &str) -> String {
    let mut text = strip_delimiters(candidate);
    // `\text{…}`, `\mathrm{…}`, `\mbox{…}` without nested braces: their content.
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    'scan: while !rest.is_empty() {
        for command in ["\\text", "\\mathrm", "\\mbox"] {
            if let Some(after) = rest.strip_prefix(command) {
                let after_space = after.trim_start();
                if let Some(body) = after_space.strip_prefix('{')
                    && let Some(close) = body.find(['{', '}'])
                    && body[close..].starts_with('}')
                {
                    out.push_str(&body[..close]);
                    rest = &body[close + 1..];
                    continue 'scan;
                }
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    text = out.replace("\\ ", " ");
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed
        .trim_matches([' ', '\t', '\r', '\n', '.', ',', ';', ':'])
        .to_lowercase()
}

/// `_split_plain_equation`: the two sides of the one `=` outside brackets.
fn split_equation(text: &str) -> Option<(&str, &str)> {
    let mut depth = 0usize;
    let mut split = None;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(index, c)) in chars.iter().enumerate() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '=' if depth == 0 => {
                let previous = if k > 0 { chars[k - 1].1 } else { ' ' };
                let following = chars.get(k + 1).map_or(' ', |c| c.1);
                if "<>!=".contains(previous) && k > 0 || following == '=' {
                    continue;
                }
                if split.is_some() {
                    return None;
                }
                split = Some(index);
            }
            _ => {}
        }
    }
    split.map(|i| (&text[..i], &text[i + 1..]))
}

/// `_PERCENT_SUFFIX`: the text before a percent suffix.
fn percentage_base(candidate: &str) -> Option<&str> {
    let trimmed = candidate.trim_end();
    let lower = trimmed.to_lowercase();
    let mut cut = None;
    if let Some(before) = trimmed.strip_suffix('%') {
        cut = Some(before.strip_suffix('\\').unwrap_or(before).len());
    } else {
        for word in ["percentage", "percent", "pct"] {
            if lower.ends_with(word) {
                let before = &trimmed[..trimmed.len() - word.len()];
                // `\text{ percent }`.
                if let Some(open) = before.trim_end().strip_suffix('{')
                    && let Some(command) = open.trim_end().strip_suffix("\\text")
                {
                    cut = Some(command.len());
                } else if before.ends_with(char::is_whitespace) {
                    cut = Some(before.trim_end().len());
                }
                break;
            }
        }
        if cut.is_none()
            && let Some(before) = trimmed.strip_suffix('}')
        {
            let inner_start = before.rfind('{')?;
            let word = before[inner_start + 1..].trim().to_lowercase();
            let command = before[..inner_start].trim_end();
            if ["percent", "percentage", "pct"].contains(&word.as_str())
                && command.ends_with("\\text")
            {
                cut = Some(command.len() - 5);
            }
        }
    }
    let base = candidate[..cut?].trim_end();
    (!base.is_empty()).then_some(base)
}

/// `_parse_plain_expression` (its text rewrites, its equation split, then the builder).
fn parse_plain(candidate: &str) -> Result<Option<Expr>, Fail> {
    if candidate.contains('\\') {
        return Ok(None);
    }
    if candidate
        .match_indices('^')
        .any(|(i, _)| candidate[i + 1..].trim_start().starts_with('{'))
    {
        return Ok(None);
    }
    let mut text = candidate
        .trim()
        .replace('\u{00d7}', "*")
        .replace('\u{00f7}', "/")
        .replace('^', "**");
    if comma_number(&text) {
        text = text.replace(',', "");
    }
    if let Some((left, right)) = split_equation(&text) {
        let (left, right) = (left.to_owned(), right.to_owned());
        let l = parse_plain(&left)?;
        let r = parse_plain(&right)?;
        return match (l, r) {
            (Some(l), Some(r)) => Ok(Some(Expr::Rel(Rel::Eq, Box::new(l), Box::new(r)))),
            _ => Err(Fail::Parse),
        };
    }
    plain::parse(&text)
}

/// `_LATEX_COMMA_NUMBER`: `\s*-?\d{1,3}(?:,\d{3})+(?:\.\d+)?\s*`.
fn comma_number(text: &str) -> bool {
    let t = text.trim();
    let t = t.strip_prefix('-').unwrap_or(t);
    let (whole, decimals) = match t.split_once('.') {
        Some((w, d)) => (w, Some(d)),
        None => (t, None),
    };
    if decimals.is_some_and(|d| d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let groups: Vec<&str> = whole.split(',').collect();
    groups.len() > 1
        && (1..=3).contains(&groups[0].len())
        && groups
            .iter()
            .all(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()))
        && groups[1..].iter().all(|g| g.len() == 3)
}

/// The normalization Inspect gives latex2sympy2_extended.
const NORMALIZATION: NormalizationConfig = NormalizationConfig {
    basic_latex: true,
    units: true,
    malformed_operators: true,
    nits: true,
    boxed: BoxedMode::Last,
    equations: false,
};

/// `_parse_latex_expression`.
fn parse_latex_candidate(candidate: &str, exact: bool) -> Result<Option<Expr>, Fail> {
    let mut text = candidate.to_owned();
    for command in [
        "\\left", "\\right", "\\Bigl", "\\Bigr", "\\bigl", "\\bigr", "\\Big", "\\big", "\\Large",
        "\\large",
    ] {
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(i) = rest.find(command) {
            let after = &rest[i + command.len()..];
            out.push_str(&rest[..i]);
            if after.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                out.push_str(command);
            }
            rest = after;
        }
        out.push_str(rest);
        text = out;
    }
    let mut normalized = normalize::normalize(&text, &NORMALIZATION, exact);
    // `1\,234`: thin-space grouping is a thousands separator.
    if comma_number(&normalized.replace("\\,", ",")) && normalized.contains("\\,") {
        normalized = normalized.replace("\\,", ",");
    }
    if comma_number(&normalized) {
        let digits = normalized.trim().replace(',', "");
        return latex::parse_latex(&digits, &inspect_limits()).map_err(|_| Fail::Parse);
    }
    latex::parse_latex(&normalized, &inspect_limits()).map_err(|e| match e {
        MathError::TooManyNodes { .. } => Fail::Limit("parsed expression contains too many nodes"),
        MathError::TooDeep { .. } => Fail::Limit("parsed expression is nested too deeply"),
        _ => Fail::Parse,
    })
}

fn inspect_limits() -> Limits {
    Limits {
        answer: MAX_CANDIDATE_CHARS * 4,
        depth: MAX_EXPRESSION_DEPTH * 2,
        nodes: LIMIT_NODES * 4,
        digits: MAX_DIGIT_RUN,
        ..Limits::default()
    }
}

/// `_parse_expression`: plain first, then LaTeX.
fn parse_expression(candidate: &str, exact: bool) -> Result<Option<Expr>, Fail> {
    match parse_plain(candidate) {
        Ok(Some(expr)) => return Ok(Some(expr)),
        Err(Fail::Limit(reason)) => return Err(Fail::Limit(reason)),
        _ => {}
    }
    Ok(parse_latex_candidate(candidate, exact).unwrap_or(None))
}

/// `_validate_expression`: its limits, and whether it is too expensive to compare but by
/// structure.
fn validate_expression(expr: &Expr) -> Result<bool, Fail> {
    let mut nodes = 0usize;
    let mut symbols: Vec<&str> = Vec::new();
    let mut expensive = false;
    let mut stack = vec![(expr, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        nodes += 1;
        if nodes > LIMIT_NODES {
            return Err(Fail::Limit("parsed expression contains too many nodes"));
        }
        if depth > MAX_EXPRESSION_DEPTH {
            return Err(Fail::Limit("parsed expression is nested too deeply"));
        }
        match node {
            Expr::Num(n)
                if n.numer().bits() > MAX_INTEGER_BITS || n.denom().bits() > MAX_INTEGER_BITS =>
            {
                return Err(Fail::Limit("parsed integer is too large"));
            }
            // Sums, integrals and limits are kept as their text here: compared by structure.
            Expr::Sym(name) if name.starts_with('\\') => expensive = true,
            Expr::Sym(name) => {
                if name.chars().count() > MAX_SYMBOL_CHARS {
                    return Err(Fail::Limit("parsed symbol is too long"));
                }
                if !symbols.contains(&name.as_str()) {
                    symbols.push(name);
                }
                if symbols.len() > MAX_SYMBOLS {
                    return Err(Fail::Limit("parsed expression contains too many symbols"));
                }
            }
            Expr::Pow(_, exponent) => match &**exponent {
                Expr::Num(n)
                    if n.is_integer()
                        && (n.numer().magnitude().bits() > 64
                            || n.numer().magnitude() > &SYMBOLIC_POWER_EXPONENT_LIMIT.into()) =>
                {
                    expensive = true;
                }
                Expr::Pow(..) => expensive = true,
                _ => {}
            },
            Expr::Func(Func::Factorial, argument) => {
                if let Expr::Num(n) = &**argument
                    && n.is_integer()
                {
                    let value = n.numer().magnitude();
                    if value > &MAX_FACTORIAL_ARGUMENT.into() {
                        return Err(Fail::Limit("factorial argument is too large"));
                    }
                    if value > &100u32.into() {
                        expensive = true;
                    }
                }
            }
            _ => {}
        }
        match node {
            Expr::Add(v) | Expr::Mul(v) | Expr::Set(v) | Expr::Tuple(v) | Expr::And(v)
                if v.len() > 128 =>
            {
                return Err(Fail::Limit("parsed expression has too many arguments"));
            }
            _ => {}
        }
        let mut children = Vec::new();
        node.visit_children(&mut |c| children.push(c));
        stack.extend(children.into_iter().map(|c| (c, depth + 1)));
    }
    Ok(expensive)
}

/// `_parse_candidate`.
fn parse_candidate(candidate: &str, exact: bool) -> Result<Value, Fail> {
    let candidate = strip_delimiters(candidate);
    validate_candidate(&candidate)?;
    let mut expression = None;
    if let Some(base) = percentage_base(&candidate)
        && let Some(expr) = parse_expression(base, exact)?
    {
        expression = Some(Expr::Percent(Box::new(expr)));
    }
    if expression.is_none() && (looks_like_prose(&candidate) || short_composite(&candidate)) {
        return Ok(Value {
            expression: None,
            text: Some(normalize_text(&candidate)),
            source: candidate,
            expensive: false,
        });
    }
    if expression.is_none() {
        expression = parse_expression(&candidate, exact)?;
    }
    if let Some(expr) = expression {
        let expensive = validate_expression(&expr)?;
        return Ok(Value {
            expression: Some(expr),
            text: None,
            source: candidate,
            expensive,
        });
    }
    if let Some((_, right)) = split_equation(&candidate)
        && let Ok(value) = parse_candidate(right, exact)
    {
        return Ok(value);
    }
    let text = normalize_text(&candidate);
    if !text.is_empty() && has_word(&text) {
        return Ok(Value {
            expression: None,
            text: Some(text),
            source: candidate,
            expensive: false,
        });
    }
    Err(Fail::Parse)
}

/// `_parse_first`.
fn parse_first(candidates: &[String], exact: bool) -> Result<Value, Fail> {
    let mut error = Fail::Parse;
    for candidate in candidates {
        match parse_candidate(candidate, exact) {
            Ok(value) => return Ok(value),
            Err(e @ (Fail::Limit(_) | Fail::Unsafe)) => return Err(e),
            Err(e) => error = e,
        }
    }
    Err(error)
}

/// `_equality_value`: the value side of `x = 2` (or `2 = x`).
fn equality_value(expr: &Expr) -> Option<&Expr> {
    let Expr::Rel(Rel::Eq, lhs, rhs) = expr else {
        return None;
    };
    let symbol = |e: &Expr| matches!(e, Expr::Sym(_));
    Some(if symbol(rhs) && !symbol(lhs) {
        lhs
    } else {
        rhs
    })
}

/// `_expression_equivalent`.
fn equivalent(target: &Value, answer: &Value, ctx: &mut Ctx<'_>) -> Result<bool, MathError> {
    if target.text.is_some() || answer.text.is_some() {
        return Ok(target.text.is_some() && target.text == answer.text);
    }
    let (Some(left), Some(right)) = (&target.expression, &answer.expression) else {
        return Ok(false);
    };
    let (mut left, mut right) = (left, right);
    if !left.is_relation()
        && let Some(value) = equality_value(right)
    {
        right = value;
    } else if !right.is_relation()
        && let Some(value) = equality_value(left)
    {
        left = value;
    }
    if left == right {
        return Ok(true);
    }
    if target.expensive || answer.expensive {
        return Ok(false);
    }
    same(left, right, ctx)
}

/// sympy's `==`, then `.equals()`, then Inspect's numeric comparison.
fn same(left: &Expr, right: &Expr, ctx: &mut Ctx<'_>) -> Result<bool, MathError> {
    if left == right {
        return Ok(true);
    }
    if let (Expr::Matrix(r1, a), Expr::Matrix(r2, b)) = (left, right) {
        if r1 != r2 || a.len() != b.len() {
            return Ok(false);
        }
        for (x, y) in a.iter().zip(b) {
            if !same(x, y, ctx)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    match (left, right) {
        (Expr::Rel(r1, a1, b1), Expr::Rel(r2, a2, b2)) => {
            // `Relational.equals`: the same relation, or the reversed one.
            return Ok((r1 == r2 && same(a1, a2, ctx)? && same(b1, b2, ctx)?)
                || (r1.flipped() == *r2 && same(a1, b2, ctx)? && same(b1, a2, ctx)?));
        }
        (Expr::Set(x), Expr::Set(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            let mut used = vec![false; y.len()];
            for a in x {
                let mut found = false;
                for (i, b) in y.iter().enumerate() {
                    if !used[i] && same(a, b, ctx)? {
                        used[i] = true;
                        found = true;
                        break;
                    }
                }
                if !found {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        (Expr::Tuple(x), Expr::Tuple(y))
        | (Expr::Union(x), Expr::Union(y))
        | (Expr::And(x), Expr::And(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            for (a, b) in x.iter().zip(y) {
                if !same(a, b, ctx)? {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        (Expr::Interval(s1, e1, l1, r1), Expr::Interval(s2, e2, l2, r2)) => {
            return Ok(l1 == l2 && r1 == r2 && same(s1, s2, ctx)? && same(e1, e2, ctx)?);
        }
        _ => {}
    }
    if left.is_relation() || right.is_relation() || left.is_set() || right.is_set() {
        return Ok(false);
    }
    // `.equals()`: the same value, exactly where both are exact, else numerically.
    if numeric::same_value(left, right, ctx)? {
        return Ok(true);
    }
    numeric_equivalent(left, right, ctx)
}

/// `_numeric_equivalent`: numbers, not both exact and algebraic, within 10⁻¹⁰.
fn numeric_equivalent(left: &Expr, right: &Expr, ctx: &mut Ctx<'_>) -> Result<bool, MathError> {
    if left.has_symbols() || right.has_symbols() {
        return Ok(false);
    }
    let algebraic = |e: &Expr| {
        let mut ok = !e.has_float();
        e.visit(&mut |n| {
            if matches!(
                n,
                Expr::Pi | Expr::E | Expr::Inf | Expr::Log(..) | Expr::Func(..)
            ) {
                ok = false;
            }
        });
        ok
    };
    let (a, b) = (algebraic(left), algebraic(right));
    if a && b {
        return Ok(false);
    }
    // Two exact values (π against a fraction) are never equal under exact semantics.
    if ctx.options.semantics == Semantics::Exact && !left.has_float() && !right.has_float() {
        return Ok(false);
    }
    let (x, y) = (left.eval(&|_| f64::NAN), right.eval(&|_| f64::NAN));
    if !(x.is_finite() && y.is_finite()) {
        return Ok(false);
    }
    let error = (x - y).abs();
    let scale = x.abs().max(y.abs()).max(1e-10);
    Ok(error < 1e-10 || error / scale < 1e-10)
}

/// Inspect AI 0.3.285's `math()` scorer on one completion against its targets (see the
/// [module docs](self)), with exact verdicts.
///
/// # Errors
/// [`MathError::GoldUnreadable`] where no target can be read (Inspect raises, and the sample
/// is unscored), and [`MathError::TooMuchWork`] or a deadline where comparing exactly runs
/// past the [`Budget`].
pub fn inspect_math(completion: &str, targets: &[&str]) -> Result<InspectMathScore, MathError> {
    inspect_math_with(completion, targets, Semantics::Exact)
}

/// [`inspect_math`] with Inspect's own verdicts where `semantics` is
/// [`Semantics::Parity`].
///
/// # Errors
/// As [`inspect_math`].
pub fn inspect_math_with(
    completion: &str,
    targets: &[&str],
    semantics: Semantics,
) -> Result<InspectMathScore, MathError> {
    let exact = semantics == Semantics::Exact;
    let mut parsed_targets = Vec::new();
    for target in targets {
        if let Ok(value) = parse_first(&target_candidates(target), exact) {
            parsed_targets.push(value);
        }
    }
    if parsed_targets.is_empty() {
        return Err(MathError::GoldUnreadable {
            grader: "inspect_math",
            gold: excerpt(targets.first().copied().unwrap_or_default()),
        });
    }
    let options = VerifyOptions {
        semantics,
        ..VerifyOptions::default()
    };
    let mut budget = Budget::new();
    let mut ctx = Ctx {
        options: &options,
        budget: &mut budget,
    };
    let failed = |status, reason: String| InspectMathScore {
        status,
        answer: Some(completion.to_owned()),
        reason: Some(reason),
    };
    let candidates = match answer_candidates(completion) {
        Ok(c) => c,
        Err(Fail::Limit(reason)) => {
            return Ok(failed(
                InspectMathStatus::AnswerLimit,
                format!("Mathematical answer exceeded a complexity limit: {reason}."),
            ));
        }
        Err(_) => {
            return Ok(failed(
                InspectMathStatus::AnswerParseError,
                "Could not parse mathematical answer: could not extract mathematical answer."
                    .to_owned(),
            ));
        }
    };
    let answer = match parse_first(&candidates, exact) {
        Ok(answer) => answer,
        Err(Fail::Limit(reason)) => {
            return Ok(failed(
                InspectMathStatus::AnswerLimit,
                format!("Mathematical answer exceeded a complexity limit: {reason}."),
            ));
        }
        Err(Fail::Unsafe) => {
            return Ok(failed(
                InspectMathStatus::AnswerParseError,
                "Could not parse mathematical answer: expression contains non-mathematical code syntax."
                    .to_owned(),
            ));
        }
        Err(Fail::Parse) => {
            return Ok(failed(
                InspectMathStatus::AnswerParseError,
                "Could not parse mathematical answer: could not parse mathematical answer."
                    .to_owned(),
            ));
        }
    };
    let mut correct = false;
    for target in &parsed_targets {
        if equivalent(target, &answer, &mut ctx)? {
            correct = true;
            break;
        }
    }
    let mut shown = answer.source.clone();
    if !correct && answer.expression.is_none() {
        // `_matching_expression_candidate`: a bare number the prose answer masked.
        'candidates: for candidate in &candidates {
            let parsed = match parse_candidate(candidate, exact) {
                Ok(parsed) => parsed,
                Err(Fail::Limit(reason)) => {
                    return Ok(failed(
                        InspectMathStatus::AnswerLimit,
                        format!("Mathematical answer exceeded a complexity limit: {reason}."),
                    ));
                }
                Err(Fail::Unsafe) => {
                    return Ok(failed(
                        InspectMathStatus::AnswerParseError,
                        "Could not parse mathematical answer: expression contains non-mathematical code syntax."
                            .to_owned(),
                    ));
                }
                Err(Fail::Parse) => continue,
            };
            if parsed.expression.is_some() {
                for target in &parsed_targets {
                    if equivalent(target, &parsed, &mut ctx)? {
                        correct = true;
                        shown = parsed.source.clone();
                        break 'candidates;
                    }
                }
            }
        }
    }
    let answer: String = shown.chars().take(MAX_CANDIDATE_CHARS).collect();
    Ok(InspectMathScore {
        status: if correct {
            InspectMathStatus::Correct
        } else {
            InspectMathStatus::Incorrect
        },
        answer: Some(answer),
        reason: None,
    })
}
