//! Inspect AI's `exact` and `f1` scorers (`inspect_ai/scorer/_classification.py`): SQuAD-style
//! comparison of the completion with each target after Inspect's own normalization.

use std::collections::HashMap;

use foldhash::fast::RandomState;

use super::number::{is_finite_number, py_repr, round2, strip_punctuation};
use super::{Reason, Verdict, is_no_response};
use crate::text::pychar::{casefold, is_space, is_word, parse_float, strip};

/// Inspect's `_normalize`: the text split at spaces and hyphens, each token casefolded, its
/// ASCII punctuation removed (unless it is a number), a number written as Python's
/// `str(float(token))`, the articles `a`, `an`, `the` removed, tokens in `stop_words`
/// dropped, the rest joined by one space.
///
/// ```
/// use grader_core::inspect::squad_normalize;
///
/// assert_eq!(squad_normalize("The Eiffel-Tower, (3.50)!", &[] as &[&str]), "eiffel tower 3.5");
/// assert_eq!(squad_normalize("a cat and a dog", &["and"]), "cat dog");
/// ```
#[must_use]
pub fn squad_normalize<S: AsRef<str>>(text: &str, stop_words: &[S]) -> String {
    let stop: Vec<String> = stop_words
        .iter()
        .map(|word| normalize_token(word.as_ref()))
        .collect();
    let mut out = String::with_capacity(text.len());
    for token in text.split([' ', '-']) {
        let token = normalize_token(token);
        if strip(&token).is_empty() || stop.contains(&token) {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&token);
    }
    strip(&out).to_owned()
}

/// Inspect's `_normalize_token`.
fn normalize_token(token: &str) -> String {
    let folded = casefold(token);
    let token = remove_punctuation(&folded);
    let token = match parse_float(&token).filter(|x| x.is_finite()) {
        Some(x) => py_repr(x),
        None => token,
    };
    let token = remove_articles(&token);
    let mut out = String::with_capacity(token.len());
    for word in token.split(is_space).filter(|word| !word.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Inspect's `_remove_punc`.
fn remove_punctuation(text: &str) -> String {
    if is_finite_number(text) {
        return text.to_owned();
    }
    let stripped = strip_punctuation(text);
    if is_finite_number(stripped) {
        return stripped.to_owned();
    }
    text.chars().filter(|c| !c.is_ascii_punctuation()).collect()
}

/// `re.sub(r"\b(a|an|the)\b", " ", text)` with Python's `\w`.
fn remove_articles(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(is_word) {
        out.push_str(&rest[..start]);
        let word_len = rest[start..]
            .find(|c: char| !is_word(c))
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_len];
        out.push_str(if matches!(word, "a" | "an" | "the") {
            " "
        } else {
            word
        });
        rest = &rest[start + word_len..];
    }
    out.push_str(rest);
    out
}

/// Inspect's `_to_word_counts`.
fn word_counts<S: AsRef<str>>(text: &str, stop_words: &[S]) -> HashMap<String, usize, RandomState> {
    let mut counts = HashMap::with_hasher(RandomState::default());
    for word in squad_normalize(text, stop_words)
        .split(is_space)
        .filter(|word| !word.is_empty())
    {
        *counts.entry(word.to_owned()).or_insert(0) += 1;
    }
    counts
}

/// Inspect's `_f1` of two bags of words.
#[allow(clippy::cast_precision_loss)] // word counts are far below 2^53
fn f1_of(
    answer: &HashMap<String, usize, RandomState>,
    target: &HashMap<String, usize, RandomState>,
) -> f64 {
    let common: usize = answer
        .iter()
        .map(|(word, &count)| count.min(target.get(word).copied().unwrap_or(0)))
        .sum();
    let total = |counts: &HashMap<String, usize, RandomState>| counts.values().sum::<usize>();
    let precision = if answer.is_empty() {
        1.0
    } else {
        common as f64 / total(answer) as f64
    };
    let recall = if target.is_empty() {
        1.0
    } else {
        common as f64 / total(target) as f64
    };
    if precision == 0.0 && recall == 0.0 {
        0.0
    } else {
        (2.0 * precision * recall) / (precision + recall)
    }
}

/// Inspect's `f1()` scorer: the best SQuAD F1 of the completion against any target with words
/// left after normalization (see [`squad_normalize`]), rounded to two decimals; 0 when none has.
///
/// ```
/// use grader_core::inspect::f1;
///
/// let verdict = f1("The capital is Paris, France", &["Paris"], &[] as &[&str]);
/// assert_eq!(verdict.value, 0.4);
/// assert_eq!(f1("Paris", &["the", "Paris!"], &[] as &[&str]).value, 1.0);
/// ```
pub fn f1<S: AsRef<str>, W: AsRef<str>>(
    completion: &str,
    targets: &[S],
    stop_words: &[W],
) -> Verdict {
    let answer = word_counts(completion, stop_words);
    let mut best: f64 = 0.0;
    for target in targets {
        let target = word_counts(target.as_ref(), stop_words);
        if !target.is_empty() {
            best = best.max(f1_of(&answer, &target));
        }
    }
    Verdict {
        value: round2(best),
        answer: Some(completion.to_owned()),
        reason: is_no_response(completion).then_some(Reason::NoResponse),
    }
}

/// Inspect's `exact()` scorer: correct when the normalized completion (see
/// [`squad_normalize`]) equals a target's, targets that normalize to nothing never matching.
///
/// ```
/// use grader_core::inspect::exact;
///
/// assert!(exact("The Eiffel Tower.", &["eiffel-tower"]).is_correct());
/// assert!(!exact("a", &["the"]).is_correct());
/// ```
pub fn exact<S: AsRef<str>>(completion: &str, targets: &[S]) -> Verdict {
    let answer = squad_normalize(completion, &[] as &[&str]);
    let matched = targets.iter().any(|target| {
        let target = squad_normalize(target.as_ref(), &[] as &[&str]);
        !target.is_empty() && target == answer
    });
    let reason = is_no_response(completion).then_some(Reason::NoResponse);
    if matched {
        Verdict::correct(completion.to_owned(), reason)
    } else {
        Verdict {
            value: 0.0,
            answer: Some(completion.to_owned()),
            reason,
        }
    }
}
