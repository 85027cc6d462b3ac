//! BLEU and chrF as sacrebleu 2.5.1 computes them for one sentence (`sentence_bleu` with its
//! defaults: the `13a` tokenizer, `exp` smoothing, effective order; `sentence_chrf` with its
//! defaults: character n-grams up to 6, no word n-grams, β = 2, whitespace removed).

use std::collections::HashMap;

use foldhash::fast::RandomState;

use super::SimilarityError;
use crate::text::pychar::is_space;

/// Word n-grams and their counts.
type Counts<'a> = HashMap<&'a [String], usize, RandomState>;

/// sacrebleu's `Tokenizer13a` (mteval-v13a) of one line, as its tokens.
///
/// ```
/// use grader_core::similarity::tokenize_13a;
///
/// assert_eq!(tokenize_13a("Hello, world! It's 3.5-4 &amp; more."),
///            ["Hello", ",", "world", "!", "It's", "3.5", "-", "4", "&", "more", "."]);
/// ```
#[must_use]
pub fn tokenize_13a(line: &str) -> Vec<String> {
    let mut line = line
        .replace("<skipped>", "")
        .replace("-\n", "")
        .replace('\n', " ");
    if line.contains('&') {
        line = line
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
    }
    let mut chars: Vec<char> = format!(" {line} ").chars().collect();
    // `([\{-\~\[-\` -\&\(-\+\:-\@\/])` → ` \1 `: ASCII punctuation but `'`, `,`, `-`, `.`.
    let mut spaced = Vec::with_capacity(chars.len() * 2);
    for &c in &chars {
        if matches!(c, '{'..='~' | '['..='`' | ' '..='&' | '('..='+' | ':'..='@' | '/') {
            spaced.extend([' ', c, ' ']);
        } else {
            spaced.push(c);
        }
    }
    chars = spaced;
    let is_point = |c: char| c == '.' || c == ',';
    // `([^0-9])([\.,])` → `\1 \2 `.
    chars = substitute(
        &chars,
        |a, b| !a.is_ascii_digit() && is_point(b),
        |a, b| vec![a, ' ', b, ' '],
    );
    // `([\.,])([^0-9])` → ` \1 \2`.
    chars = substitute(
        &chars,
        |a, b| is_point(a) && !b.is_ascii_digit(),
        |a, b| vec![' ', a, ' ', b],
    );
    // `([0-9])(-)` → `\1 \2 `.
    chars = substitute(
        &chars,
        |a, b| a.is_ascii_digit() && b == '-',
        |a, b| vec![a, ' ', b, ' '],
    );
    let text: String = chars.into_iter().collect();
    text.split(is_space)
        .filter(|token| !token.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `re.sub` of a two-character pattern: left to right, matches not overlapping.
fn substitute(
    chars: &[char],
    matches: impl Fn(char, char) -> bool,
    replace: impl Fn(char, char) -> Vec<char>,
) -> Vec<char> {
    let mut out = Vec::with_capacity(chars.len() + chars.len() / 4);
    let mut i = 0;
    while let Some(&a) = chars.get(i) {
        match chars.get(i + 1) {
            Some(&b) if matches(a, b) => {
                out.extend(replace(a, b));
                i += 2;
            }
            _ => {
                out.push(a);
                i += 1;
            }
        }
    }
    out
}

/// The word n-grams of orders 1 to 4 of `tokens`, counted.
fn word_ngrams(tokens: &[String]) -> Counts<'_> {
    let mut counts = HashMap::with_hasher(RandomState::default());
    for n in 1..=4 {
        for gram in tokens.windows(n) {
            *counts.entry(gram).or_insert(0) += 1;
        }
    }
    counts
}

/// sacrebleu's `my_log`: the natural logarithm, with `log(0)` as -9 999 999 999.
fn my_log(x: f64) -> f64 {
    if x == 0.0 { -9_999_999_999.0 } else { x.ln() }
}

/// sacrebleu's `sentence_bleu(hypothesis, references)`: BLEU from 0 to 100.
///
/// ```
/// use grader_core::similarity::bleu;
///
/// let score = bleu("The cat sat on the mat.", &["The cat sat on the mat."])?;
/// assert!((score - 100.0).abs() < 1e-9);
/// assert!(bleu("the cat", &["The cat sat on the mat."])? < 10.0);
/// # Ok::<(), grader_core::similarity::SimilarityError>(())
/// ```
///
/// # Errors
/// [`SimilarityError::NoReferences`] without references (sacrebleu raises).
#[allow(clippy::cast_precision_loss)] // counts are far below 2^53
pub fn bleu<S: AsRef<str>>(hypothesis: &str, references: &[S]) -> Result<f64, SimilarityError> {
    if references.is_empty() {
        return Err(SimilarityError::NoReferences { grader: "bleu" });
    }
    let tokens = |text: &str| tokenize_13a(text.trim_end_matches(is_space));
    let hypothesis = tokens(hypothesis);
    let references: Vec<Vec<String>> = references.iter().map(|r| tokens(r.as_ref())).collect();
    let mut reference_counts: Counts<'_> = HashMap::with_hasher(RandomState::default());
    for reference in &references {
        for (gram, count) in word_ngrams(reference) {
            let best = reference_counts.entry(gram).or_insert(0);
            *best = (*best).max(count);
        }
    }
    let sys_len = hypothesis.len();
    // The closest reference length, the shorter of two as close.
    let mut ref_len = None::<(usize, usize)>;
    for reference in &references {
        let diff = sys_len.abs_diff(reference.len());
        let closer = ref_len.is_none_or(|(best_diff, best_len)| {
            diff < best_diff || (diff == best_diff && reference.len() < best_len)
        });
        if closer {
            ref_len = Some((diff, reference.len()));
        }
    }
    let ref_len = ref_len.map_or(0, |(_, len)| len);
    let (mut correct, mut total) = ([0usize; 4], [0usize; 4]);
    for (gram, count) in word_ngrams(&hypothesis) {
        let n = gram.len() - 1;
        total[n] += count;
        correct[n] += count.min(reference_counts.get(gram).copied().unwrap_or(0));
    }
    let bp = if sys_len < ref_len {
        if sys_len > 0 {
            (1.0 - ref_len as f64 / sys_len as f64).exp()
        } else {
            0.0
        }
    } else {
        1.0
    };
    if correct.iter().all(|&c| c == 0) {
        return Ok(0.0);
    }
    let mut precisions = [0.0; 4];
    let (mut smooth, mut order) = (1.0, 4);
    for n in 0..4 {
        if total[n] == 0 {
            break;
        }
        order = n + 1;
        precisions[n] = if correct[n] == 0 {
            smooth *= 2.0;
            100.0 / (smooth * total[n] as f64)
        } else {
            100.0 * correct[n] as f64 / total[n] as f64
        };
    }
    let logs: f64 = precisions[..order].iter().map(|&p| my_log(p)).sum();
    Ok(bp * (logs / order as f64).exp())
}

/// The characters of `text` but its whitespace (`"".join(text.split())`).
fn without_space(text: &str) -> Vec<char> {
    text.chars().filter(|&c| !is_space(c)).collect()
}

/// `[hypothesis n-grams, reference n-grams, matches]` for each order from 1 to 6.
fn chrf_statistics(hypothesis: &[char], reference: &[char]) -> [[usize; 3]; 6] {
    let mut stats = [[0; 3]; 6];
    for (n, stat) in (1..=6).zip(&mut stats) {
        let mut reference_counts: HashMap<&[char], usize, RandomState> =
            HashMap::with_hasher(RandomState::default());
        for gram in reference.windows(n) {
            *reference_counts.entry(gram).or_insert(0) += 1;
        }
        let mut hypothesis_counts: HashMap<&[char], usize, RandomState> =
            HashMap::with_hasher(RandomState::default());
        for gram in hypothesis.windows(n) {
            *hypothesis_counts.entry(gram).or_insert(0) += 1;
        }
        let matches = hypothesis_counts
            .iter()
            .map(|(gram, &count)| count.min(reference_counts.get(gram).copied().unwrap_or(0)))
            .sum();
        *stat = [
            hypothesis.len().saturating_sub(n - 1),
            reference.len().saturating_sub(n - 1),
            matches,
        ];
    }
    stats
}

/// sacrebleu's `CHRF._compute_f_score` with β = 2 and no epsilon smoothing: the F-score of the
/// precision and recall averaged over the orders both sides have.
#[allow(clippy::cast_precision_loss)] // counts are far below 2^53
fn chrf_score(stats: &[[usize; 3]; 6]) -> f64 {
    const FACTOR: f64 = 4.0;
    let (mut precision, mut recall, mut orders) = (0.0, 0.0, 0);
    for &[hyp, reference, matches] in stats {
        if hyp > 0 && reference > 0 {
            precision += matches as f64 / hyp as f64;
            recall += matches as f64 / reference as f64;
            orders += 1;
        }
    }
    if orders == 0 {
        return 0.0;
    }
    precision /= f64::from(orders);
    recall /= f64::from(orders);
    if precision + recall == 0.0 {
        return 0.0;
    }
    let score = (1.0 + FACTOR) * precision * recall;
    100.0 * (score / (FACTOR * precision + recall))
}

/// sacrebleu's `sentence_chrf(hypothesis, references)`: chrF from 0 to 100, against the
/// reference that scores best.
///
/// ```
/// use grader_core::similarity::chrf;
///
/// assert!((chrf("The cat sat on the mat.", &["The cat sat on the mat."])? - 100.0).abs() < 1e-9);
/// assert!(chrf("the cat", &["The cat sat on the mat."])? < 50.0);
/// # Ok::<(), grader_core::similarity::SimilarityError>(())
/// ```
///
/// # Errors
/// [`SimilarityError::NoReferences`] without references (sacrebleu raises).
pub fn chrf<S: AsRef<str>>(hypothesis: &str, references: &[S]) -> Result<f64, SimilarityError> {
    if references.is_empty() {
        return Err(SimilarityError::NoReferences { grader: "chrf" });
    }
    let hypothesis = without_space(hypothesis);
    let mut best = (-1.0, 0.0);
    for reference in references {
        let stats = chrf_statistics(&hypothesis, &without_space(reference.as_ref()));
        let score = chrf_score(&stats);
        if score > best.0 {
            best = (score, score);
        }
    }
    Ok(best.1)
}
