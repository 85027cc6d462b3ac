//! Why this file is long: math-verify's extraction regexes are one module in the anchor
//! (`math_verify/parser.py`), and their scanners read best beside each other, in its order;
//! the string targets' scanners (at the end) share the others' candidates and helpers.
//!
//! Where math-verify finds the answer in a text: its regular expressions (LaTeX environments,
//! `\boxed{}`, "answer", "final answer ... is", plain numbers and expressions), written as
//! scanners that run in time linear in the text for each start position they try, with the
//! same priorities and the same order of attempts (rightmost match first within a priority).

use super::config::{ExtractionTarget, StringExtractionConfig};
use super::normalize::Boxed;
use super::scan::{self, Scan, is_py_space};

/// One place an answer may be, as math-verify's regexes find it.
#[derive(Debug, Clone)]
pub(crate) enum Found {
    /// LaTeX environments (one, or several joined by "and", "or", commas): each part's
    /// content, whether a percent sign follows it, and which boxed contents to keep.
    Latex(Vec<(String, bool, Boxed)>),
    /// A number: its digits (integer part without separators, then the decimals) and whether
    /// it is a percentage.
    Number(String, bool),
    /// A plain expression (`1/2`, `(9+1)`).
    Plain(String),
    /// One of a string target's strings.
    Str(String),
}

/// A match: its span and what it found.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub start: usize,
    pub end: usize,
    pub found: Found,
    /// The extraction target (its index in the configuration) that found it.
    pub target: usize,
}

/// One of a target's regular expressions, as a scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    /// "final answer is … I hope" (priority 0).
    Hope,
    /// "final answer … is" (50).
    FinalIs,
    /// "answer:" (100).
    AnswerColon,
    /// "answer" (200).
    Answer,
    /// A string at the start of the text (250, strings only).
    Start,
    /// Anywhere (300).
    Anywhere,
    /// LaTeX environments holding `\boxed{}`, at the boxed priority.
    BoxedEnvs,
    /// `\boxed{.+}`, at the boxed priority.
    PlainBoxed,
}

/// A target's regular expressions with their priorities, in the anchor's order (at most eight,
/// without allocating).
fn patterns(target: &ExtractionTarget) -> impl Iterator<Item = (Pattern, i32)> {
    let mut out: [Option<(Pattern, i32)>; 7] = [
        Some((Pattern::Hope, 0)),
        Some((Pattern::FinalIs, 50)),
        Some((Pattern::AnswerColon, 100)),
        Some((Pattern::Answer, 200)),
        None,
        None,
        None,
    ];
    match target {
        ExtractionTarget::Latex(config) => {
            if config.try_extract_without_anchor {
                out[4] = Some((Pattern::Anywhere, 300));
            }
            if config.boxed_match_priority >= 0 {
                out[5] = Some((Pattern::BoxedEnvs, config.boxed_match_priority));
                out[6] = Some((Pattern::PlainBoxed, config.boxed_match_priority));
            }
        }
        ExtractionTarget::Expr(config) => {
            if config.try_extract_without_anchor {
                out[4] = Some((Pattern::Anywhere, 300));
            }
        }
        ExtractionTarget::String(config) => {
            if config.try_extract_without_anchor {
                out[4] = Some((Pattern::Start, 250));
                out[5] = Some((Pattern::Anywhere, 300));
            }
        }
    }
    out.into_iter().flatten()
}

/// The priorities the targets use, most important first, without repeats.
pub(crate) fn priorities(targets: &[ExtractionTarget]) -> Vec<i32> {
    let mut all = Vec::with_capacity(8);
    for target in targets {
        for (_, p) in patterns(target) {
            if !all.contains(&p) {
                all.push(p);
            }
        }
    }
    all.sort_unstable();
    all
}

/// The candidates of one priority, in the order math-verify tries them (rightmost end first,
/// then leftmost start, then the order of the targets and their patterns). Groups are made
/// one at a time, as math-verify stops at the first priority that yields an answer.
pub(crate) fn group(s: &Scan<'_>, targets: &[ExtractionTarget], priority: i32) -> Vec<Candidate> {
    let mut group = Vec::new();
    for (index, target) in targets.iter().enumerate() {
        for (pattern, p) in patterns(target) {
            if p != priority {
                continue;
            }
            let mut found = matches(s, target, pattern);
            for c in &mut found {
                c.target = index;
            }
            if group.is_empty() {
                group = found;
            } else {
                group.append(&mut found);
            }
        }
    }
    group.sort_by(|a, b| b.end.cmp(&a.end).then(a.start.cmp(&b.start)));
    group
}

