//! latex2sympy2_extended's `normalize_latex` under a [`NormalizationConfig`]: the `\boxed{}`
//! content, then the clean-up of commands (`basic_latex`), the last equation (`equations`),
//! units (`units`), leading decimals (`nits`) and malformed operators
//! (`malformed_operators`), in the anchor's order.

use std::borrow::Cow;

use super::config::{BoxedMode, NormalizationConfig};
use super::scan::{self, is_py_space};

/// Which `\boxed{}` contents to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Boxed {
    /// Every boxed content, joined by commas.
    All,
    /// The last one (and those just before it, separated by "and", "or", commas).
    Last,
}

/// latex2sympy2_extended's `extract_boxed_content`.
pub(crate) fn extract_boxed(text: &str, mode: Boxed) -> String {
    let bytes = text.as_bytes();
    let mut results: Vec<String> = Vec::new();
    let mut current = text.len();
    let mut max_pos = text.len();
    let mut last_boxed_start: Option<usize> = None;
    loop {
        let boxed = scan::rfind(&text[..current], "\\boxed");
        let fbox = scan::rfind(&text[..current], "\\fbox");
        let (start, command_end) = match (boxed, fbox) {
            (None, None) => break,
            (Some(b), Some(f)) if f > b => (f, f + 5),
            (Some(b), _) => (b, b + 6),
            (None, Some(f)) => (f, f + 5),
        };
        let mut next = command_end;
        while next < max_pos && bytes[next].is_ascii_whitespace() {
            next += 1;
        }
        if next >= max_pos {
            break;
        }
        if bytes[next] != b'{' {
            if results.is_empty() {
                results.push(text[next..].to_owned());
            }
            break;
        }
        let Some(close) = closing_brace(&bytes[..max_pos], next) else {
            if results.is_empty() {
                results.push(text[next..].to_owned());
            }
            break;
        };
        let content = text[next + 1..close].trim();
        if mode == Boxed::Last
            && let Some(later) = last_boxed_start
        {
            let between = &text[(close + 1).min(later)..later];
            let previous = results.last().map_or("", String::as_str);
            let keep = between.chars().count() < 10
                || (previous != content && between.chars().count() < 70 && has_separator(between));
            if !keep {
                break;
            }
        }
        if results.last().map(String::as_str) != Some(content) {
            results.push(content.to_owned());
        }
        last_boxed_start = Some(start);
        max_pos = start;
        current = start;
    }
    if results.is_empty() {
        return text.to_owned();
    }
    results.reverse();
    results.join(",")
}

