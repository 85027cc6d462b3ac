//! The judge's value from its verdicts: the reference's `_rubric_value`.

use crate::grade::neumaier_sum;

/// Python's `max(a, b)` for floats: `b` only when it compares greater (so a NaN never wins).
fn py_max(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// Python's `min(a, b)` for floats: `b` only when it compares smaller.
fn py_min(a: f64, b: f64) -> f64 {
    if b < a { b } else { a }
}

/// Combines `(value, weight)` verdicts as the reference does. With P the sum of the positive
/// weights and N the sum of the negative weights' magnitudes: P > 0 gives
/// `clamp(Σ value·weight / P, 0, 1)`; otherwise N > 0 gives `clamp(1 + Σ value·weight / N, 0, 1)`;
/// otherwise 0.
///
/// Sums are compensated, as CPython 3.12's `sum` of floats is.
///
/// ```
/// use grader_core::judge::value::rubric_value;
///
/// // Two positive criteria, one met; a penalty that fired takes off its weight's share.
/// assert_eq!(rubric_value([(1.0, 1.0), (0.0, 1.0)]), 0.5);
/// assert_eq!(rubric_value([(1.0, 1.0), (1.0, 1.0), (1.0, -1.0)]), 0.5);
/// // Only penalties: 1 minus the share that fired.
/// assert_eq!(rubric_value([(1.0, -1.0), (0.0, -3.0)]), 0.75);
/// ```
#[must_use]
pub fn rubric_value(verdicts: impl IntoIterator<Item = (f64, f64)> + Clone) -> f64 {
    let positive = neumaier_sum(verdicts.clone().into_iter().map(|(_, w)| py_max(0.0, w)));
    let negative = neumaier_sum(
        verdicts
            .clone()
            .into_iter()
            .filter(|&(_, w)| w < 0.0)
            .map(|(_, w)| w.abs()),
    );
    let weighted = neumaier_sum(verdicts.into_iter().map(|(v, w)| v * w));
    if positive > 0.0 {
        py_max(0.0, py_min(1.0, weighted / positive))
    } else if negative > 0.0 {
        py_max(0.0, py_min(1.0, 1.0 + weighted / negative))
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_formula() {
        assert_eq!(rubric_value([(1.0, 2.0), (0.0, 1.0)]), 2.0 / 3.0);
        // Penalties can take a positive rubric to zero but not below.
        assert_eq!(rubric_value([(0.0, 1.0), (1.0, -5.0)]), 0.0);
        assert_eq!(rubric_value([(1.0, -1.0)]), 0.0);
        assert_eq!(rubric_value([(0.0, -1.0)]), 1.0);
        // Zero weights only: nothing to score by.
        assert_eq!(rubric_value([(1.0, 0.0)]), 0.0);
        assert_eq!(rubric_value(Vec::<(f64, f64)>::new()), 0.0);
    }
}