/// The matches of one pattern of one target.
fn matches(s: &Scan<'_>, target: &ExtractionTarget, pattern: Pattern) -> Vec<Candidate> {
    match target {
        ExtractionTarget::Latex(_) => match pattern {
            Pattern::Hope => hope(s, |t, q| latex_chains(t, q, false)),
            Pattern::FinalIs => final_answer(s, true),
            Pattern::AnswerColon => after_answer(s, true, true),
            Pattern::Answer => after_answer(s, false, true),
            Pattern::Anywhere => find_all(s, |t, i| latex_chain(t, i, false)),
            Pattern::BoxedEnvs => boxed_envs(s),
            Pattern::PlainBoxed => plain_boxed(s),
            Pattern::Start => Vec::new(),
        },
        ExtractionTarget::Expr(_) => match pattern {
            Pattern::Hope => hope(s, expr_or_number_after_spaces),
            Pattern::FinalIs => final_answer(s, false),
            Pattern::AnswerColon => after_answer(s, true, false),
            Pattern::Answer => after_answer(s, false, false),
            Pattern::Anywhere => {
                let mut g = find_all(s, expr_anchored);
                g.extend(find_all(s, number_anchored));
                g
            }
            _ => Vec::new(),
        },
        ExtractionTarget::String(config) => {
            string_matches(s.text, config, pattern_priority(pattern))
        }
    }
}

fn pattern_priority(pattern: Pattern) -> i32 {
    match pattern {
        Pattern::Hope => 0,
        Pattern::FinalIs => 50,
        Pattern::AnswerColon => 100,
        Pattern::Answer => 200,
        Pattern::Start => 250,
        Pattern::Anywhere | Pattern::BoxedEnvs | Pattern::PlainBoxed => 300,
    }
}

/// `(?i:final answer is)\:?\s*{X}\.?\s?I hope`: `X` found by `chains` at a position (each
/// of its possible ends, longest first).
fn hope(s: &Scan<'_>, chains: impl Fn(&Scan<'_>, usize) -> Vec<(usize, Found)>) -> Vec<Candidate> {
    let text = s.text;
    after_word(text, "final answer is", |after| {
        let mut q = after;
        if text[q..].starts_with(':') {
            q += 1;
        }
        chains(s, q).into_iter().find_map(|(end, found)| {
            let mut e = end;
            if text[e..].starts_with('.') {
                e += 1;
            }
            let with_space = text[e..]
                .chars()
                .next()
                .filter(|c| is_py_space(*c))
                .map(|c| e + c.len_utf8());
            [with_space, Some(e)]
                .into_iter()
                .flatten()
                .find(|&k| text[k..].starts_with("I hope"))
                .map(|k| (k + "I hope".len(), found))
        })
    })
}

/// `\s*` then a LaTeX chain (the spaces given back one by one, for the ` […] ` environment
/// that starts with one): every end, longest chain first.
fn latex_chains(s: &Scan<'_>, q: usize, boxed: bool) -> Vec<(usize, Found)> {
    let text = s.text;
    let rest = &text[q..];
    let spaces = rest.len() - rest.trim_start_matches(is_py_space).len();
    let mut starts: Vec<usize> = vec![q + spaces];
    if spaces > 0 {
        let back = char_before(text, q + spaces).map_or(1, char::len_utf8);
        starts.push(q + spaces - back);
    }
    let mut out = Vec::new();
    for start in starts {
        if let Some(m) = latex_chain(s, start, boxed) {
            out.push(m);
        }
    }
    out
}

