//! Why a math answer has no verdict.

/// Why [`verify`](super::verify) or [`parse`](super::parse) reached no verdict: an input past
/// one of the bounds (see [`Limits`](super::Limits)) that keep every comparison short.
///
/// An answer that merely has no extractable or parseable expression is not an error: as in
/// math-verify, it matches nothing and the verdict is `false`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MathError {
    /// The text is longer than the limit, in bytes.
    #[error("{grader}: the text is {len} bytes long, more than the limit of {limit}")]
    TooLong {
        /// The grader or function.
        grader: &'static str,
        /// The text's length in bytes.
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
}

impl MathError {
    /// The same error, attributed to `grader`.
    #[must_use]
    pub fn with_grader(mut self, name: &'static str) -> Self {
        match &mut self {
            Self::TooLong { grader, .. }
            | Self::TooDeep { grader, .. }
            | Self::TooManyDigits { grader, .. }
            | Self::TooManyNodes { grader, .. } => *grader = name,
        }
        self
    }
}

/// The first 64 characters of `text`, for error messages.
pub(crate) fn excerpt(text: &str) -> String {
    text.chars().take(64).collect()
}
