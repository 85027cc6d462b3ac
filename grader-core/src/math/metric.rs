//! math-verify's `math_metric` (what verl's math reward computes) and the reading of a gold
//! answer that refuses to cut it down (SPEC D38).

use serde::{Deserialize, Serialize};

use super::config::{
    Aggregation, ExprExtractionConfig, ExtractionTarget, LatexExtractionConfig, MathConfig,
    NormalizationConfig, ParseOptions, Semantics, VerifyOptions,
};
use super::error::{MathError, excerpt};
use super::scan::is_py_space;
use super::{Expr, Parsed, Source, latex, normalize, parse_with_options, verify_parsed_with};

/// math-verify's `math_metric(gold_extraction_target, pred_extraction_target,
/// aggregation_function, precision)`: each prediction scores 1 where it matches any gold,
/// and the scores are aggregated.
///
/// ```
/// use grader_core::math::{ExprExtractionConfig, LatexExtractionConfig, MathMetric};
///
/// let metric = MathMetric {
///     gold_extraction_target: vec![LatexExtractionConfig::default().into()],
///     pred_extraction_target: vec![
///         ExprExtractionConfig::default().into(),
///         LatexExtractionConfig::default().into(),
///     ],
///     ..MathMetric::default()
/// };
/// assert_eq!(metric.score(&["\\boxed{\\frac{1}{2}}"], &["so 0.5", "maybe 2"])?, 1.0);
/// # Ok::<(), grader_core::math::MathError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MathMetric {
    /// How golds are extracted (default: plain expressions).
    pub gold_extraction_target: Vec<ExtractionTarget>,
    /// How predictions are extracted (default: plain expressions).
    pub pred_extraction_target: Vec<ExtractionTarget>,
    /// How the predictions' scores are combined (default [`Aggregation::Max`]).
    pub aggregation_function: Aggregation,
    /// `verify`'s `float_rounding` (default 6).
    pub precision: u32,
    /// Exact verdicts or math-verify's own (not in the anchor; default
    /// [`Semantics::Exact`]).
    pub semantics: Semantics,
}

impl Default for MathMetric {
    fn default() -> Self {
        Self {
            gold_extraction_target: vec![ExprExtractionConfig::default().into()],
            pred_extraction_target: vec![ExprExtractionConfig::default().into()],
            aggregation_function: Aggregation::Max,
            precision: 6,
            semantics: Semantics::Exact,
        }
    }
}

impl MathMetric {
    /// The aggregated score of `predictions` against `golds`.
    ///
    /// # Errors
    /// [`MathError::GoldUnreadable`] where a gold yields nothing (math-verify raises
    /// `ValueError`), and the bounds of [`parse`](super::parse) and
    /// [`verify`](super::verify).
    pub fn score(&self, golds: &[&str], predictions: &[&str]) -> Result<f64, MathError> {
        let parse = |text: &str, targets: &[ExtractionTarget]| {
            let options = ParseOptions {
                semantics: self.semantics,
                ..ParseOptions::targets(targets.iter().cloned())
            };
            parse_with_options(text, &options)
        };
        let predictions = predictions
            .iter()
            .map(|p| parse(p, &self.pred_extraction_target))
            .collect::<Result<Vec<_>, _>>()?;
        let mut extracted = Vec::with_capacity(golds.len());
        for gold in golds {
            let parsed = parse(gold, &self.gold_extraction_target)?;
            if parsed.is_empty() {
                return Err(MathError::GoldUnreadable {
                    grader: "math_metric",
                    gold: excerpt(gold),
                });
            }
            extracted.push(parsed);
        }
        let options = VerifyOptions {
            float_rounding: self.precision,
            semantics: self.semantics,
            ..VerifyOptions::default()
        };
        let mut scores = Vec::with_capacity(predictions.len());
        for prediction in &predictions {
            let mut hit = false;
            for gold in &extracted {
                if verify_parsed_with(gold, prediction, &options)? {
                    hit = true;
                    break;
                }
            }
            scores.push(if hit { 1.0 } else { 0.0 });
        }
        #[allow(clippy::cast_precision_loss)] // a handful of predictions
        Ok(match self.aggregation_function {
            Aggregation::Max => scores.iter().copied().fold(0.0, f64::max),
            Aggregation::Min => scores.iter().copied().reduce(f64::min).unwrap_or(0.0),
            Aggregation::Mean if scores.is_empty() => 0.0,
            Aggregation::Mean => scores.iter().sum::<f64>() / scores.len() as f64,
        })
    }
}

/// Whether `text` holds a delimiter math-verify's LaTeX extraction looks for.
fn delimited(text: &str) -> bool {
    text.contains('$')
        || text.contains("\\[")
        || text.contains("\\(")
        || text.contains("\\boxed")
        || text.contains("\\fbox")
}

/// Inspect's test for prose: no LaTeX command or operator, and two words or more.
fn prose(text: &str) -> bool {
    if text.contains('\\')
        || text.contains([
            '=', '+', '-', '*', '/', '^', '<', '>', '[', ']', '{', '}', '(', ')',
        ])
    {
        return false;
    }
    text.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 2)
        .count()
        >= 2
}