/// `\s*` then a number or plain expression with its prefix (`\s`, `=` or the start).
fn expr_or_number_after_spaces(s: &Scan<'_>, q: usize) -> Vec<(usize, Found)> {
    let text = s.text;
    let rest = &text[q..];
    let spaces = rest.len() - rest.trim_start_matches(is_py_space).len();
    // The prefix needs a space (or `=`): the spaces are given back from the longest run.
    let mut out = Vec::new();
    let mut k = q + spaces;
    loop {
        if let Some(m) = expr_or_number(s, k) {
            out.push(m);
            break;
        }
        if k == q {
            break;
        }
        k -= char_before(text, k).map_or(1, char::len_utf8);
    }
    out
}

/// `re.finditer` for a matcher tried at each position: non-overlapping, left to right.
fn find_all(
    s: &Scan<'_>,
    matcher: impl Fn(&Scan<'_>, usize) -> Option<(usize, Found)>,
) -> Vec<Candidate> {
    let text = s.text;
    let mut out = Vec::new();
    let mut i = 0;
    while i <= text.len() {
        if let Some((end, found)) = matcher(s, i) {
            out.push(Candidate {
                start: i,
                end,
                found,
                target: 0,
            });
            i = if end > i { end } else { next_char(text, i) };
        } else {
            i = next_char(text, i);
        }
    }
    out
}

fn next_char(text: &str, i: usize) -> usize {
    text[i..].chars().next().map_or(i + 1, |c| i + c.len_utf8())
}

fn char_before(text: &str, i: usize) -> Option<char> {
    text[..i].chars().next_back()
}

/// One LaTeX environment at `i`: its end, content and whether it is `\boxed` context only.
fn latex_env(s: &Scan<'_>, i: usize, boxed: bool) -> Option<(usize, String)> {
    let text = s.text;
    let rest = &text[i..];
    let not_escaped = |j: usize| char_before(text, j) != Some('\\');
    let accept = |end: usize, from: usize, to: usize| -> Option<(usize, String)> {
        if to <= from || (boxed && !s.has_box(from, to)) {
            return None;
        }
        Some((end, text[from..to].to_owned()))
    };
    // $$...$$
    if rest.starts_with("$$")
        && not_escaped(i)
        && let Some(close) = s.next_dollars(i + 2).filter(|&c| c > i + 2)
        && not_escaped(close)
        && let Some(m) = accept(close + 2, i + 2, close)
    {
        return Some(m);
    }
    // \[...\]
    if rest.starts_with("\\[")
        && not_escaped(i)
        && let Some(close) = s.next_close_bracket(i + 2).filter(|&c| c > i + 2)
        && not_escaped(close)
        && let Some(m) = accept(close + 2, i + 2, close)
    {
        return Some(m);
    }
    // $...$ on one line, not after a backslash or a digit.
    if rest.starts_with('$')
        && !matches!(char_before(text, i), Some(c) if c == '\\' || c.is_ascii_digit())
    {
        let body = &rest[1..];
        let mut j = 0;
        let bytes = body.as_bytes();
        while j < bytes.len() {
            match bytes[j] {
                b'\n' => break,
                b'\\' if bytes.get(j + 1) == Some(&b'$') => j += 2,
                b'$' => {
                    if j > 0
                        && let Some(m) = accept(i + 1 + j + 1, i + 1, i + 1 + j)
                    {
                        return Some(m);
                    }
                    break;
                }
                _ => j += 1,
            }
        }
    }
    // \(...\) on one line.
    if rest.starts_with("\\(")
        && not_escaped(i)
        && let Some(close) = s.next_close_paren(i + 2).filter(|&c| c > i + 2)
    {
        let line = s.next_newline(i + 2).unwrap_or(text.len());
        if close < line
            && let Some(m) = accept(close + 2, i + 2, close)
        {
            return Some(m);
        }
    }
    // ` [...] `
    if rest.starts_with(is_py_space) {
        let c = rest.chars().next().map_or(1, char::len_utf8);
        if rest[c..].starts_with('[') {
            let body = &rest[c + 1..];
            if let Some(close) = body.find(['\n', ']', '['])
                && close > 0
                && body[close..].starts_with(']')
                && body[close + 1..].starts_with(is_py_space)
            {
                let end = i
                    + c
                    + 1
                    + close
                    + 1
                    + body[close + 1..].chars().next().map_or(1, char::len_utf8);
                if let Some(m) = accept(end, i + c + 1, i + c + 1 + close) {
                    return Some(m);
                }
            }
        }
    }
    // -\frac{1}{2} with plain numbers, outside any environment.
    if !boxed {
        let (sign, after) = match rest.strip_prefix('-') {
            Some(after) => (1, after),
            None => (0, rest),
        };
        if let Some(after) = after.strip_prefix("\\frac{") {
            let num = simple_number(after)?;
            let after2 = after[num..].strip_prefix("}{")?;
            let den = simple_number(after2)?;
            if after2[den..].starts_with('}') {
                let len = sign + 6 + num + 2 + den + 1;
                return Some((i + len, rest[..len].to_owned()));
            }
        }
    }
    None
}

/// `-?\d+(?:[.,]\d+)?` at the start of `text`: its length.
fn simple_number(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    i += digits;
    if matches!(b.get(i), Some(b'.' | b',')) {
        let more = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if more > 0 {
            i += 1 + more;
        }
    }
    Some(i)
}

/// `\s*` then a percent word or sign, at `i`: the end after it.
fn percent_after(text: &str, i: usize, latex: bool) -> Option<usize> {
    let rest = &text[i..];
    let trimmed = rest.trim_start_matches(is_py_space);
    let at = i + rest.len() - trimmed.len();
    let words: &[&str] = if latex {
        &["\\%", "%", "Percent", "percent", "Pct", "pct"]
    } else {
        &["%", "Percent", "percent", "Pct", "pct"]
    };
    words
        .iter()
        .find(|w| trimmed.starts_with(**w))
        .map(|w| at + w.len())
}

/// Up to six LaTeX environments joined by "and", "or" or commas, at `i`.
fn latex_chain(s: &Scan<'_>, i: usize, boxed: bool) -> Option<(usize, Found)> {
    let text = s.text;
    let (mut end, content) = latex_env(s, i, boxed)?;
    let boxed_mode = Boxed::All;
    let mut parts = Vec::new();
    let percent = percent_after(text, end, true);
    if let Some(p) = percent {
        end = p;
    }
    parts.push((content, percent.is_some(), boxed_mode));
    for _ in 0..5 {
        let rest = &text[end..];
        let trimmed = rest.trim_start_matches(is_py_space);
        let mut at = end + rest.len() - trimmed.len();
        let Some(sep) = [",and", "and", ",or", "or", ","]
            .iter()
            .find(|s| trimmed.starts_with(**s))
        else {
            break;
        };
        at += sep.len();
        let rest = &text[at..];
        at += rest.len() - rest.trim_start_matches(is_py_space).len();
        // The separator's spaces may also be the ` [` environment's own space.
        let next = latex_env(s, at, boxed).or_else(|| {
            let back = char_before(text, at).filter(|c| is_py_space(*c))?;
            latex_env(s, at - back.len_utf8(), boxed)
        });
        let Some((next_end, next_content)) = next else {
            break;
        };
        end = next_end;
        let percent = percent_after(text, end, true);
        if let Some(p) = percent {
            end = p;
        }
        parts.push((next_content, percent.is_some(), boxed_mode));
    }
    Some((end, Found::Latex(parts)))
}

/// Environments that hold a `\boxed{}` (their content normalised keeping every box).
fn boxed_envs(s: &Scan<'_>) -> Vec<Candidate> {
    let text = s.text;
    if !scan::contains(text, "\\boxed") {
        return Vec::new();
    }
    find_all(s, |t, i| latex_chain(t, i, true))
}

/// `\boxed{.+}`: from the first `\boxed{` to the last `}` (its last box kept).
fn plain_boxed(s: &Scan<'_>) -> Vec<Candidate> {
    let text = s.text;
    let Some(start) = scan::find(text, "\\boxed{") else {
        return Vec::new();
    };
    let Some(last) = text.rfind('}') else {
        return Vec::new();
    };
    if last < start + 8 {
        return Vec::new();
    }
    vec![Candidate {
        start,
        end: last + 1,
        found: Found::Latex(vec![(text[start..=last].to_owned(), false, Boxed::Last)]),
        target: 0,
    }]
}

/// Case-insensitive ASCII occurrences of `word`.
fn occurrences<'t>(text: &'t str, word: &'t str) -> impl Iterator<Item = usize> + 't {
    let lower = word.as_bytes();
    let bytes = text.as_bytes();
    // Each occurrence of the first letter in either case (memchr's vectorized search), then
    // the rest.
    let first = lower[0];
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), bytes).filter(move |&i| {
        bytes.get(i..i + lower.len()).is_some_and(|window| {
            window
                .iter()
                .zip(lower)
                .all(|(a, b)| a.to_ascii_lowercase() == *b)
        })
    })
}

