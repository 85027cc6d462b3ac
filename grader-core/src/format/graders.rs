//! The format checks as graders, made with `#[grader]`: each takes one completion (one
//! assistant message), records its arguments under `_parameters` and runs in a
//! [`Gather`](crate::Gather) or a tree like any grader.
//!
//! ```
//! use grader_core::Grade;
//! use grader_core::format::{ThinkAnswer, ThinkFormat, XmlAnswer, XmlFields, XmlFormat, XmlParser};
//!
//! let parser = XmlParser::new(["think", "answer"])?;
//! let completion = "<think>6 × 7</think>\n<answer>42</answer>";
//! let result = Grade::from_subscores([
//!     XmlFormat { completion, parser: &parser }.grade(0.2).now()?,
//!     XmlFields { completion, parser: &parser }.grade(0.2).now()?,
//!     XmlAnswer { completion, parser: &parser, expected: "42" }.grade(0.6).now()?,
//! ])?;
//! assert_eq!(result.reward(), 1.0);
//! let subscores = result.subscores.as_deref().unwrap();
//! assert_eq!(subscores[1].info().unwrap()["fields"]["think"], "6 × 7");
//! assert_eq!(subscores[2].info().unwrap()["answer"], "42");
//!
//! let completion = "<think>6 × 7</think> 42";
//! assert_eq!(ThinkFormat { completion }.grade(1.0).now()?.value(), 1.0);
//! assert_eq!(ThinkAnswer { completion, expected: "42" }.grade(1.0).now()?.value(), 1.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::XmlParser;
use crate::{Info, Score, grader};

/// verifiers' format reward of the completion as one assistant message. See
/// [`XmlParser::format_score`].
#[grader(crate = crate)]
pub fn xml_format(completion: &str, parser: &XmlParser) -> f64 {
    parser.format_reward(&[completion])
}

/// The share of the parser's fields that have a section in the completion (the first of each
/// tag, as [`XmlParser::parse`] finds it); `info.fields` maps each tag to its content or
/// `null`.
#[grader(crate = crate)]
pub fn xml_fields(completion: &str, parser: &XmlParser) -> Score {
    let parsed = parser.parse(completion);
    let present = parser
        .fields
        .iter()
        .filter(|field| field.tags().iter().any(|tag| parsed.get(tag).is_some()))
        .count();
    let mut info = Info::new();
    info.insert(
        "fields".into(),
        serde_json::to_value(&parsed).unwrap_or_default(),
    );
    #[allow(clippy::cast_precision_loss)] // counts of fields
    let share = present as f64 / parser.fields.len() as f64;
    Score::new(share).with_info(info)
}

/// 1.0 when the completion's last answer ([`XmlParser::parse_answer`]) is `expected`, exactly;
/// `info.answer` is the answer found, or `null`.
#[grader(crate = crate)]
pub fn xml_answer(completion: &str, parser: &XmlParser, expected: &str) -> Score {
    let answer = parser.parse_answer(completion);
    let mut info = Info::new();
    info.insert("answer".into(), answer.into());
    Score::new(if answer == Some(expected) { 1.0 } else { 0.0 }).with_info(info)
}

/// 1.0 when the completion follows verifiers' `ThinkParser` format. See
/// [`think_format`](super::think_format).
#[grader(crate = crate)]
pub fn think_format(completion: &str) -> bool {
    super::think_format(completion)
}

/// 1.0 when the text after the last `</think>`, stripped, is `expected`, exactly;
/// `info.answer` is that text. See [`think_answer`](super::think_answer).
#[grader(crate = crate)]
pub fn think_answer(completion: &str, expected: &str) -> Score {
    let answer = super::think_answer(completion);
    let mut info = Info::new();
    info.insert("answer".into(), answer.into());
    Score::new(if answer == expected { 1.0 } else { 0.0 }).with_info(info)
}
