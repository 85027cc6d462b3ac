//! The similarities as graders, made with `#[grader]`: each scores in `[0, 1]`, records its
//! arguments under `_parameters` and runs in a [`Gather`](crate::Gather) or a tree like any
//! grader.
//!
//! ```
//! use grader_core::Grade;
//! use grader_core::similarity::{Levenshtein, Ratio, RougeL, RougeN};
//!
//! let (answer, reference) = ("the cat sat on the mat", "the cat is on the mat");
//! let result = Grade::from_subscores([
//!     Levenshtein { answer, reference }.grade(0.25).now()?,
//!     Ratio { answer, reference }.grade(0.25).now()?,
//!     RougeN { answer, reference, n: 2 }.grade(0.25).now()?,
//!     RougeL { answer, reference }.grade(0.25).now()?,
//! ])?;
//! let subscores = result.subscores.as_deref().unwrap();
//! assert_eq!(subscores[0].info().unwrap()["distance"], 3);
//! assert_eq!(subscores[2].value(), 0.6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::{RougeScore, SimilarityError};
use crate::{Info, Score, grader};

/// The score of a ROUGE result: its F-measure, with precision and recall in `info`.
fn rouge_score(rouge: RougeScore) -> Score {
    let mut info = Info::new();
    info.insert("precision".into(), rouge.precision.into());
    info.insert("recall".into(), rouge.recall.into());
    info.insert("fmeasure".into(), rouge.fmeasure.into());
    Score::new(rouge.fmeasure.clamp(0.0, 1.0)).with_info(info)
}

/// rapidfuzz's `Levenshtein.normalized_similarity`; `info.distance` is the distance. See
/// [`levenshtein_similarity`](super::levenshtein_similarity).
#[grader(crate = crate)]
pub fn levenshtein(answer: &str, reference: &str) -> Result<Score, SimilarityError> {
    let distance = super::levenshtein(answer, reference)?;
    let similarity = super::levenshtein_similarity(answer, reference)?;
    let mut info = Info::new();
    info.insert("distance".into(), distance.into());
    Ok(Score::new(similarity.clamp(0.0, 1.0)).with_info(info))
}

/// rapidfuzz's `fuzz.ratio` over 100; `info.ratio` is rapidfuzz's value. See
/// [`ratio`](super::ratio).
#[grader(crate = crate)]
pub fn ratio(answer: &str, reference: &str) -> Result<Score, SimilarityError> {
    Ok(hundredths(super::ratio(answer, reference)?, "ratio"))
}

/// ROUGE-N's F-measure of the answer against the reference. See [`rouge_n`](super::rouge_n).
#[grader(crate = crate)]
pub fn rouge_n(answer: &str, reference: &str, n: usize) -> Result<Score, SimilarityError> {
    super::rouge_n(reference, answer, n).map(rouge_score)
}

/// ROUGE-L's F-measure of the answer against the reference. See [`rouge_l`](super::rouge_l).
#[grader(crate = crate)]
pub fn rouge_l(answer: &str, reference: &str) -> Result<Score, SimilarityError> {
    super::rouge_l(reference, answer).map(rouge_score)
}

/// A score of sacrebleu's (0 to 100) over 100, within `[0, 1]`: sacrebleu's own value, kept
/// in `info` under `key`, can pass 100 by a rounding (a perfect BLEU is
/// 100.00000000000004), and a score above 1 would be refused.
fn hundredths(value: f64, key: &str) -> Score {
    let mut info = Info::new();
    info.insert(key.into(), value.into());
    Score::new((value / 100.0).clamp(0.0, 1.0)).with_info(info)
}

/// sacrebleu's `sentence_bleu` over 100 (a perfect answer scores 1.0); `info.bleu` is
/// sacrebleu's value. See [`bleu`](super::bleu).
#[grader(crate = crate)]
pub fn bleu<S: AsRef<str> + serde::Serialize>(
    answer: &str,
    references: &[S],
) -> Result<Score, SimilarityError> {
    Ok(hundredths(super::bleu(answer, references)?, "bleu"))
}

/// sacrebleu's `sentence_chrf` over 100; `info.chrf` is sacrebleu's value. See
/// [`chrf`](super::chrf).
#[grader(crate = crate)]
pub fn chrf<S: AsRef<str> + serde::Serialize>(
    answer: &str,
    references: &[S],
) -> Result<Score, SimilarityError> {
    Ok(hundredths(super::chrf(answer, references)?, "chrf"))
}
