//! verifiers' `ThinkParser` and `MaybeThinkParser`: the answer after the reasoning, and
//! whether a message is one `<think>…</think>` section followed by an answer.

use memchr::memmem;

use crate::text::pychar;

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// The text after the last `</think>`, stripped; empty when there is no `</think>`
/// (verifiers' `ThinkParser().parse(text)`).
///
/// ```
/// use grader_core::format::think_answer;
///
/// assert_eq!(think_answer("<think>\n6 × 7\n</think>\n  42 "), "42");
/// assert_eq!(think_answer("<think>a</think>b<think>c</think> d"), "d");
/// assert_eq!(think_answer("42, without thinking"), "");
/// ```
#[must_use]
pub fn think_answer(text: &str) -> &str {
    memmem::rfind(text.as_bytes(), CLOSE.as_bytes())
        .map_or("", |at| pychar::strip(&text[at + CLOSE.len()..]))
}

/// The text after the last `</think>`, stripped, or the whole text stripped when there is no
/// `</think>` (verifiers' `MaybeThinkParser().parse(text)`).
///
/// ```
/// use grader_core::format::maybe_think_answer;
///
/// assert_eq!(maybe_think_answer("<think>hm</think> 42"), "42");
/// assert_eq!(maybe_think_answer(" 42 "), "42");
/// ```
#[must_use]
pub fn maybe_think_answer(text: &str) -> &str {
    let after = memmem::rfind(text.as_bytes(), CLOSE.as_bytes()).map_or(0, |at| at + CLOSE.len());
    pychar::strip(&text[after..])
}

/// Whether `message` follows verifiers' `ThinkParser` format: it starts (after whitespace) with
/// `<think>`, has one `<think>` and one `</think>`, and something (whitespace counts) after
/// the `</think>`.
///
/// ```
/// use grader_core::format::think_format;
///
/// assert!(think_format("<think>Let me think</think>Final answer"));
/// assert!(!think_format("<think>First</think><think>Second</think>Answer"));
/// assert!(!think_format("<think>Only thinking</think>"));
/// assert!(!think_format("Just an answer"));
/// ```
#[must_use]
pub fn think_format(message: &str) -> bool {
    let bytes = message.as_bytes();
    let trimmed = message.trim_start_matches(pychar::is_space);
    if !trimmed.starts_with(OPEN) {
        return false;
    }
    // The message starts with the first `<think>`: no other may follow it.
    let after_open = message.len() - trimmed.len() + OPEN.len();
    if memmem::find(&bytes[after_open..], OPEN.as_bytes()).is_some() {
        return false;
    }
    // One `</think>`, with something (whitespace counts) after it.
    memmem::find(bytes, CLOSE.as_bytes()).is_some_and(|at| {
        let after = at + CLOSE.len();
        after < bytes.len() && memmem::find(&bytes[after..], CLOSE.as_bytes()).is_none()
    })
}

/// The share of the assistant messages' texts that follow the format (verifiers'
/// `ThinkParser().get_format_reward_func()`); 0 without any message.
///
/// ```
/// use grader_core::format::think_format_reward;
///
/// let messages = ["<think>a</think>b", "no thinking", "<think>c</think>d"];
/// assert_eq!(think_format_reward(&messages), 2.0 / 3.0);
/// ```
#[must_use]
pub fn think_format_reward<S: AsRef<str>>(messages: &[S]) -> f64 {
    if messages.is_empty() {
        return 0.0;
    }
    let good = messages
        .iter()
        .filter(|message| think_format(message.as_ref()))
        .count();
    #[allow(clippy::cast_precision_loss)] // counts of messages
    let reward = good as f64 / messages.len() as f64;
    reward
}