/// Whether `text` holds `\b(and|or)\b`, a comma or a semicolon.
fn has_separator(text: &str) -> bool {
    if text.contains([',', ';']) {
        return true;
    }
    let words = |w: &str| {
        text.match_indices(w).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + w.len()..].chars().next();
            !before.is_some_and(is_word) && !after.is_some_and(is_word)
        })
    };
    words("and") || words("or")
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The index of the `}` closing the `{` at `open`.
pub(crate) fn closing_brace(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The units latex2sympy2_extended strips from the end of an answer, in its order.
#[rustfmt::skip]
const UNITS: &[&str] = &[
    "integerpoint", "feet", "sue", "digit", "pound", "meal", "edge", "student",
    "children ticket", "multiple", "east", "degree", "mph", "kmph", "ft", "m square", " m east",
    "sq m", "deg", "mile", "q .", "monkey", "prime", "ratio", "profit of rs", "rd", "o", "gm",
    "p . m", "lb", "tile", "per", "dm", "lt", "gain", "ab", "way", "west", "a .", "b .", "c .",
    "d .", "e .", "f .", "g .", "h .", "t", "h", "no change", "men", "soldier", "pie", "bc",
    "excess", "st", "inches", "noon", "cent", "by", "gal", "kmh", "c", "acre", "rise", "a . m",
    "th", "π r 2", "sq", "mark", "l", "toy", "coin", "sq . m", "gallon", "° f", "profit", "minw",
    "yr", "women", "am", "pm", "hr", "cu cm", "square", "v â € ™", "are", "rupee", "rounds",
    "cubic", "cc", "mtr", "s", "ohm", "number", "kmph", "day", "hour", "minute", "min", "second",
    "man", "woman", "sec", "cube", "mt", "sq inch", "mp", "∏ cm ³", "hectare", "more", "sec",
    "unit", "cu . m", "cm 2", "rs .", "rs", "kg", "g", "month", "km", "m", "cm", "mm", "apple",
    "liter", "loss", "yard", "pure", "year", "increase", "decrease", "d", "less", "Surface",
    "litre", "pi sq m", "s .", "metre", "meter", "inch",
];

/// Whether `rest` is a unit, plural or not.
fn is_unit(rest: &str) -> bool {
    static FORMS: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    let forms = FORMS.get_or_init(|| {
        UNITS
            .iter()
            .flat_map(|u| [(*u).to_owned(), format!("{u}s"), format!("{u}es")])
            .collect()
    });
    rest.len() <= 20 && forms.contains(rest)
}

/// One pass of `units_regex.sub(r"\1", text)`: a unit at the very end, after a digit, `}` or
/// space, is removed with the spaces before it. Only the last 24 bytes can start a unit.
fn strip_unit(text: &str) -> &str {
    let end = text.trim_end_matches(is_py_space).len();
    let low = end.saturating_sub(24);
    for (k, _) in text[..end]
        .char_indices()
        .filter(|&(k, _)| k >= low && k > 0)
    {
        // A unit follows a digit, a `}` or a space: checked before the set of units.
        let before = text[..k].chars().next_back();
        if !before.is_some_and(|c| c.is_ascii_digit() || c == '}' || is_py_space(c))
            || !is_unit(&text[k..end])
        {
            continue;
        }
        let run_start = text[..k].trim_end_matches(is_py_space).len();
        let keep = match text[..run_start].chars().next_back() {
            // `(\d|\})\s*unit`: the digit or brace is kept.
            Some(c) if c.is_ascii_digit() || c == '}' => run_start,
            // `\s\s*unit`: the first space is kept.
            _ if run_start < k => {
                run_start + text[run_start..].chars().next().map_or(1, char::len_utf8)
            }
            _ => continue,
        };
        return &text[..keep];
    }
    text
}

/// `unit_superscript_regex.sub("", text)`: from the first `\text{` or `\mbox{` to the end,
/// where the text ends with that group's `}` (and an optional `^2`).
fn strip_text_suffix(text: &str, exact: bool) -> String {
    let first = [scan::find(text, "\\text{"), scan::find(text, "\\mbox{")]
        .into_iter()
        .flatten()
        .min();
    let Some(first) = first else {
        return text.to_owned();
    };
    let tail = &text[first..];
    let bytes = tail.as_bytes();
    let n = bytes.len();
    let ends = bytes.last() == Some(&b'}')
        || (n >= 3
            && bytes[n - 2] == b'^'
            && bytes[n - 1].is_ascii_digit()
            && bytes[n - 3] == b'}')
        || tail.ends_with('\n');
    // The anchor's lazy `\\text{.*?}` runs to the last brace, past the group's own end
    // (`\frac{1}{\text{e}}` loses `\text{e}}`); exactly, only a group that closes at the end
    // is a unit.
    if ends && exact {
        let close = closing_brace(bytes, tail.find('{').unwrap_or(0));
        let rest = close.map(|c| &tail[c + 1..]);
        let whole = matches!(rest, Some(r) if r.is_empty()
            || r == "\n"
            || (r.len() == 2 && r.starts_with('^') && r.as_bytes()[1].is_ascii_digit()));
        if !whole {
            return text.to_owned();
        }
    }
    if ends && first > 0 {
        text[..first].to_owned()
    } else if ends {
        String::new()
    } else {
        text.to_owned()
    }
}

/// Commands rewritten to others, in the order latex2sympy2_extended tries them.
const REWRITES: &[(&str, &str)] = &[
    ("\\mathrm", "\\text"),
    ("\\mathit", "\\text"),
    ("\\mathbf", "\\text"),
    ("\\textnormal", "\\text"),
    ("\\textbf", "\\text"),
    ("\\textit", "\\text"),
    ("\\textrm", "\\text"),
    ("\\dfrac", "\\frac"),
    ("\\tfrac", "\\frac"),
    ("\\cfrac", "\\frac"),
    ("\\displaystyle", ""),
    ("\\mathrm{th}", ""),
    ("\\text{and}", ","),
    ("\\text{or}", ","),
    ("\\text{ and }", ","),
    ("\\text{ or }", ","),
    ("\\text{percentage}", "%"),
    ("\\text{percent}", "%"),
    ("\\text{pct}", "%"),
    ("\\ldots", " "),
    ("\\mleft", ""),
    ("\\mright", ""),
    ("\\left", ""),
    ("\\right", ""),
    ("\\$", ""),
    ("~=", "\\approx"),
];

/// `normalize_latex(text, config)`; `exact` reads a `\text{…}` that closes inside a
/// fraction as part of the answer (`\frac{1}{\mathrm{e}}`), where the anchor cuts the answer
/// at it.
pub(crate) fn normalize(text: &str, config: &NormalizationConfig, exact: bool) -> String {
    let mut text = match config.boxed {
        BoxedMode::All => extract_boxed(text, Boxed::All),
        BoxedMode::Last => extract_boxed(text, Boxed::Last),
        BoxedMode::None => text.to_owned(),
    };
    if config.basic_latex {
        text = basic_latex(&text);
    }
    if config.equations
        && !text.contains([',', ';'])
        && let Some(last) = last_equation(&text)
    {
        text = last.to_owned();
    }
    if config.units {
        let stripped = strip_text_suffix(&text, exact);
        let stripped = stripped.trim_matches(is_py_space);
        if !stripped.is_empty() && stripped != text {
            text = stripped.to_owned();
        }
        for _ in 0..2 {
            let stripped = strip_unit(&text);
            if !stripped.is_empty() && stripped.len() != text.len() {
                text = stripped.to_owned();
            }
        }
    }
    if config.nits {
        if text.starts_with('.') {
            text.insert(0, '0');
        }
        if text == "0.5" {
            text = "\\frac{1}{2}".to_owned();
        }
    }
    if config.malformed_operators {
        text = malformed_operators(&text);
    }
    text.trim_matches(is_py_space).to_owned()
}

/// The `basic_latex` clean-up: command rewrites, `\left`/`\right`, dollars and quotes, "and"
/// and "or", percent words, `{,}`, spaces before decimals, doubled backslashes.
fn basic_latex(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut prev: Option<char> = None;
    'outer: while let Some(c) = rest.chars().next() {
        if c == '\\' {
            if let Some(after) = rest.strip_prefix("\\!") {
                rest = after.trim_start_matches(is_py_space);
                continue;
            }
            if rest.starts_with("\\text{") || rest.starts_with("\\text {") {
                let inner = rest[5..].trim_start_matches(is_py_space);
                if let Some(after) = inner.strip_prefix('{') {
                    let body = after.trim_start_matches(is_py_space);
                    if let Some(after) = body.strip_prefix('}') {
                        rest = after;
                        continue;
                    }
                    // `,? \text{ and }` is a comma.
                    for word in ["and", "or"] {
                        if let Some(after) = body.strip_prefix(word) {
                            let after = after.trim_start_matches(is_py_space);
                            if let Some(after) = after.strip_prefix('}') {
                                let trimmed = out.trim_end_matches(is_py_space).len();
                                out.truncate(trimmed);
                                if out.ends_with(',') {
                                    out.pop();
                                }
                                out.push(',');
                                prev = Some(',');
                                rest = after;
                                continue 'outer;
                            }
                        }
                    }
                }
            }
            let name_len = rest[1..]
                .bytes()
                .take_while(u8::is_ascii_alphabetic)
                .count();
            let rewritten = matches!(
                &rest[1..=name_len],
                "mathrm"
                    | "mathit"
                    | "mathbf"
                    | "textnormal"
                    | "textbf"
                    | "textit"
                    | "textrm"
                    | "dfrac"
                    | "tfrac"
                    | "cfrac"
                    | "displaystyle"
                    | "text"
                    | "ldots"
                    | "mleft"
                    | "mright"
                    | "left"
                    | "right"
            ) || rest.starts_with("\\$");
            for (from, to) in REWRITES.iter().filter(|_| rewritten) {
                if let Some(after) = rest.strip_prefix(from) {
                    if from.ends_with("left") || from.ends_with("right") {
                        // Only before a delimiter: `\left(`, `\right.` is left alone.
                        let next = after.chars().next();
                        if !matches!(
                            next,
                            Some('(' | ')' | '[' | ']' | '{' | '}' | '|' | '\\' | '.')
                        ) {
                            break;
                        }
                        if next == Some('.') {
                            rest = &after[1..];
                            continue 'outer;
                        }
                    }
                    out.push_str(to);
                    rest = after;
                    prev = to.chars().last();
                    continue 'outer;
                }
            }
            // `\ ` (a backslash and a space) is a space; `\\cmd` is `\cmd` outside matrices.
            if let Some(after) = rest.strip_prefix("\\ ") {
                out.push(' ');
                rest = after;
                prev = Some(' ');
                continue;
            }
            if rest.starts_with("\\\\")
                && !scan::contains(text, "matrix")
                && !scan::contains(text, "array")
                && rest[2..].starts_with(|c: char| c.is_ascii_alphabetic())
            {
                rest = &rest[1..];
                continue;
            }
            // Copy the command whole, so that words inside it are not rewritten.
            let len = 1 + rest[1..]
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(rest.len() - 1)
                .max(usize::from(rest.len() > 1));
            let len = len.min(rest.len());
            let len = (len..=rest.len())
                .find(|&l| rest.is_char_boundary(l))
                .unwrap_or(rest.len());
            out.push_str(&rest[..len]);
            prev = rest[..len].chars().last();
            rest = &rest[len..];
            continue;
        }
        if c == '$' || ((c == '"' || c == '\'') && prev != Some('\\')) {
            rest = &rest[c.len_utf8()..];
            continue;
        }
        if c == '\n' || c == '\t' {
            out.push(' ');
            rest = &rest[1..];
            prev = Some(' ');
            continue;
        }
        if is_py_space(c) && rest[c.len_utf8()..].starts_with('.') {
            out.push_str(" 0.");
            rest = &rest[c.len_utf8() + 1..];
            prev = Some('.');
            continue;
        }
        if c == '{' {
            // `{,}` (with spaces) is a comma.
            let inner = rest[1..].trim_start_matches(is_py_space);
            if let Some(after) = inner.strip_prefix(',')
                && let Some(after) = after.trim_start_matches(is_py_space).strip_prefix('}')
            {
                let trimmed = out.trim_end_matches(is_py_space).len();
                out.truncate(trimmed);
                out.push(',');
                prev = Some(',');
                rest = after;
                continue;
            }
        }
        if c == '{' && rest[1..].starts_with('.') {
            out.push_str("{0.");
            rest = &rest[2..];
            prev = Some('.');
            continue;
        }
        if c.is_ascii_alphabetic() && !prev.is_some_and(|p| p.is_ascii_alphabetic()) {
            let word_len = rest
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(rest.len());
            let word = &rest[..word_len];
            let replaced = match word {
                "and" | "or" => Some(","),
                "infinity" => Some("\\infty"),
                "inf" if prev != Some('\\') => Some("\\infty"),
                "percentage" | "percent" | "pct" => Some("\\%"),
                _ => None,
            };
            if let Some(to) = replaced {
                if to == "," || to == "\\%" {
                    let trimmed = out.trim_end_matches(is_py_space).len();
                    out.truncate(trimmed);
                    if to == "," && out.ends_with(',') {
                        out.pop();
                    }
                }
                out.push_str(to);
                rest = &rest[word_len..];
                prev = to.chars().last();
                continue;
            }
            if word == "sqrt" && prev.is_some_and(is_py_space) {
                out.pop();
                out.push_str("\\sqrt");
                rest = &rest[word_len..];
                prev = Some('t');
                continue;
            }
            out.push_str(word);
            prev = word.chars().last();
            rest = &rest[word_len..];
            continue;
        }
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `_fix_malformed_operators`, `_fix_sqrt`, `_fix_fracs` and `_fix_a_slash_b`: `^(…)`,
/// `sqrt(…)`, `\frac12`, `\frac{1}2`, `\frac1{2}`, `\log_28`, `\sqrt2` and a bare `a/b`
/// written in braces, as latex2sympy's grammar needs them.
pub(crate) fn malformed_operators(text: &str) -> String {
    // Each rewrite only where its command is there (most answers hold none), and a copy only
    // where one changes the text.
    let mut text = Cow::Borrowed(text);
    let apply = |text: &mut Cow<'_, str>, f: &dyn Fn(&str) -> Option<String>| {
        if let Some(changed) = f(text) {
            *text = Cow::Owned(changed);
        }
    };
    if text.contains('^') {
        apply(&mut text, &|t| replace_lazy_paren(t, "^", "^{"));
    }
    if scan::contains(&text, "sqrt") {
        apply(&mut text, &|t| replace_lazy_paren(t, "sqrt", "\\sqrt{"));
    }
    if scan::contains(&text, "\\frac") {
        apply(&mut text, &frac_digits);
    }
    if scan::contains(&text, "\\log_") {
        apply(&mut text, &log_digits);
    }
    if scan::contains(&text, "\\frac") {
        apply(&mut text, &frac_brace_digit);
        apply(&mut text, &frac_digit_brace);
    }
    if scan::contains(&text, "sqrt") {
        apply(&mut text, &sqrt_digit);
        if scan::contains(&text, " sqrt") {
            apply(&mut text, &|t| Some(t.replace(" sqrt", "\\sqrt")));
        }
        apply(&mut text, &fix_sqrt);
    }
    if scan::contains(&text, "\\frac") {
        apply(&mut text, &fix_fracs);
    }
    if text.contains('/') {
        apply(&mut text, &fix_a_slash_b);
    }
    text.into_owned()
}

/// One optional whitespace character at the start of `s`: its length.
fn opt_space(s: &str) -> usize {
    s.chars()
        .next()
        .filter(|c| is_py_space(*c))
        .map_or(0, char::len_utf8)
}

/// `re.sub(r"{head}\s?\((.*?)\)", r"{open}\1}", text)` (`None` where nothing changes).
fn replace_lazy_paren(text: &str, head: &str, open: &str) -> Option<String> {
    rewrite(text, head, |after| {
        let sp = opt_space(after);
        let body = after[sp..].strip_prefix('(')?;
        // `.` does not match a line break.
        let line = body.find('\n').unwrap_or(body.len());
        let close = body[..line].find(')')?;
        Some((sp + 1 + close + 1, format!("{open}{}}}", &body[..close])))
    })
}

fn ascii_digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// `re.sub(r"\\frac\s?(\d)\s?(\d+)", r"\\frac{\1}{\2}", text)`.
fn frac_digits(text: &str) -> Option<String> {
    rewrite(text, "\\frac", |after| {
        let sp = opt_space(after);
        let a = after[sp..].chars().next().filter(char::is_ascii_digit)?;
        let rest = &after[sp + 1..];
        let sp2 = opt_space(rest);
        let n = ascii_digits(&rest[sp2..]);
        (n > 0).then(|| {
            (
                sp + 1 + sp2 + n,
                format!("\\frac{{{a}}}{{{}}}", &rest[sp2..sp2 + n]),
            )
        })
    })
}

/// `re.sub(r"\\log_\s?(\d)\s?(\d+)", r"\\log_{\1}{\2}", text)`.
fn log_digits(text: &str) -> Option<String> {
    rewrite(text, "\\log_", |after| {
        let sp = opt_space(after);
        let a = after[sp..].chars().next().filter(char::is_ascii_digit)?;
        let rest = &after[sp + 1..];
        let sp2 = opt_space(rest);
        let n = ascii_digits(&rest[sp2..]);
        (n > 0).then(|| {
            (
                sp + 1 + sp2 + n,
                format!("\\log_{{{a}}}{{{}}}", &rest[sp2..sp2 + n]),
            )
        })
    })
}

/// `re.sub(r"\\frac\s?{(.*?)}\s?(\d)", r"\\frac{\1}{\2}", text)`.
fn frac_brace_digit(text: &str) -> Option<String> {
    rewrite(text, "\\frac", |after| {
        let sp = opt_space(after);
        let body = after[sp..].strip_prefix('{')?;
        let line = body.find('\n').unwrap_or(body.len());
        // The lazy group: the first `}` after which an optional space and a digit follow.
        for (k, _) in body[..line].match_indices('}') {
            let tail = &body[k + 1..];
            let sp2 = opt_space(tail);
            if let Some(d) = tail[sp2..].chars().next().filter(char::is_ascii_digit) {
                return Some((
                    sp + 1 + k + 1 + sp2 + 1,
                    format!("\\frac{{{}}}{{{d}}}", &body[..k]),
                ));
            }
        }
        None
    })
}

/// `re.sub(r"\\frac\s?(\d)\s?{(.*?)}", r"\\frac{\1}{\2}", text)`.
fn frac_digit_brace(text: &str) -> Option<String> {
    rewrite(text, "\\frac", |after| {
        let sp = opt_space(after);
        let a = after[sp..].chars().next().filter(char::is_ascii_digit)?;
        let rest = &after[sp + 1..];
        let sp2 = opt_space(rest);
        let body = rest[sp2..].strip_prefix('{')?;
        let line = body.find('\n').unwrap_or(body.len());
        let close = body[..line].find('}')?;
        Some((
            sp + 1 + sp2 + 1 + close + 1,
            format!("\\frac{{{a}}}{{{}}}", &body[..close]),
        ))
    })
}

/// `re.sub(r"\\sqrt\s?(\d)", r"\\sqrt{\1}", text)`.
fn sqrt_digit(text: &str) -> Option<String> {
    rewrite(text, "\\sqrt", |after| {
        let sp = opt_space(after);
        let d = after[sp..].chars().next().filter(char::is_ascii_digit)?;
        Some((sp + 1, format!("\\sqrt{{{d}}}")))
    })
}

/// Each `head` whose continuation `f` rewrites (the length after `head` it consumes and the
/// replacement), left to right, without overlaps, as `re.sub` does; `None` where nothing is
/// rewritten.
fn rewrite(text: &str, head: &str, f: impl Fn(&str) -> Option<(usize, String)>) -> Option<String> {
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut from = 0;
    while let Some(k) = scan::find(&text[from..], head) {
        let at = from + k;
        if let Some((len, replacement)) = f(&text[at + head.len()..]) {
            let out = out.get_or_insert_with(|| String::with_capacity(text.len() + 8));
            out.push_str(&text[copied..at]);
            out.push_str(&replacement);
            copied = at + head.len() + len;
            from = copied;
        } else {
            // The next match may start inside this one: one character on.
            from = at + text[at..].chars().next().map_or(1, char::len_utf8);
        }
    }
    out.map(|mut out| {
        out.push_str(&text[copied..]);
        out
    })
}

/// `_fix_sqrt`: `\sqrt` not followed by `{` or `[` takes its next character in braces.
fn fix_sqrt(text: &str) -> Option<String> {
    if text
        .match_indices("\\sqrt")
        .all(|(k, _)| matches!(text.as_bytes().get(k + 5), Some(b'{' | b'[')))
    {
        return None;
    }
    let mut parts = text.split("\\sqrt");
    let mut out = parts.next().unwrap_or_default().to_owned();
    for part in parts {
        let part = part.trim_start_matches(is_py_space);
        match part.chars().next() {
            Some(c) if c != '{' && c != '[' => {
                out.push_str("\\sqrt{");
                out.push(c);
                out.push('}');
                out.push_str(&part[c.len_utf8()..]);
            }
            _ => {
                out.push_str("\\sqrt");
                out.push_str(part);
            }
        }
    }
    Some(out)
}

/// `_fix_fracs` (from hendrycks/math): `\frac` not followed by `{` takes its next two
/// characters as numerator and denominator.
fn fix_fracs(text: &str) -> Option<String> {
    if text
        .match_indices("\\frac")
        .all(|(k, _)| text.as_bytes().get(k + 5) == Some(&b'{'))
    {
        return None;
    }
    let mut parts = text.split("\\frac");
    let mut out = parts.next().unwrap_or_default().to_owned();
    for part in parts {
        let part = part.trim_start_matches(is_py_space);
        out.push_str("\\frac");
        if part.starts_with('{') {
            out.push_str(part);
            continue;
        }
        let mut chars = part.chars();
        let (Some(a), Some(b)) = (chars.next(), chars.next()) else {
            return None;
        };
        let post = chars.as_str();
        if b == '{' {
            out.push_str(&format!("{{{a}}}{b}{post}"));
        } else {
            out.push_str(&format!("{{{a}}}{{{b}}}{post}"));
        }
    }
    Some(out)
}

/// `_fix_a_slash_b`: a text that is exactly `a/b` for integers is `\frac{a}{b}`.
fn fix_a_slash_b(text: &str) -> Option<String> {
    let parts: Vec<&str> = text.split('/').collect();
    if parts.len() != 2 {
        return None;
    }
    let int = |s: &str| -> Option<String> {
        let t = s.trim_matches(is_py_space);
        let body = t.strip_prefix(['-', '+']).unwrap_or(t);
        if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: num_bigint::BigInt = t.parse().ok()?;
        Some(n.to_string())
    };
    match (int(parts[0]), int(parts[1])) {
        (Some(a), Some(b)) if text == format!("{a}/{b}") => Some(format!("\\frac{{{a}}}{{{b}}}")),
        _ => None,
    }
}

/// math-verify's `get_last_eq`: the text after the last `=` of a chain of three or more
/// parts without commas or semicolons.
pub(crate) fn last_equation(latex: &str) -> Option<&str> {
    if latex.contains([',', ';']) {
        return None;
    }
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c) in latex.char_indices() {
        if c == '=' && !matches!(latex[..i].chars().next_back(), Some('\\' | '<' | '!' | '>')) {
            parts.push(&latex[start..i]);
            start = i + 1;
        }
    }
    parts.push(&latex[start..]);
    (parts.len() > 2).then(|| parts[parts.len() - 1])
}
