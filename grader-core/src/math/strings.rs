//! math-verify's `StringExtractionConfig`: its regular expressions for one of given strings
//! (multiple-choice letters), as scanners: "final answer is X. I hope", "final answer … is X",
//! "answer: … X", "answer … X", X at the start, and X alone between spaces or punctuation.

use super::config::StringExtractionConfig;
use super::extract::{Candidate, Found, after_word, positions};
use super::normalize::is_py_space;

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
pub(crate) fn matches(
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
