//! Math answers as HuggingFace's `math-verify` 0.9.0 judges them (with latex2sympy2_extended
//! 1.11.0 and sympy 1.14.0), with its whole configuration surface: [`parse`] finds the final
//! answer in a free text (`\boxed{}`, `$…$`, `\[…\]`, "the answer is", plain numbers, letters
//! of a multiple choice) and reads it (fractions, roots, π, percents, units, thousands
//! separators, intervals, sets, tuples, matrices, equations); [`verify`] compares a gold
//! answer with a model's. This is what TRL, open-r1 and verl call, each with its own
//! configuration ([`MathConfig`]).
//!
//! ```
//! use grader_core::math::verify;
//!
//! assert!(verify("$\\frac{1}{2}$", "The answer is $\\boxed{0.5}$.")?);
//! assert!(verify("$x = 3$", "so $3$")?);
//! assert!(verify("$[0, 1)$", "\\boxed{[0,1)}")?);
//! assert!(verify("1,000", "It costs $1000.")?);
//! assert!(!verify("$\\sqrt{2}$", "\\boxed{1.41}")?);
//! // Two different exact values are never equal (SPEC D36).
//! assert!(!verify("10000000001", "10000000000")?);
//! assert!(!verify("$2^{64}x$", "$(2^{64}-1)x$")?);
//! # Ok::<(), grader_core::math::MathError>(())
//! ```
//!
//! Everything is parsed and compared in Rust, with exact big rationals (num-bigint and
//! num-rational, behind the `math` feature) and no computer algebra system: values are
//! compared on exact normal forms (polynomials with rational coefficients over variables, π,
//! e and roots of primes), sympy's `simplify` is replaced by evaluation at several points only
//! for what exact algebra does not reduce (functions, logarithms), and its `solve` (for
//! equations and inequalities) by checking that one side's difference is a constant multiple
//! of the other's. Where math-verify's verdict is wrong, ours is right
//! ([`Semantics::Exact`]); [`Semantics::Parity`] gives math-verify's own.
//!
//! Every input is bounded ([`Limits`], after Inspect AI 0.3.285's `math()` scorer): the text's
//! length, each answer's length, its nesting depth, its nodes and its numbers' digits; and
//! every comparison by a [`Budget`] of work (with an optional deadline and cancel flag). An
//! input past a bound is a typed [`MathError`], never a hang, a stack overflow or a silent 0.

mod algebra;
mod budget;
mod compare;
mod config;
mod error;
pub mod expr;
mod extract;
#[cfg(feature = "macros")]
pub mod graders;
pub mod inspect;
mod latex;
mod limits;
mod metric;
mod normalize;
mod numeric;
mod scan;

pub use budget::Budget;
pub use config::{
    Aggregation, BoxedMode, ExprExtractionConfig, ExtractionMode, ExtractionTarget, FallbackMode,
    LatexExtractionConfig, MathConfig, NormalizationConfig, ParseOptions, Semantics,
    StringExtractionConfig, VerifyOptions,
};
pub use error::MathError;
pub use expr::Expr;
#[cfg(feature = "macros")]
pub use graders::{InspectMath, MathVerify, MathVerifyWith};
pub use inspect::{InspectMathScore, InspectMathStatus, inspect_math, inspect_math_with};
pub use limits::Limits;
pub use metric::{MathMetric, read_gold};

use std::ops::Range;
use std::time::Duration;

use extract::Found;
use normalize::{Boxed, last_equation};
use num_bigint::BigInt;
use num_rational::BigRational;
use numeric::Ctx;

/// Which kind of match an answer was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Source {
    /// A LaTeX environment (`$…$`, `\[…\]`, `\(…\)`, ` […] `, a bare `\frac{a}{b}`), or
    /// several joined by "and", "or", commas.
    Latex,
    /// `\boxed{…}`.
    Boxed,
    /// A plain expression (`1/2`, `(3+4)*2`).
    Expression,
    /// A plain number (`1,000.5`, `30%`).
    Number,
    /// One of a [`StringExtractionConfig`]'s strings.
    String,
}

