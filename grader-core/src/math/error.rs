//! Why a math answer has no verdict.

/// Why a parse, a comparison or a math grader reached no verdict: an input past one of the
/// bounds (see [`Limits`](super::Limits) and [`Budget`](super::Budget)) that keep every
/// comparison short, a deadline or a cancel flag, or a gold answer that cannot be read whole.
///
/// An answer that merely has no extractable or parseable expression is not an error: as in
/// math-verify, it matches nothing and the verdict is `false`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MathError {
    /// The text, or the answer extracted from it, is longer than its limit, in bytes.
    #[error("{grader}: the {what} is {len} bytes long, more than the limit of {limit}")]
    TooLong {
        /// The grader or function.
        grader: &'static str,
        /// What is long: `"text"` (the whole text searched) or `"extracted answer"`.
        what: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// The extracted answer nests deeper than the limit (braces, brackets, parentheses,
    /// fractions).
    #[error("{grader}: the answer {answer:?} nests deeper than {limit} levels")]
    TooDeep {
        /// The grader or function.
        grader: &'static str,
        /// The start of the answer.
        answer: String,
        /// The limit.
        limit: usize,
    },
    /// A number in the answer has more digits than the limit.
    #[error("{grader}: a number in the answer {answer:?} has {digits} digits, more than {limit}")]
    TooManyDigits {
        /// The grader or function.
        grader: &'static str,
        /// The start of the answer.
        answer: String,
        /// The number's digit count.
        digits: usize,
        /// The limit.
        limit: usize,
    },
    /// The answer's expression has more nodes than the limit.
    #[error("{grader}: the answer {answer:?} has more than {limit} expression nodes")]
    TooManyNodes {
        /// The grader or function.
        grader: &'static str,
        /// The start of the answer.
        answer: String,
        /// The limit.
        limit: usize,
    },
    /// Comparing the two answers exactly needs more work than the [`Budget`](super::Budget)
    /// allows (numbers of millions of digits, expansions of thousands of terms).
    #[error(
        "{grader}: comparing the answers exactly needs more than {limit} units of work (numbers or expansions too large)"
    )]
    TooMuchWork {
        /// The grader or function.
        grader: &'static str,
        /// The work bound.
        limit: u64,
    },
    /// The deadline of the [`Budget`](super::Budget) passed before a verdict.
    #[error("{grader}: the deadline passed before a verdict")]
    Deadline {
        /// The grader or function.
        grader: &'static str,
    },
    /// The cancel flag of the [`Budget`](super::Budget) was set before a verdict.
    #[error("{grader}: cancelled before a verdict")]
    Cancelled {
        /// The grader or function.
        grader: &'static str,
    },
    /// The gold answer yields no expression (SPEC D38: unscored, never a 0).
    #[error("{grader}: no answer can be read from the gold {gold:?}")]
    GoldUnreadable {
        /// The grader or function.
        grader: &'static str,
        /// The start of the gold text.
        gold: String,
    },
    /// Only part of the gold answer was read (SPEC D38): a gold written as bare LaTeX that
    /// does not parse whole, whose extraction found a piece of it (`2\sqrt{3}` read as `2`).
    #[error(
        "{grader}: only {extracted:?} was read from the gold {gold:?}; write the gold whole (as LaTeX math, or in $…$ or \\boxed{{}})"
    )]
    GoldFragment {
        /// The grader or function.
        grader: &'static str,
        /// The start of the gold text.
        gold: String,
        /// What was extracted from it.
        extracted: String,
    },
}

impl MathError {
    /// The same error, attributed to `grader`.
    #[must_use]
    pub fn with_grader(mut self, name: &'static str) -> Self {
        match &mut self {
            Self::TooLong { grader, .. }
            | Self::TooDeep { grader, .. }
            | Self::TooManyDigits { grader, .. }
            | Self::TooManyNodes { grader, .. }
            | Self::TooMuchWork { grader, .. }
            | Self::Deadline { grader }
            | Self::Cancelled { grader }
            | Self::GoldUnreadable { grader, .. }
            | Self::GoldFragment { grader, .. } => *grader = name,
        }
        self
    }

    /// Whether the error is about the gold answer (a typed failure of the grading, not of
    /// the answer graded).
    #[must_use]
    pub fn is_gold_error(&self) -> bool {
        matches!(
            self,
            Self::GoldUnreadable { .. } | Self::GoldFragment { .. }
        )
    }
}

/// The first 64 characters of `text`, for error messages.
pub(crate) fn excerpt(text: &str) -> String {
    text.chars().take(64).collect()
}