/// The byte offset `n` characters after `i` (or the end).
fn chars_after(text: &str, i: usize, n: usize) -> usize {
    text[i..]
        .char_indices()
        .nth(n)
        .map_or(text.len(), |(k, _)| i + k)
}

/// Positions from `from` to `n` characters later, inclusive.
pub(crate) fn positions(text: &str, from: usize, n: usize, dotall: bool) -> Vec<usize> {
    let mut out = vec![from];
    for (k, c) in text[from..].char_indices().take(n + 1) {
        if k > 0 {
            out.push(from + k);
        }
        // Without DOTALL, `.` does not consume a line break: it is the last position.
        if !dotall && c == '\n' {
            return out;
        }
    }
    if text[from..].chars().count() <= n {
        out.push(text.len());
    }
    out.dedup();
    out
}

/// The matches of `word` then what `find` finds after it (its end and what it found), left
/// to right and not overlapping, as `re.finditer` gives them.
pub(crate) fn after_word(
    text: &str,
    word: &str,
    mut find: impl FnMut(usize) -> Option<(usize, Found)>,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    let mut resume = 0;
    for start in occurrences(text, word) {
        if start < resume {
            continue;
        }
        if let Some((end, found)) = find(start + word.len()) {
            out.push(Candidate {
                start,
                end,
                found,
                target: 0,
            });
            resume = end;
        }
    }
    out
}