/// What [`parse`] found in a text: math-verify's list of one parsed answer (an expression,
/// or a string of a [`StringExtractionConfig`]) and the text of the first match tried (its
/// "first match" fallback), any of which may be missing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    /// The parsed answer.
    pub expr: Option<Expr>,
    /// The string a [`StringExtractionConfig`] found (lower-cased where it says so), in
    /// place of an expression.
    pub choice: Option<String>,
    /// The extracted text of the first candidate tried (normalised LaTeX, or a number's
    /// digits), compared as a string when the expressions do not match.
    pub text: Option<String>,
    /// Where in the text the answer ([`expr`](Self::expr) or [`choice`](Self::choice)) was
    /// found, in bytes.
    pub span: Option<Range<usize>>,
    /// Which kind of match it was read from.
    pub source: Option<Source>,
}

impl Parsed {
    /// Whether nothing was found.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.expr.is_none() && self.choice.is_none() && self.text.is_none()
    }
}

/// math-verify's `parse(text)` with its default configuration (LaTeX and plain expressions,
/// `\boxed{}` at priority 50): the final answer in `text`.
///
/// ```
/// use grader_core::math::{Expr, parse};
///
/// let parsed = parse("so the answer is $\\boxed{42}$")?;
/// assert_eq!(parsed.expr, Some(Expr::int(42)));
/// assert_eq!(parsed.text.as_deref(), Some("42"));
/// assert!(parse("no number here")?.is_empty());
/// # Ok::<(), grader_core::math::MathError>(())
/// ```
///
/// # Errors
/// A [`MathError`] where the text or the answer tried is past [`Limits::default`], or the
/// parse outlives its 5-second `parsing_timeout`.
pub fn parse(text: &str) -> Result<Parsed, MathError> {
    parse_with_options(text, &ParseOptions::default())
}

/// [`parse`] with other bounds.
///
/// # Errors
/// A [`MathError`] where the text or the answer tried is past `limits`.
pub fn parse_with(text: &str, limits: &Limits) -> Result<Parsed, MathError> {
    parse_with_options(
        text,
        &ParseOptions {
            limits: *limits,
            ..ParseOptions::default()
        },
    )
}

/// math-verify's `parse(text, extraction_config, fallback_mode, extraction_mode,
/// parsing_timeout, raise_on_error)`.
///
/// ```
/// use grader_core::math::{ExtractionTarget, ParseOptions, StringExtractionConfig, parse_with_options};
///
/// let letters = ParseOptions::targets([ExtractionTarget::String(StringExtractionConfig::default())]);
/// let parsed = parse_with_options("I think the answer is B.", &letters)?;
/// assert_eq!(parsed.choice.as_deref(), Some("b"));
/// # Ok::<(), grader_core::math::MathError>(())
/// ```
///
/// # Errors
/// A [`MathError`] where the text or the answer tried is past `options.limits`, or the parse
/// outlives `options.parsing_timeout`.
pub fn parse_with_options(text: &str, options: &ParseOptions) -> Result<Parsed, MathError> {
    let mut budget = Budget::new();
    if let Some(seconds) = options.parsing_timeout.filter(|&s| s > 0) {
        budget = budget.with_timeout(Duration::from_secs(u64::from(seconds)));
    }
    parse_in(text, options, &mut budget)
}

/// [`parse_with_options`] within `budget` (a caller's own deadline or cancel flag; the
/// options' `parsing_timeout` is not added).
///
/// # Errors
/// As [`parse_with_options`], and where `budget` runs out.
pub fn parse_in(
    text: &str,
    options: &ParseOptions,
    budget: &mut Budget,
) -> Result<Parsed, MathError> {
    let limits = &options.limits;
    if text.len() > limits.text {
        return Err(MathError::TooLong {
            grader: "math",
            what: "text",
            len: text.len(),
            limit: limits.text,
        });
    }
    let targets = &options.extraction_config;
    let first_match = options.extraction_mode == ExtractionMode::FirstMatch;
    let mut fallback: Option<String> = None;
    let mut answer: Option<(Answer, Range<usize>, Source)> = None;
    budget.check()?;
    let scan = scan::Scan::new(text);
    for priority in extract::priorities(targets) {
        budget.charge(1)?;
        let mut found_any = false;
        for candidate in extract::group(&scan, targets, priority) {
            budget.charge(1 + (candidate.end - candidate.start) as u64 / 64)?;
            let target = &targets[candidate.target];
            let (read, shown) = read(&candidate.found, target, options)?;
            found_any = true;
            if fallback.is_none() && !shown.is_empty() {
                fallback = Some(shown);
            }
            if let Some(read) = read {
                answer = Some((
                    read,
                    candidate.start..candidate.end,
                    source(&candidate.found),
                ));
                break;
            }
            if first_match {
                break;
            }
        }
        if answer.is_some() || (found_any && first_match) {
            break;
        }
    }
    if options.fallback_mode == FallbackMode::NoFallback {
        fallback = None;
    }
    let mut parsed = Parsed {
        text: fallback,
        ..Parsed::default()
    };
    if let Some((read, span, source)) = answer {
        match read {
            Answer::Expr(expr) => parsed.expr = Some(expr),
            Answer::Choice(choice) => parsed.choice = Some(choice),
        }
        parsed.span = Some(span);
        parsed.source = Some(source);
    }
    Ok(parsed)
}