/// The LaTeX normalization a gold read whole gets: its configuration's first LaTeX target's,
/// or math-verify's default.
fn gold_normalization(options: &ParseOptions) -> NormalizationConfig {
    options
        .extraction_config
        .iter()
        .find_map(|t| match t {
            ExtractionTarget::Latex(config) => Some(config.normalization_config),
            _ => None,
        })
        .unwrap_or_else(|| LatexExtractionConfig::default().normalization_config)
}

/// The gold `text` read whole as LaTeX, where it parses.
fn whole(text: &str, options: &ParseOptions) -> Result<Option<Expr>, MathError> {
    let normalization = gold_normalization(options);
    let normalized =
        normalize::normalize(text, &normalization, options.semantics == Semantics::Exact);
    if normalized.len() > options.limits.answer {
        return Err(MathError::TooLong {
            grader: "math",
            what: "extracted answer",
            len: normalized.len(),
            limit: options.limits.answer,
        });
    }
    latex::parse_latex(&normalized, &options.limits)
}

/// A gold answer read the way a data set writes it (SPEC D38), for the graders and reward
/// functions built on math-verify: never cut down to part of itself.
///
/// - A gold without `$…$`, `\[…\]`, `\(…\)` or `\boxed{}` that is not prose (`2\sqrt{3}`,
///   `(-\infty, 2]`, `3x - y + 13 = 0`) is read whole as LaTeX, normalized as the gold's
///   LaTeX target says. If it does not parse whole, the configured extraction must find an
///   answer that covers all of it but a final period.
/// - A gold with delimiters (a worked solution, `$\frac{1}{2}$`) is read by the configured
///   extraction, and the answer must come from a LaTeX environment or a box, not from a
///   number inside one (`$1 - \frac{1}{\mathrm{e}}$` read as `1`).
/// - With [`MathConfig::box_gold`] (verl) the gold is written into `\boxed{}` first.
///
/// ```
/// use grader_core::math::{Expr, MathConfig, MathError, expr::show, parse, read_gold};
///
/// let config = MathConfig::math_verify();
/// // math-verify's own parse keeps only the 2 of 2√3 ...
/// assert_eq!(parse("2\\sqrt{3}")?.expr, Some(Expr::int(2)));
/// // ... the gold is read whole.
/// let gold = read_gold("2\\sqrt{3}", &config)?;
/// assert_eq!(gold.expr.as_ref().map(show).as_deref(), Some("2*3**(1/2)"));
/// // Prose is not read as a product of letters: only a fragment of it would be.
/// assert!(matches!(
///     read_gold("the answer is 72", &config),
///     Err(MathError::GoldFragment { .. })
/// ));
/// # Ok::<(), MathError>(())
/// ```
///
/// # Errors
/// [`MathError::GoldUnreadable`] where nothing is read, [`MathError::GoldFragment`] where
/// only a part is, and the bounds of [`parse`](super::parse).
pub fn read_gold(gold: &str, config: &MathConfig) -> Result<Parsed, MathError> {
    let options = &config.gold;
    if config.box_gold {
        let parsed = parse_with_options(&format!("\\boxed{{{gold}}}"), options)?;
        if parsed.expr.is_none() && parsed.choice.is_none() {
            return Err(MathError::GoldUnreadable {
                grader: "math",
                gold: excerpt(gold),
            });
        }
        return Ok(parsed);
    }
    let bare = !delimited(gold);
    if bare
        && !prose(gold)
        && !gold.trim().is_empty()
        && let Some(expr) = whole(gold, options)?
    {
        return Ok(Parsed {
            expr: Some(expr),
            choice: None,
            text: Some(gold.trim().to_owned()),
            span: Some(0..gold.len()),
            source: Some(Source::Latex),
        });
    }
    let parsed = parse_with_options(gold, options)?;
    let (Some(span), Some(source)) = (parsed.span.clone(), parsed.source) else {
        return Err(MathError::GoldUnreadable {
            grader: "math",
            gold: excerpt(gold),
        });
    };
    let extracted = || {
        parsed
            .text
            .clone()
            .unwrap_or_else(|| gold[span.clone()].trim().to_owned())
    };
    let fragment = if bare {
        let outside = gold[..span.start].chars().chain(
            gold[span.end..]
                .trim_end_matches(is_py_space)
                .trim_end_matches('.')
                .chars(),
        );
        outside.into_iter().any(|c| !is_py_space(c))
    } else {
        matches!(source, Source::Number | Source::Expression)
    };
    if fragment {
        return Err(MathError::GoldFragment {
            grader: "math",
            gold: excerpt(gold),
            extracted: excerpt(&extracted()),
        });
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golds_are_never_cut_down() {
        let config = MathConfig::math_verify();
        for gold in [
            "2\\sqrt{3}",
            "9\\pi",
            "(1, 2)",
            "(-\\infty, 2]",
            "3*x-1*y+13=0",
        ] {
            let parsed = read_gold(gold, &config).expect("read whole");
            assert_eq!(parsed.span, Some(0..gold.len()), "{gold}");
        }
        assert!(matches!(
            read_gold("$1 - \\frac{1}{x}$ or so", &config),
            Ok(Parsed {
                source: Some(Source::Latex),
                ..
            })
        ));
        assert!(matches!(
            read_gold("no answer here", &config),
            Err(MathError::GoldUnreadable { .. } | MathError::GoldFragment { .. })
        ));
        assert!(matches!(
            read_gold("", &config),
            Err(MathError::GoldUnreadable { .. })
        ));
        assert!(read_gold("42.", &config).is_ok());
    }
}
