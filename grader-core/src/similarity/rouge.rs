//! ROUGE-N and ROUGE-L as Google's `rouge-score` 0.1.2 computes them (`rouge_scorer.py`,
//! `tokenize.py`), without stemming (its default, `use_stemmer=False`).

use std::collections::HashMap;

use foldhash::fast::RandomState;
use serde::{Deserialize, Serialize};

use super::{SimilarityError, check_size, lcs};
use crate::text::pychar::lower;

/// Precision, recall and F-measure of the prediction against the target: `rouge-score`'s
/// `Score`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RougeScore {
    /// Matched over the prediction's n-grams (or tokens, for ROUGE-L).
    pub precision: f64,
    /// Matched over the target's.
    pub recall: f64,
    /// `2pr / (p + r)`, 0 when both are 0.
    pub fmeasure: f64,
}

impl RougeScore {
    fn new(precision: f64, recall: f64) -> Self {
        let fmeasure = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        Self {
            precision,
            recall,
            fmeasure,
        }
    }
}

/// `rouge-score`'s tokenizer: `str.lower()`, every run of characters other than `a-z` and
/// `0-9` a separator.
///
/// ```
/// use grader_core::similarity::rouge_tokens;
///
/// assert_eq!(rouge_tokens("The café's 2nd-best!"), ["the", "caf", "s", "2nd", "best"]);
/// ```
#[must_use]
pub fn rouge_tokens(text: &str) -> Vec<String> {
    lower(text)
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|token| !token.is_empty())
        .map(str::to_owned)
        .collect()
}

/// How many times each n-gram of `tokens` occurs.
fn ngrams(tokens: &[String], n: usize) -> HashMap<&[String], usize, RandomState> {
    let mut counts = HashMap::with_hasher(RandomState::default());
    for gram in tokens.windows(n) {
        *counts.entry(gram).or_insert(0) += 1;
    }
    counts
}

/// ROUGE-N of `prediction` against `target`: `rouge_scorer.RougeScorer([f"rouge{n}"])
/// .score(target, prediction)`, clipped n-gram counts over each side's n-grams.
///
/// # Errors
/// [`SimilarityError::ZeroN`] for `n = 0`.
#[allow(clippy::cast_precision_loss)] // counts are far below 2^53
pub fn rouge_n(target: &str, prediction: &str, n: usize) -> Result<RougeScore, SimilarityError> {
    if n == 0 {
        return Err(SimilarityError::ZeroN {
            grader: "rouge_n",
            n,
        });
    }
    let (target_tokens, prediction_tokens) = (rouge_tokens(target), rouge_tokens(prediction));
    let (target_grams, prediction_grams) =
        (ngrams(&target_tokens, n), ngrams(&prediction_tokens, n));
    let common: usize = target_grams
        .iter()
        .map(|(gram, &c)| c.min(prediction_grams.get(gram).copied().unwrap_or(0)))
        .sum();
    let total = |grams: &HashMap<&[String], usize, RandomState>| grams.values().sum::<usize>();
    let precision = common as f64 / total(&prediction_grams).max(1) as f64;
    let recall = common as f64 / total(&target_grams).max(1) as f64;
    Ok(RougeScore::new(precision, recall))
}

/// ROUGE-L of `prediction` against `target`: the longest common subsequence of their tokens
/// over each side's length (`rouge_scorer.RougeScorer(["rougeL"]).score(target, prediction)`).
///
/// # Errors
/// [`SimilarityError::TooLarge`] when the token counts multiply past
/// [`MAX_CELLS`](super::MAX_CELLS).
#[allow(clippy::cast_precision_loss)] // counts are far below 2^53
pub fn rouge_l(target: &str, prediction: &str) -> Result<RougeScore, SimilarityError> {
    let (target_tokens, prediction_tokens) = (rouge_tokens(target), rouge_tokens(prediction));
    if target_tokens.is_empty() || prediction_tokens.is_empty() {
        return Ok(RougeScore::new(0.0, 0.0));
    }
    check_size("rouge_l", target_tokens.len(), prediction_tokens.len())?;
    let target_words: Vec<&str> = target_tokens.iter().map(String::as_str).collect();
    let prediction_words: Vec<&str> = prediction_tokens.iter().map(String::as_str).collect();
    let common = lcs(&target_words, &prediction_words) as f64;
    Ok(RougeScore::new(
        common / prediction_tokens.len() as f64,
        common / target_tokens.len() as f64,
    ))
}