/// What a candidate read to.
enum Answer {
    Expr(Expr),
    Choice(String),
}

fn source(found: &Found) -> Source {
    match found {
        Found::Latex(parts) if parts.iter().any(|(_, _, b)| *b == Boxed::Last) => Source::Boxed,
        Found::Latex(parts)
            if parts
                .iter()
                .all(|(content, _, _)| content.contains("\\boxed")) =>
        {
            Source::Boxed
        }
        Found::Latex(_) => Source::Latex,
        Found::Number(..) => Source::Number,
        Found::Plain(_) => Source::Expression,
        Found::Str(_) => Source::String,
    }
}

/// Reads one candidate: its answer (if it parses) and its text.
fn read(
    found: &Found,
    target: &ExtractionTarget,
    options: &ParseOptions,
) -> Result<(Option<Answer>, String), MathError> {
    let limits = &options.limits;
    let check = |text: &str| {
        if text.len() > limits.answer {
            Err(MathError::TooLong {
                grader: "math",
                what: "extracted answer",
                len: text.len(),
                limit: limits.answer,
            })
        } else {
            Ok(())
        }
    };
    let expr = |e: Option<Expr>| e.map(Answer::Expr);
    match found {
        Found::Str(key) => Ok((Some(Answer::Choice(key.clone())), original_key(key, target))),
        Found::Number(digits, percent) => {
            let value = number(digits, limits)?;
            check(digits)?;
            let value = if *percent {
                Expr::Percent(Box::new(value))
            } else {
                value
            };
            Ok((Some(Answer::Expr(value)), digits.clone()))
        }
        Found::Plain(text) => {
            check(text)?;
            let prepared = text.replace('\n', " ").replace('^', "**");
            if prepared.contains(['×', '÷']) {
                return Ok((None, text.clone()));
            }
            Ok((
                expr(latex::parse_plain(prepared.trim(), limits)?),
                text.clone(),
            ))
        }
        Found::Latex(parts) => {
            let ExtractionTarget::Latex(config) = target else {
                return Ok((None, String::new()));
            };
            let exact = options.semantics == Semantics::Exact;
            let mut exprs = Vec::new();
            let mut shown = Vec::new();
            for (content, percent, boxed) in parts {
                check(content)?;
                let mut normalization = config.normalization_config;
                if *boxed == Boxed::Last {
                    normalization.boxed = BoxedMode::Last;
                }
                let normalized = normalize::normalize(content, &normalization, exact);
                check(&normalized)?;
                let mut expr = latex::parse_latex(&normalized, limits)?;
                if expr.is_none()
                    && let Some(last) = last_equation(&normalized)
                {
                    expr = latex::parse_latex(last, limits)?;
                }
                if expr.is_none() && UNREAD.iter().any(|c| normalized.contains(c)) {
                    // Sums, integrals, products and limits are read by latex2sympy but not
                    // here: the answer is kept whole, as a name, so that it is compared by its
                    // text and not replaced by a later candidate.
                    expr = Some(Expr::Sym(normalized.clone()));
                }
                if *percent {
                    expr = expr.map(|e| Expr::Percent(Box::new(e)));
                }
                exprs.push(expr);
                shown.push(normalized);
            }
            if exprs.len() > 1 && exprs.iter().all(Option::is_some) {
                let mut items = Vec::new();
                for expr in exprs.into_iter().flatten() {
                    match expr {
                        Expr::Set(inner) => items.extend(inner),
                        other => items.push(other),
                    }
                }
                return Ok((Some(Answer::Expr(Expr::Set(items))), shown.join(" and ")));
            }
            let first = exprs.into_iter().next().flatten();
            Ok((expr(first), shown.into_iter().next().unwrap_or_default()))
        }
    }
}