/// "final answer ... is" then LaTeX (`latex`) or a number or expression.
fn final_answer(s: &Scan<'_>, latex: bool) -> Vec<Candidate> {
    let text = s.text;
    after_word(text, "final answer", |after| {
        // `.{0,100}?`: LaTeX's patterns are compiled with DOTALL, the others stop at a line
        // break.
        positions(text, after, 100, latex)
            .into_iter()
            .find_map(|p| {
                let rest = &text[p..];
                let spaces = rest.len() - rest.trim_start_matches(is_py_space).len();
                if spaces == 0 {
                    return None;
                }
                let mut q = p + spaces;
                // `is` is outside the case-insensitive group.
                if !text[q..].starts_with("is") {
                    return None;
                }
                q += 2;
                if text[q..].starts_with(':') {
                    q += 1;
                }
                if latex {
                    latex_chains(s, q, false).into_iter().next()
                } else {
                    expr_or_number(s, q)
                }
            })
    })
}

/// "answer" (with a colon where `colon`) then, within 50 characters, LaTeX (`latex`) or a
/// number or expression (for those, the last `=` within 100 characters is tried first).
fn after_answer(s: &Scan<'_>, colon: bool, latex: bool) -> Vec<Candidate> {
    let text = s.text;
    let word = if colon { "answer:" } else { "answer" };
    after_word(text, word, |after| {
        if latex {
            positions(text, after, 50, true)
                .into_iter()
                .find_map(|p| latex_chain(s, p, false))
        } else {
            answer_expr(s, after)
        }
    })
}

