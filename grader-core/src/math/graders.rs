//! The math comparison as a grader, made with `#[grader]`: 1 where the answer's final answer
//! is the gold's as math-verify 0.9.0 judges it, 0 otherwise; its arguments recorded under
//! `_parameters`, usable in a [`Gather`](crate::Gather) or a tree like any grader.
//!
//! ```
//! use grader_core::math::MathVerify;
//!
//! let score = MathVerify { answer: "so it is $\\boxed{\\frac{3}{4}}$", gold: "0.75" }
//!     .grade(1.0)
//!     .now()?;
//! assert_eq!(score.value(), 1.0);
//! assert_eq!(score.info().unwrap()["answer_parsed"], "3/4");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::{MathError, Parsed};
use crate::{Info, Score, grader};

fn shown(parsed: &Parsed) -> serde_json::Value {
    match (&parsed.expr, &parsed.text) {
        (Some(expr), _) => super::expr::show(expr).into(),
        (None, Some(text)) => text.clone().into(),
        (None, None) => serde_json::Value::Null,
    }
}

/// math-verify's `verify(parse(gold), parse(answer))`; `info` shows what was read from each.
/// See [`verify`](super::verify).
#[grader(crate = crate, name = "math_verify", type = MathVerify)]
pub fn math_verify(answer: &str, gold: &str) -> Result<Score, MathError> {
    let gold_parsed = super::parse(gold).map_err(|e| e.with_grader("math_verify"))?;
    let answer_parsed = super::parse(answer).map_err(|e| e.with_grader("math_verify"))?;
    let correct = super::verify_parsed(&gold_parsed, &answer_parsed);
    let mut info = Info::new();
    info.insert("answer_parsed".into(), shown(&answer_parsed));
    info.insert("gold_parsed".into(), shown(&gold_parsed));
    Ok(Score::new(if correct { 1.0 } else { 0.0 }).with_info(info))
}