/// The string as the configuration lists it (the fallback keeps its case).
fn original_key(key: &str, target: &ExtractionTarget) -> String {
    match target {
        ExtractionTarget::String(config) => config
            .strings
            .iter()
            .find(|s| s.as_str() == key || (config.lowercase && s.to_lowercase() == key))
            .cloned()
            .unwrap_or_else(|| key.to_owned()),
        _ => key.to_owned(),
    }
}

/// Commands latex2sympy2_extended reads that this parser does not.
const UNREAD: [&str; 5] = ["\\sum", "\\int", "\\prod", "\\lim", "\\oint"];

/// A number's digits as sympy's `Number`: an integer, or a decimal.
fn number(digits: &str, limits: &Limits) -> Result<Expr, MathError> {
    let count = digits.chars().filter(char::is_ascii_digit).count();
    if count > limits.digits {
        return Err(MathError::TooManyDigits {
            grader: "math",
            answer: error::excerpt(digits),
            digits: count,
            limit: limits.digits,
        });
    }
    if digits.contains('.') {
        return Ok(Expr::Float(digits.parse().unwrap_or(f64::NAN)));
    }
    Ok(digits.parse::<BigInt>().map_or(Expr::Float(f64::NAN), |n| {
        Expr::Num(BigRational::from_integer(n))
    }))
}

/// math-verify's `verify(gold, answer)` on two parsed answers with its defaults (and exact
/// verdicts, [`Semantics::Exact`]): whether any of the gold's answer and text matches any of
/// the answer's.
///
/// # Errors
/// [`MathError::TooMuchWork`] where comparing exactly needs more than
/// [`Budget::DEFAULT_WORK`], [`MathError::Deadline`] past the 5-second `timeout_seconds`.
pub fn verify_parsed(gold: &Parsed, answer: &Parsed) -> Result<bool, MathError> {
    verify_parsed_with(gold, answer, &VerifyOptions::default())
}

/// math-verify's `verify(gold, answer, float_rounding, numeric_precision, strict,
/// allow_set_relation_comp, timeout_seconds, raise_on_error)`.
///
/// ```
/// use grader_core::math::{VerifyOptions, parse, verify_parsed_with};
///
/// let (gold, answer) = (parse("$\\frac{1}{2^{99}}$")?, parse("$\\frac{1}{2^{98}}$")?);
/// assert!(!verify_parsed_with(&gold, &answer, &VerifyOptions::default())?);
/// // math-verify's own verdict: the difference, under 2^-54, is chopped to 0.
/// assert!(verify_parsed_with(&gold, &answer, &VerifyOptions::parity())?);
/// # Ok::<(), grader_core::math::MathError>(())
/// ```
///
/// # Errors
/// As [`verify_parsed`], with the options' work and timeout.
pub fn verify_parsed_with(
    gold: &Parsed,
    answer: &Parsed,
    options: &VerifyOptions,
) -> Result<bool, MathError> {
    let mut budget = Budget::with_work(options.work);
    if let Some(seconds) = options.timeout_seconds.filter(|&s| s > 0) {
        budget = budget.with_timeout(Duration::from_secs(u64::from(seconds)));
    }
    verify_parsed_in(gold, answer, options, &mut budget)
}

/// [`verify_parsed_with`] within `budget` (a caller's own deadline or cancel flag; the
/// options' `timeout_seconds` and `work` are not added).
///
/// # Errors
/// As [`verify_parsed`], where `budget` runs out.
pub fn verify_parsed_in(
    gold: &Parsed,
    answer: &Parsed,
    options: &VerifyOptions,
    budget: &mut Budget,
) -> Result<bool, MathError> {
    enum Item<'a> {
        Expr(&'a Expr),
        Text(&'a str),
    }
    fn items(p: &Parsed) -> Vec<Item<'_>> {
        let mut out = Vec::new();
        if let Some(e) = &p.expr {
            out.push(Item::Expr(e));
        }
        if let Some(c) = &p.choice {
            out.push(Item::Text(c));
        }
        if let Some(t) = &p.text {
            out.push(Item::Text(t));
        }
        out
    }
    // A caller's flag or deadline already spent stops the comparison before it starts.
    budget.check()?;
    let mut ctx = Ctx { options, budget };
    let mut failure = None;
    for g in items(gold) {
        for a in items(answer) {
            let verdict = match (&g, &a) {
                (Item::Expr(x), Item::Expr(y)) => compare::expr_eq(x, y, &mut ctx),
                (Item::Text(x), Item::Text(y)) => {
                    let (x, y) = (x.trim(), y.trim());
                    Ok(!x.is_empty() && x == y)
                }
                _ => Ok(false),
            };
            match verdict {
                Ok(true) => return Ok(true),
                Ok(false) => {}
                Err(error) => failure = failure.or(Some(error)),
            }
        }
    }
    failure.map_or(Ok(false), Err)
}

