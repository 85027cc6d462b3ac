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
    Score::new(rouge.fmeasure).with_info(info)
}

/// rapidfuzz's `Levenshtein.normalized_similarity`; `info.distance` is the distance. See
/// [`levenshtein_similarity`](super::levenshtein_similarity).
#[grader(crate = crate)]
pub fn levenshtein(answer: &str, reference: &str) -> Result<Score, SimilarityError> {
    let distance = super::levenshtein(answer, reference)?;
    let similarity = super::levenshtein_similarity(answer, reference)?;
    let mut info = Info::new();
    info.insert("distance".into(), distance.into());
    Ok(Score::new(similarity).with_info(info))
}

/// rapidfuzz's `fuzz.ratio` over 100. See [`ratio`](super::ratio).
#[grader(crate = crate)]
pub fn ratio(answer: &str, reference: &str) -> Result<f64, SimilarityError> {
    Ok(super::ratio(answer, reference)? / 100.0)
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

/// sacrebleu's `sentence_bleu` over 100. See [`bleu`](super::bleu).
#[grader(crate = crate)]
pub fn bleu<S: AsRef<str> + serde::Serialize>(
    answer: &str,
    references: &[S],
) -> Result<f64, SimilarityError> {
    Ok(super::bleu(answer, references)? / 100.0)
}

/// sacrebleu's `sentence_chrf` over 100. See [`chrf`](super::chrf).
#[grader(crate = crate)]
pub fn chrf<S: AsRef<str> + serde::Serialize>(
    answer: &str,
    references: &[S],
) -> Result<f64, SimilarityError> {
    Ok(super::chrf(answer, references)? / 100.0)
}
