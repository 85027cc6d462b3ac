//! The math comparison as graders, made with `#[grader]`: 1 where the answer's final answer is
//! the gold's, 0 otherwise; their arguments recorded under `_parameters`, usable in a
//! [`Gather`](crate::Gather) or a tree like any grader.
//!
//! The gold is read the way a data set writes it ([`read_gold`], SPEC D38):
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
/// the gold is read whole ([`read_gold`]). `info` shows what was read from
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

/// Inspect AI 0.3.285's `math()` scorer (see [`inspect_math`](super::inspect_math)): 1 where
/// the completion's answer equals one of the targets; `info` holds Inspect's
/// `math_scorer_status`, the answer it read, the reason where it read none, and
/// `math_semantics`. A completion that cannot be read, or is past a limit, scores 0 with the
/// reason; targets none of which can be read are the grader's error.
///
/// ```
/// use grader_core::math::InspectMath;
///
/// let score = InspectMath { answer: "\\boxed{\\sqrt2}", targets: &["$\\sqrt{2}$"] }.grade(1.0).now()?;
/// assert_eq!(score.value(), 1.0);
/// assert_eq!(score.info().unwrap()["status"], "correct");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[grader(crate = crate, name = "inspect_math", type = InspectMath)]
pub fn inspect_math<S: AsRef<str> + serde::Serialize>(
    answer: &str,
    targets: &[S],
) -> Result<Score, MathError> {
    let targets: Vec<&str> = targets.iter().map(AsRef::as_ref).collect();
    let verdict = super::inspect_math(answer, &targets).map_err(|e| e.with_grader("inspect_math"));
    let verdict = match verdict {
        Ok(v) => v,
        Err(error) if error.is_gold_error() => return Err(error),
        Err(error) => {
            let mut info = Info::new();
            info.insert("answer_error".into(), error.to_string().into());
            info.insert("math_semantics".into(), 2.into());
            return Ok(Score::new(0.0).with_info(info));
        }
    };
    let mut info = Info::new();
    info.insert(
        "status".into(),
        serde_json::to_value(verdict.status).unwrap_or_default(),
    );
    info.insert("answer".into(), verdict.answer.clone().into());
    if let Some(reason) = &verdict.reason {
        info.insert("reason".into(), reason.clone().into());
    }
    info.insert("math_semantics".into(), 2.into());
    Ok(Score::new(verdict.value()).with_info(info))
}
