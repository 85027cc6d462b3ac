//! The bounds on what one parse reads.

use serde::{Deserialize, Serialize};

/// The bounds on what one parse reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// The most bytes of text searched for an answer (1 000 000).
    pub text: usize,
    /// The most bytes of one extracted answer (4 096).
    pub answer: usize,
    /// The deepest nesting of an answer (64).
    pub depth: usize,
    /// The most expression nodes of an answer (2 048).
    pub nodes: usize,
    /// The most digits of one number (1 000).
    pub digits: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            text: 1_000_000,
            answer: 4_096,
            depth: 64,
            nodes: 2_048,
            digits: 1_000,
        }
    }
}