/// `(?:.{0,100}=\s*|.{0,50}?){expr_or_number}(?!\s*=)` at `after`.
fn answer_expr(s: &Scan<'_>, after: usize) -> Option<(usize, Found)> {
    let text = s.text;
    let not_followed_by_eq =
        |end: usize| !text[end..].trim_start_matches(is_py_space).starts_with('=');
    // `.` stops at a line break: the `=` and the lazy start are looked for before it.
    let line_end = text[after..].find('\n').map_or(text.len(), |k| after + k);
    let limit = chars_after(text, after, 100).min(line_end);
    let through = text[limit..]
        .chars()
        .next()
        .map_or(limit, |c| limit + c.len_utf8());
    let mut equals: Vec<usize> = text[after..through.min(line_end)]
        .char_indices()
        .filter(|&(_, c)| c == '=')
        .map(|(k, _)| after + k)
        .collect();
    equals.reverse();
    for e in equals {
        let start = e + 1;
        let rest = &text[start..];
        let spaces: Vec<usize> = std::iter::once(start)
            .chain(
                rest.char_indices()
                    .skip(1)
                    .take_while(|_| true)
                    .map(|(k, _)| start + k),
            )
            .take_while(|&p| p == start || text[start..p].chars().all(is_py_space))
            .collect();
        for &p in spaces.iter().rev() {
            if let Some((end, found)) = expr_or_number(s, p)
                && not_followed_by_eq(end)
            {
                return Some((end, found));
            }
        }
    }
    positions(text, after, 50, false)
        .into_iter()
        .find_map(|p| expr_or_number(s, p).filter(|(end, _)| not_followed_by_eq(*end)))
}

fn expr_or_number(s: &Scan<'_>, i: usize) -> Option<(usize, Found)> {
    expr_anchored(s, i).or_else(|| number_anchored(s, i))
}

/// The prefix `(?:^|\s|=)(?:\*\*)?`: the positions after it.
fn prefixes(text: &str, i: usize) -> impl Iterator<Item = usize> {
    let mut out = [None; 4];
    let first = text[i..].chars().next();
    let after = first
        .filter(|&c| is_py_space(c) || c == '=')
        .map(|c| i + c.len_utf8());
    if i == 0 || after.is_some() {
        let starts = [(i == 0).then_some(0), after];
        for (k, s) in starts.into_iter().enumerate() {
            if let Some(s) = s {
                if text[s..].starts_with("**") {
                    out[2 * k] = Some(s + 2);
                }
                out[2 * k + 1] = Some(s);
            }
        }
    }
    out.into_iter().flatten()
}

const CURRENCIES: &str = "$€£¥₹₽₪₩₫฿₡₢₣₤₥₦₧₨₩₪₫₭₮₯₰₱₲₳₴₵₶₷₸₹₺₻₼₽₾₿";

/// A number after a prefix (and an optional currency sign) at `i`.
fn number_anchored(s: &Scan<'_>, i: usize) -> Option<(usize, Found)> {
    let text = s.text;
    for start in prefixes(text, i) {
        // After a currency sign first, then at the sign.
        let after_currency = text[start..]
            .chars()
            .next()
            .filter(|&c| CURRENCIES.contains(c))
            .map(|c| start + c.len_utf8());
        for at in [after_currency, Some(start)].into_iter().flatten() {
            if let Some((end, integer, decimal)) = number_at(text, at) {
                let (end, percent) = match percent_after(text, end, false) {
                    Some(p) => (p, true),
                    None => (end, false),
                };
                let mut integer: String =
                    integer.chars().filter(|c| *c != ',' && *c != ' ').collect();
                let negative = integer.starts_with('-');
                let digits = integer.trim_start_matches('-').trim_start_matches('0');
                integer = if digits.is_empty() && !negative {
                    "0".to_owned()
                } else if negative {
                    format!("-{digits}")
                } else {
                    digits.to_owned()
                };
                if integer == "-" {
                    integer = "-0".to_owned();
                }
                let decimal = decimal.replace(',', ".");
                return Some((end, Found::Number(format!("{integer}{decimal}"), percent)));
            }
        }
    }
    None
}