/// `verify(parse(gold), parse(answer))` with math-verify's defaults (and exact verdicts):
/// whether the answer's final answer is the gold's.
///
/// # Errors
/// A [`MathError`] where either text is past the [`Limits`], or the comparison past its
/// [`Budget`].
pub fn verify(gold: &str, answer: &str) -> Result<bool, MathError> {
    verify_parsed(&parse(gold)?, &parse(answer)?)
}

/// `verify(parse(gold, …), parse(answer, …), …)` with a reward function's configuration
/// (math-verify's functions as they are: a gold written without `$…$` may be read in part,
/// see [`MathVerifyWith`] for a grader that refuses that).
///
/// ```
/// use grader_core::math::{MathConfig, verify_with};
///
/// let trl = MathConfig::trl_accuracy_reward();
/// assert!(verify_with("\\frac{1}{3}", "My answer is \\boxed{\\frac{1}{3}}", &trl)?);
/// // TRL reads the answer as LaTeX only, so a bare number is not found.
/// assert!(!verify_with("42", "The answer is 42", &trl)?);
/// # Ok::<(), grader_core::math::MathError>(())
/// ```
///
/// # Errors
/// As [`verify`], with the configuration's bounds.
pub fn verify_with(gold: &str, answer: &str, config: &MathConfig) -> Result<bool, MathError> {
    let gold = if config.box_gold {
        parse_with_options(&format!("\\boxed{{{gold}}}"), &config.gold)?
    } else {
        parse_with_options(gold, &config.gold)?
    };
    let answer = parse_with_options(answer, &config.answer)?;
    verify_parsed_with(&gold, &answer, &config.verify)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_simple_answers() {
        for (text, expected) in [
            ("$\\frac{1}{5}$", "1/5"),
            ("\\boxed{\\frac{4}{9}}", "4/9"),
            ("$x = \\frac{1}{15}$", "x = 1/15"),
            ("\\boxed{(8, 13)}", "(8, 13)"),
            ("so $1,000$ and $2$", "{1000, 2}"),
        ] {
            let parsed = parse(text).expect("small");
            let shown = parsed.expr.as_ref().map(expr::show);
            let value = parsed
                .expr
                .as_ref()
                .and_then(Expr::exact)
                .map(|v| v.to_string());
            assert!(
                shown.as_deref() == Some(expected) || value.as_deref() == Some(expected),
                "{text}: {shown:?}"
            );
        }
    }

    /// Texts that make a backtracking scanner quadratic: each is searched to its end (the
    /// tables of `scan` keep every scanner linear) and gets a verdict or a typed error.
    #[test]
    fn quadratic_traps_get_an_answer() {
        let n = 200_000;
        for (text, found) in [
            ("\\[".repeat(n / 2), false),
            ("$".repeat(n), false),
            ("\\(".repeat(n / 2), false),
            (" [".repeat(n / 2), false),
            ("1 ".repeat(n / 2) + "x", true),
            ("answer ".repeat(n / 7), false),
            ("final answer ".repeat(n / 13), false),
            ("\\boxed{".repeat(n / 7), false),
            ("= ".repeat(n / 2), false),
            ("a$b".repeat(n / 3), true),
        ] {
            let parsed = parse(&text).expect("within the limits");
            assert_eq!(parsed.expr.is_some(), found, "{}", &text[..12]);
        }
        assert!(matches!(
            parse(&"1+".repeat(n / 2)),
            Err(MathError::TooLong {
                limit: 4096,
                what: "extracted answer",
                ..
            })
        ));
    }
}
