//! The math comparison as graders, made with `#[grader]`: 1 where the answer's final answer is
//! the gold's, 0 otherwise; their arguments recorded under `_parameters`, usable in a
//! [`Gather`](crate::Gather) or a tree like any grader.
//!
//! The gold is read the way a data set writes it ([`read_gold`](super::read_gold), SPEC D38):
//! a gold that cannot be read whole is the grader's error (unscored), never a 0 and never a
//! comparison against a fragment. An answer that cannot be read, or is past a bound, scores 0
//! with the reason in `info.answer_error` (SPEC D43): writing something unjudgeable never
//! escapes a 0. `info` records what each side was read as and `math_semantics` (2: exact
//! verdicts; 1: math-verify's own, [`Semantics::Parity`](super::Semantics::Parity)), so that a
//! training run can tell which semantics produced its rewards.
//!
//! ```
//! use grader_core::math::MathVerify;
//!
//! let score = MathVerify { answer: "so it is $\\boxed{\\frac{3}{4}}$", gold: "0.75" }
//!     .grade(1.0)
//!     .now()?;
//! assert_eq!(score.value(), 1.0);
//! let info = score.info().unwrap();
//! assert_eq!(info["answer_parsed"], "3/4");
//! assert_eq!(info["math_semantics"], 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::{MathConfig, MathError, Parsed, parse_with_options, read_gold, verify_parsed_with};
use crate::{Info, Score, grader};

fn shown(parsed: &Parsed) -> serde_json::Value {
    match (&parsed.expr, &parsed.choice, &parsed.text) {
        (Some(expr), _, _) => super::expr::show(expr).into(),
        (None, Some(choice), _) => choice.clone().into(),
        (None, None, Some(text)) => text.clone().into(),
        (None, None, None) => serde_json::Value::Null,
    }
}

/// The score of `answer` against `gold` under `config`, as the graders give it.
fn score(
    answer: &str,
    gold: &str,
    config: &MathConfig,
    name: &'static str,
) -> Result<Score, MathError> {
    let gold_parsed = read_gold(gold, config).map_err(|e| e.with_grader(name))?;
    let mut info = Info::new();
    info.insert("gold_parsed".into(), shown(&gold_parsed));
    info.insert(
        "math_semantics".into(),
        config.verify.semantics.version().into(),
    );
    let verdict = parse_with_options(answer, &config.answer).and_then(|answer_parsed| {
        info.insert("answer_parsed".into(), shown(&answer_parsed));
        verify_parsed_with(&gold_parsed, &answer_parsed, &config.verify)
    });
    match verdict {
        Ok(correct) => Ok(Score::new(if correct { 1.0 } else { 0.0 }).with_info(info)),
        Err(error) => {
            // The answer is past a bound, or cannot be compared within the budget: a 0 with
            // the reason, never an error that skips it.
            info.insert(
                "answer_error".into(),
                error.with_grader(name).to_string().into(),
            );
            Ok(Score::new(0.0).with_info(info))
        }
    }
}

/// math-verify's `verify(parse(gold), parse(answer))` with its defaults and exact verdicts;
/// the gold is read whole ([`read_gold`](super::read_gold)). `info` shows what was read from
/// each side. See [`verify`](super::verify).
#[grader(crate = crate, name = "math_verify", type = MathVerify)]
pub fn math_verify(answer: &str, gold: &str) -> Result<Score, MathError> {
    score(answer, gold, &MathConfig::math_verify(), "math_verify")
}

/// [`MathVerify`] under a reward function's configuration: TRL's, open-r1's, verl's (see
/// [`MathConfig`]) or any other, recorded with the arguments.
///
/// ```
/// use grader_core::math::{MathConfig, MathVerifyWith};
///
/// let config = MathConfig::trl_accuracy_reward();
/// let score = MathVerifyWith { answer: "so \\boxed{2\\sqrt{3}}", gold: "2\\sqrt{3}", config: &config }
///     .grade(1.0)
///     .now()?;
/// assert_eq!(score.value(), 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[grader(crate = crate, name = "math_verify", type = MathVerifyWith)]
pub fn math_verify_with(answer: &str, gold: &str, config: &MathConfig) -> Result<Score, MathError> {
    score(answer, gold, config, "math_verify")
}