/// math-verify's `number_re` at `i`: the end, the integer part and the decimal part.
fn number_at(text: &str, i: usize) -> Option<(usize, String, String)> {
    let b = text.as_bytes();
    let digits_from = |k: usize| {
        b[k.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let sign = usize::from(b.get(i) == Some(&b'-'));
    let s = i + sign;
    // 1: thousands separated.
    if b.get(s).is_some_and(|c| (b'1'..=b'9').contains(c)) {
        for extra in (0..=2).rev() {
            if digits_from(s + 1) < extra {
                continue;
            }
            let mut k = s + 1 + extra;
            let mut groups = 0;
            while matches!(b.get(k), Some(b' ' | b',')) && digits_from(k + 1) >= 3 {
                k += 4;
                groups += 1;
            }
            if groups > 0 {
                let integer = text[i..k].to_owned();
                let mut decimal = String::new();
                if b.get(k) == Some(&b'.') && digits_from(k + 1) > 0 {
                    let n = digits_from(k + 1);
                    decimal = text[k..k + 1 + n].to_owned();
                    k += 1 + n;
                }
                return Some((k, integer, decimal));
            }
        }
    }
    // 2: with a decimal point or comma.
    let n = digits_from(s);
    if n > 0 && matches!(b.get(s + n), Some(b'.' | b',')) && digits_from(s + n + 1) > 0 {
        let m = digits_from(s + n + 1);
        return Some((
            s + n + 1 + m,
            text[i..s + n].to_owned(),
            text[s + n..s + n + 1 + m].to_owned(),
        ));
    }
    // 3: decimals only.
    if b.get(i) == Some(&b'.') && digits_from(i + 1) > 0 {
        let m = digits_from(i + 1);
        return Some((i + 1 + m, String::new(), text[i..i + 1 + m].to_owned()));
    }
    // 4: an integer.
    if n > 0 {
        return Some((s + n, text[i..s + n].to_owned(), String::new()));
    }
    None
}

/// A plain expression (at least one operator, starting with a digit) after a prefix at `i`,
/// followed by punctuation, a space, `)`, `$` or the end.
fn expr_anchored(s: &Scan<'_>, i: usize) -> Option<(usize, Found)> {
    let text = s.text;
    for start in prefixes(text, i) {
        let b = text.as_bytes();
        let mut k = start;
        if b.get(k) == Some(&b'-') {
            k += 1;
        }
        if b.get(k) == Some(&b'(') {
            k += 1;
        }
        if b.get(k) == Some(&b'-') {
            k += 1;
        }
        if !b.get(k).is_some_and(u8::is_ascii_digit) {
            continue;
        }
        let first = k + 1;
        let run_end = s.run_end(first);
        // The furthest end where the suffix matches: the run's end, or the last `.`, `)` or
        // space inside the run.
        let end_at = |e: usize| -> Option<usize> {
            let rest = &text[e..];
            let (rest, skip) = match rest.strip_prefix("**") {
                Some(r) => (r, 2),
                None => (rest, 0),
            };
            match rest.chars().next() {
                None => Some(e + skip),
                Some(c)
                    if c == '.'
                        || c == ','
                        || c == ':'
                        || is_py_space(c)
                        || c == ')'
                        || c == '$' =>
                {
                    Some(e + skip + c.len_utf8())
                }
                _ => None,
            }
        };
        let (e, end) = match end_at(run_end) {
            Some(end) => (run_end, end),
            None => match s.prev_suffix(run_end).filter(|&p| p >= first) {
                Some(p) => (p, end_at(p)?),
                None => continue,
            },
        };
        // An operator with at least one character after it, before `e`.
        if e > first && s.last_op_ending(e - 1).is_some_and(|o| o >= first) {
            return Some((end, Found::Plain(text[start..e].to_owned())));
        }
    }
    None
}

// math-verify's `StringExtractionConfig`
// (multiple-choice letters), as scanners: "final answer is X. I hope", "final answer … is X",
// "answer: … X", "answer … X", X at the start, and X alone between spaces or punctuation.

/// The end of `(?:\*\*)?(?:\.|,|:|\s|$)` at `i`, the `**` taken first.
fn suffix(text: &str, i: usize) -> Option<usize> {
    let one = |k: usize| -> Option<usize> {
        let rest = &text[k..];
        match rest.chars().next() {
            None => Some(k),
            Some('\n') if rest.len() == 1 => Some(k),
            Some(c) if c == '.' || c == ',' || c == ':' || is_py_space(c) => Some(k + c.len_utf8()),
            _ => None,
        }
    };
    if text[i..].starts_with("**")
        && let Some(end) = one(i + 2)
    {
        return Some(end);
    }
    one(i)
}

/// The first string (in the configuration's order) at `i` after which `rest` matches: the
/// end of the match and the string.
fn key_then<'c>(
    text: &str,
    i: usize,
    config: &'c StringExtractionConfig,
    rest: impl Fn(usize) -> Option<usize>,
) -> Option<(usize, &'c str)> {
    config
        .strings
        .iter()
        .filter(|k| !k.is_empty() && text[i..].starts_with(k.as_str()))
        .find_map(|k| rest(i + k.len()).map(|end| (end, k.as_str())))
}

/// `(?:\*\*)?{keys}{suffix}` at `i`.
fn bare(text: &str, i: usize, config: &StringExtractionConfig) -> Option<(usize, String)> {
    let mut starts = Vec::new();
    if text[i..].starts_with("**") {
        starts.push(i + 2);
    }
    starts.push(i);
    starts
        .into_iter()
        .find_map(|k| key_then(text, k, config, |e| suffix(text, e)))
        .map(|(end, key)| (end, key.to_owned()))
}

/// `(^|\s)(?:\*\*)?{keys}{suffix}` at `i`.
fn answer_re(text: &str, i: usize, config: &StringExtractionConfig) -> Option<(usize, String)> {
    if i == 0
        && let Some(m) = bare(text, 0, config)
    {
        return Some(m);
    }
    let c = text[i..].chars().next().filter(|c| is_py_space(*c))?;
    bare(text, i + c.len_utf8(), config)
}

fn found(end: usize, key: String, config: &StringExtractionConfig) -> (usize, Found) {
    let parsed = if config.lowercase {
        key.to_lowercase()
    } else {
        key
    };
    (end, Found::Str(parsed))
}

/// The matches of the pattern of `priority` for `config`, as `re.finditer` gives them.
pub(crate) fn string_matches(
    text: &str,
    config: &StringExtractionConfig,
    priority: i32,
) -> Vec<Candidate> {
    match priority {
        0 => after_word(text, "final answer is", |after| {
            let mut q = after;
            if text[q..].starts_with(':') {
                q += 1;
            }
            let rest = &text[q..];
            q += rest.len() - rest.trim_start_matches(is_py_space).len();
            key_then(text, q, config, |e| {
                let mut e = e;
                if text[e..].starts_with('.') {
                    e += 1;
                }
                let spaced = text[e..]
                    .chars()
                    .next()
                    .filter(|c| is_py_space(*c))
                    .map(|c| e + c.len_utf8());
                [spaced, Some(e)]
                    .into_iter()
                    .flatten()
                    .find(|&k| text[k..].starts_with("I hope"))
                    .map(|k| k + "I hope".len())
            })
            .map(|(end, key)| found(end, key.to_owned(), config))
        }),
        50 => after_word(text, "final answer", |after| {
            positions(text, after, 100, false)
                .into_iter()
                .find_map(|p| {
                    let rest = &text[p..];
                    let spaces = rest.len() - rest.trim_start_matches(is_py_space).len();
                    if spaces == 0 || !text[p + spaces..].starts_with("is") {
                        return None;
                    }
                    let mut q = p + spaces + 2;
                    if text[q..].starts_with(':') {
                        q += 1;
                    }
                    let rest = &text[q..];
                    q += rest.len() - rest.trim_start_matches(is_py_space).len();
                    key_then(text, q, config, Some)
                        .map(|(end, key)| found(end, key.to_owned(), config))
                })
        }),
        100 | 200 => {
            let word = if priority == 100 { "answer:" } else { "answer" };
            after_word(text, word, |after| {
                positions(text, after, 50, false)
                    .into_iter()
                    .find_map(|p| answer_re(text, p, config))
                    .map(|(end, key)| found(end, key, config))
            })
        }
        250 => bare(text, 0, config)
            .map(|(end, key)| {
                let (end, found) = found(end, key, config);
                vec![Candidate {
                    start: 0,
                    end,
                    found,
                    target: 0,
                }]
            })
            .unwrap_or_default(),
        _ => {
            let mut out = Vec::new();
            let mut i = 0;
            while i <= text.len() {
                if let Some((end, key)) = answer_re(text, i, config) {
                    let (end, f) = found(end, key, config);
                    out.push(Candidate {
                        start: i,
                        end,
                        found: f,
                        target: 0,
                    });
                    i = if end > i {
                        end
                    } else {
                        i + text[i..].chars().next().map_or(1, char::len_utf8)
                    };
                } else {
                    i += text[i..].chars().next().map_or(1, char::len_utf8);
                }
            }
            out
        }
    }
}
