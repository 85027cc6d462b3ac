//! How similar an answer is to a reference: edit distances as rapidfuzz 3.14.3 computes them
//! ([`levenshtein`], [`levenshtein_similarity`], [`indel`], [`ratio`]) and ROUGE-N and
//! ROUGE-L as Google's `rouge-score` 0.1.2 computes them ([`rouge_n`], [`rouge_l`]), and
//! sentence BLEU and chrF as sacrebleu 2.5.1 computes them ([`bleu`], [`chrf`]).
//!
//! ```
//! use grader_core::similarity::{levenshtein, levenshtein_similarity, ratio, rouge_l, rouge_n};
//!
//! assert_eq!(levenshtein("kitten", "sitting")?, 3);
//! assert!((levenshtein_similarity("kitten", "sitting")? - 4.0 / 7.0).abs() < 1e-12);
//! assert_eq!(ratio("this is a test", "this is a test!")?.round(), 97.0);
//! let rouge = rouge_n("The cat sat on the mat.", "the cat is on the mat", 1)?;
//! assert!((rouge.fmeasure - 5.0 / 6.0).abs() < 1e-12);
//! assert!((rouge_l("the cat sat", "the cat")?.recall - 2.0 / 3.0).abs() < 1e-12);
//! # Ok::<(), grader_core::similarity::SimilarityError>(())
//! ```
//!
//! Strings are compared by Unicode code point, as Python compares `str`s. The edit distances
//! and ROUGE-L compute a table of `len(a) × len(b)` cells (after removing a common prefix and
//! suffix for the edit distances) 64 cells at a time, with the bit-parallel algorithms
//! rapidfuzz uses; beyond [`MAX_CELLS`] it is a typed [`SimilarityError::TooLarge`], not a
//! long wait.
//!
//! The graders ([`Levenshtein`], [`Ratio`], [`RougeN`], [`RougeL`], [`Bleu`], [`Chrf`]; see
//! [`graders`]) score the
//! similarity in `[0, 1]` and record their arguments under `_parameters`.

mod bitpar;
#[cfg(feature = "macros")]
pub mod graders;
mod rouge;
mod sacrebleu;

#[cfg(feature = "macros")]
pub use graders::{Bleu, Chrf, Levenshtein, Ratio, RougeL, RougeN};
pub use rouge::{RougeScore, rouge_l, rouge_n, rouge_tokens};
pub use sacrebleu::{bleu, chrf, tokenize_13a};

/// The most cells of the `len(a) × len(b)` table one comparison may compute (10 billion, two
/// texts of 100 000 characters; computed 64 at a time, about a third of a second, and far
/// less for the edit distance of two similar texts, whose band is computed first).
pub const MAX_CELLS: u64 = 10_000_000_000;

/// Why a similarity has no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SimilarityError {
    /// The two inputs would need more than [`MAX_CELLS`] cells.
    #[error("{grader}: comparing {left} by {right} items needs more than {limit} cells")]
    TooLarge {
        /// The grader or function.
        grader: &'static str,
        /// The first input's length (characters or tokens, after common affixes).
        left: usize,
        /// The second input's length.
        right: usize,
        /// [`MAX_CELLS`].
        limit: u64,
    },
    /// BLEU or chrF without a reference.
    #[error("{grader}: no reference to compare with")]
    NoReferences {
        /// The grader or function.
        grader: &'static str,
    },
    /// ROUGE-N with `n = 0`.
    #[error("{grader}: n must be at least 1, not {n}")]
    ZeroN {
        /// The grader or function.
        grader: &'static str,
        /// The `n` given.
        n: usize,
    },
}

/// Checks that `left × right` cells fit in [`MAX_CELLS`].
fn check_size(grader: &'static str, left: usize, right: usize) -> Result<(), SimilarityError> {
    let cells = (left as u64).saturating_mul(right as u64);
    if cells > MAX_CELLS {
        return Err(SimilarityError::TooLarge {
            grader,
            left,
            right,
            limit: MAX_CELLS,
        });
    }
    Ok(())
}

/// The two strings as characters, without their common prefix and suffix (which change no
/// edit distance).
fn trimmed(a: &str, b: &str) -> (Vec<char>, Vec<char>, usize, usize) {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (la, lb) = (a.len(), b.len());
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (
        a[prefix..la - suffix].to_vec(),
        b[prefix..lb - suffix].to_vec(),
        la,
        lb,
    )
}

/// The Levenshtein distance (insertions, deletions and substitutions, each costing 1):
/// rapidfuzz's `Levenshtein.distance`.
///
/// # Errors
/// [`SimilarityError::TooLarge`] beyond [`MAX_CELLS`].
pub fn levenshtein(a: &str, b: &str) -> Result<usize, SimilarityError> {
    let (a, b, _, _) = trimmed(a, b);
    check_size("levenshtein", a.len(), b.len())?;
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    Ok(bitpar::levenshtein_chars(&short, &long))
}

/// rapidfuzz's `Levenshtein.normalized_similarity`: `1 - distance / max(len(a), len(b))`, 1
/// for two empty strings.
///
/// # Errors
/// As [`levenshtein`].
#[allow(clippy::cast_precision_loss)] // lengths are far below 2^53
pub fn levenshtein_similarity(a: &str, b: &str) -> Result<f64, SimilarityError> {
    let maximum = a.chars().count().max(b.chars().count());
    let distance = levenshtein(a, b)?;
    Ok(normalized_similarity(distance, maximum))
}

/// `1 - distance / maximum` as rapidfuzz writes it (0 distance when `maximum` is 0).
#[allow(clippy::cast_precision_loss)] // lengths are far below 2^53
fn normalized_similarity(distance: usize, maximum: usize) -> f64 {
    let normalized = if maximum == 0 {
        0.0
    } else {
        distance as f64 / maximum as f64
    };
    1.0 - normalized
}

/// The length of the longest common subsequence of `a` and `b`.
fn lcs<T: std::hash::Hash + Eq + Copy>(a: &[T], b: &[T]) -> usize {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    bitpar::lcs(short, long)
}

/// The InDel distance (insertions and deletions only): rapidfuzz's `Indel.distance`,
/// `len(a) + len(b) - 2 × LCS`.
///
/// # Errors
/// [`SimilarityError::TooLarge`] beyond [`MAX_CELLS`].
pub fn indel(a: &str, b: &str) -> Result<usize, SimilarityError> {
    let (ta, tb, la, lb) = trimmed(a, b);
    check_size("indel", ta.len(), tb.len())?;
    let common = la - ta.len() + lcs(&ta, &tb);
    Ok(la + lb - 2 * common)
}

/// rapidfuzz's `fuzz.ratio`: `100 × (1 - indel / (len(a) + len(b)))`, 100 for two empty
/// strings.
///
/// # Errors
/// As [`indel`].
pub fn ratio(a: &str, b: &str) -> Result<f64, SimilarityError> {
    let maximum = a.chars().count() + b.chars().count();
    Ok(normalized_similarity(indel(a, b)?, maximum) * 100.0)
}
