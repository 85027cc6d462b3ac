//! Math answers as HuggingFace's `math-verify` 0.9.0 judges them (with latex2sympy2_extended
//! 1.11.0 and sympy 1.14.0): [`parse`] finds the final answer in a free text (`\boxed{}`,
//! `$…$`, `\[…\]`, "the answer is", plain numbers) and reads it (fractions, roots, π,
//! percents, units, thousands separators, intervals, sets, tuples, matrices, equations);
//! [`verify`] compares a gold answer with a model's, exactly for rationals, rounded to 6
//! decimals where one side is a decimal, and numerically at several points for expressions
//! with variables. This is what TRL and open-r1 call as `verify(parse(gold), parse(answer))`.
//!
//! ```
//! use grader_core::math::verify;
//!
//! assert!(verify("$\\frac{1}{2}$", "The answer is $\\boxed{0.5}$.")?);
//! assert!(verify("$x = 3$", "so $3$")?);
//! assert!(verify("$[0, 1)$", "\\boxed{[0,1)}")?);
//! assert!(verify("1,000", "It costs $1000.")?);
//! assert!(!verify("$\\sqrt{2}$", "\\boxed{1.41}")?);
//! # Ok::<(), grader_core::math::MathError>(())
//! ```
//!
//! Everything is parsed and compared in Rust, with exact big rationals (num-bigint and
//! num-rational, behind the `math` feature) and no computer algebra system: sympy's
//! `simplify` is replaced by evaluation at several points, and its `solve` (for equations and
//! inequalities) by checking that one side's difference is a constant multiple of the other's.
//!
//! Every input is bounded ([`Limits`], after Inspect AI 0.3.285's `math()` scorer): the text's
//! length, each answer's length, its nesting depth, its nodes and its numbers' digits. An input
//! past a bound is a typed [`MathError`], never a hang, a stack overflow or a silent 0.

mod compare;
mod error;
pub mod expr;
mod extract;
#[cfg(feature = "macros")]
pub mod graders;
mod latex;
mod limits;
mod normalize;
mod scan;

pub use error::MathError;
pub use expr::Expr;
#[cfg(feature = "macros")]
pub use graders::MathVerify;
pub use limits::Limits;

use extract::Found;
use normalize::Boxed;
use num_bigint::BigInt;
use num_rational::BigRational;

/// What [`parse`] found in a text: math-verify's list of one parsed expression and the text it
/// was read from (its "first match" fallback), either of which may be missing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    /// The parsed answer.
    pub expr: Option<Expr>,
    /// The extracted text of the first candidate tried (normalised LaTeX, or a number's
    /// digits), compared as a string when the expressions do not match.
    pub text: Option<String>,
}

impl Parsed {
    /// Whether nothing was found.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.expr.is_none() && self.text.is_none()
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
/// A [`MathError`] where the text or the answer tried is past [`Limits::default`].
pub fn parse(text: &str) -> Result<Parsed, MathError> {
    parse_with(text, &Limits::default())
}

/// [`parse`] with other bounds.
///
/// # Errors
/// A [`MathError`] where the text or the answer tried is past `limits`.
pub fn parse_with(text: &str, limits: &Limits) -> Result<Parsed, MathError> {
    if text.len() > limits.text {
        return Err(MathError::TooLong {
            grader: "math",
            len: text.len(),
            limit: limits.text,
        });
    }
    let mut fallback: Option<String> = None;
    let scan = scan::Scan::new(text);
    for priority in extract::PRIORITIES {
        for candidate in extract::group(&scan, priority) {
            let (expr, shown) = read(&candidate.found, limits)?;
            if fallback.is_none() && !shown.is_empty() {
                fallback = Some(shown);
            }
            if let Some(expr) = expr {
                return Ok(Parsed {
                    expr: Some(expr),
                    text: fallback,
                });
            }
        }
    }
    Ok(Parsed {
        expr: None,
        text: fallback,
    })
}

/// Reads one candidate: its expression (if it parses) and its text.
fn read(found: &Found, limits: &Limits) -> Result<(Option<Expr>, String), MathError> {
    let check = |text: &str| {
        if text.len() > limits.answer {
            Err(MathError::TooLong {
                grader: "math",
                len: text.len(),
                limit: limits.answer,
            })
        } else {
            Ok(())
        }
    };
    match found {
        Found::Number(digits, percent) => {
            let expr = number(digits, limits)?;
            check(digits)?;
            let expr = if *percent {
                Expr::Percent(Box::new(expr))
            } else {
                expr
            };
            Ok((Some(expr), digits.clone()))
        }
        Found::Plain(text) => {
            check(text)?;
            let prepared = text.replace('\n', " ").replace('^', "**");
            if prepared.contains(['×', '÷']) {
                return Ok((None, text.clone()));
            }
            Ok((latex::parse_plain(prepared.trim(), limits)?, text.clone()))
        }
        Found::Latex(parts) => {
            let mut exprs = Vec::new();
            let mut shown = Vec::new();
            for (content, percent, boxed) in parts {
                check(content)?;
                let boxed = if *boxed == Boxed::Last {
                    Boxed::Last
                } else {
                    Boxed::All
                };
                let normalized = normalize::normalize(content, boxed);
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
                return Ok((Some(Expr::Set(items)), shown.join(" and ")));
            }
            let first = exprs.into_iter().next().flatten();
            Ok((first, shown.into_iter().next().unwrap_or_default()))
        }
    }
}

/// Commands latex2sympy2_extended reads that this parser does not.
const UNREAD: [&str; 5] = ["\\sum", "\\int", "\\prod", "\\lim", "\\oint"];

/// math-verify's `get_last_eq`: the text after the last `=` of a chain of three or more
/// parts without commas or semicolons.
fn last_equation(latex: &str) -> Option<&str> {
    if latex.contains([',', ';']) {
        return None;
    }
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c) in latex.char_indices() {
        if c == '=' && !matches!(latex[..i].chars().next_back(), Some('\\' | '<' | '!' | '>')) {
            parts.push(&latex[start..i]);
            start = i + 1;
        }
    }
    parts.push(&latex[start..]);
    (parts.len() > 2).then(|| parts[parts.len() - 1])
}

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

/// math-verify's `verify(gold, answer)` on two parsed answers: whether any of the gold's
/// expression and text matches any of the answer's.
#[must_use]
pub fn verify_parsed(gold: &Parsed, answer: &Parsed) -> bool {
    if let (Some(g), Some(a)) = (&gold.expr, &answer.expr)
        && compare::expr_eq(g, a)
    {
        return true;
    }
    if let (Some(g), Some(a)) = (&gold.text, &answer.text) {
        let (g, a) = (g.trim(), a.trim());
        return !g.is_empty() && g == a;
    }
    false
}

/// `verify(parse(gold), parse(answer))` with math-verify's defaults: whether the answer's
/// final answer is the gold's.
///
/// # Errors
/// A [`MathError`] where either text is past the [`Limits`].
pub fn verify(gold: &str, answer: &str) -> Result<bool, MathError> {
    Ok(verify_parsed(&parse(gold)?, &parse(answer)?))
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
            Err(MathError::TooLong { limit: 4096, .. })
        ));
    }
}
