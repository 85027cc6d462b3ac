//! Combining subscores into a reward: [`Grade::from_subscores`] and the name de-duplication
//! shared with [`any`](crate::any) and [`all`](crate::all).

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::error::CombineError;
use crate::score::{EvaluationResult, SubScore};

/// How the weights of a result combine into its reward.
///
/// `Grade` is the reference's combiner (`Grade.from_subscores`, `hud.graders.combine`); for
/// graders that still have to run, see [`Gather`](crate::Gather).
#[derive(Debug, Clone, Copy)]
pub struct Grade;

impl Grade {
    /// Combines subscores into an [`EvaluationResult`].
    ///
    /// - Each positive weight becomes its share of the sum of positive weights; negative weights
    ///   (penalties) and zero weights are kept as they are.
    /// - `reward` is the sum of value × normalized weight, not clamped (penalties can push it
    ///   below 0; [`EvaluationResult::clamped`] clamps it), summed with compensated summation
    ///   so the order of the subscores changes it by rounding at most.
    /// - Names are made unique in input order: a name that occurs once keeps it, others become
    ///   `name-1`, `name-2`, … skipping any name already present (`same, same` →
    ///   `same-1, same-2`).
    /// - Each subscore keeps its info; `result.info` is left empty, as the current reference
    ///   leaves it (its earlier `hud.native` era also copied every subscore's info there, which
    ///   doubled the size of every result).
    ///
    /// When the positive weights do not already sum to 1 (±0.01) this logs a `tracing` warning,
    /// as the current reference warns, and normalizes anyway.
    ///
    /// ```
    /// use grader_core::{Grade, SubScore};
    ///
    /// let result = Grade::from_subscores(vec![
    ///     SubScore::new("tests", 1.0)?.with_weight(0.8)?,
    ///     SubScore::new("style", 0.5)?.with_weight(0.2)?,
    ///     SubScore::new("rm -rf", 1.0)?.with_weight(-0.5)?,
    /// ])?;
    /// assert!((result.reward() - 0.4).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`CombineError::Empty`] for no subscores, [`CombineError::NoPositiveWeight`] when no
    /// weight is positive, [`CombineError::NonFiniteReward`] when penalties overflow.
    pub fn from_subscores(
        subscores: impl IntoIterator<Item = SubScore>,
    ) -> Result<EvaluationResult, CombineError> {
        let mut subscores: Vec<SubScore> = subscores.into_iter().collect();
        if subscores.is_empty() {
            return Err(CombineError::Empty {
                what: "from_subscores".to_owned(),
            });
        }
        let positive_sum = neumaier_sum(
            subscores
                .iter()
                .map(SubScore::weight)
                .filter(|weight| *weight > 0.0),
        );
        if positive_sum <= 0.0 {
            return Err(CombineError::NoPositiveWeight {
                weights: subscores.iter().map(SubScore::weight).collect(),
            });
        }
        if (positive_sum - 1.0).abs() > 0.01 {
            tracing::warn!(
                positive_weight_sum = positive_sum,
                "grader weights sum to {positive_sum:.4}, not 1.0; normalizing, but the \
                 effective weights differ from what you set. Make the positive weights sum to \
                 1.0 to silence this."
            );
        }

        // Positive weights so large that their sum overflows are scaled down by the largest
        // first; otherwise each is divided by the sum exactly as the reference does.
        let (scale, positive_sum) = if positive_sum.is_finite() {
            (1.0, positive_sum)
        } else {
            let largest = subscores
                .iter()
                .map(SubScore::weight)
                .fold(0.0_f64, f64::max);
            let scaled = neumaier_sum(
                subscores
                    .iter()
                    .map(SubScore::weight)
                    .filter(|weight| *weight > 0.0)
                    .map(|weight| weight / largest),
            );
            (largest, scaled)
        };

        dedupe_names(&mut subscores);
        for sub in &mut subscores {
            let weight = sub.weight();
            if weight > 0.0 {
                sub.set_weight_unchecked(weight / scale / positive_sum);
            }
        }
        let reward = neumaier_sum(subscores.iter().map(|s| s.value() * s.weight()));
        if !reward.is_finite() {
            return Err(CombineError::NonFiniteReward {
                weights: subscores.iter().map(SubScore::weight).collect(),
            });
        }
        Ok(EvaluationResult {
            reward,
            done: true,
            subscores: Some(subscores),
            ..EvaluationResult::default()
        })
    }
}

/// Renames subscores in place so that every name is unique, exactly as the reference does.
///
/// A name that occurs once stays. Any other becomes `name-N` with the smallest `N` above the
/// last one used for that name that is not present anywhere in the input. Each name's counter
/// only moves forward, so this is linear in the number of subscores plus the candidates
/// skipped (each skipped candidate is a distinct name of the input).
///
/// The reference also skips candidates it has already handed out, but that check never fires:
/// `name-N` splits at its last `-` into exactly one (name, N) pair, so two different pairs
/// never give the same candidate, and a name never reuses an `N`. Nor can a name that occurs
/// once have been handed out before it is reached, since every candidate handed out is absent
/// from the input. Leaving the check out saves a set of every final name.
pub(crate) fn dedupe_names(subscores: &mut [SubScore]) {
    // The common case, a handful of names all distinct, without hashing: pairwise comparison
    // is cheaper than a table for a few names.
    if subscores.len() <= 16
        && subscores.iter().enumerate().all(|(i, sub)| {
            subscores[..i]
                .iter()
                .all(|other| other.name() != sub.name())
        })
    {
        return;
    }
    // For each distinct name: how often it occurs, and the last suffix it was given.
    let mut names: HashMap<&str, (usize, u64)> = HashMap::with_capacity(subscores.len());
    for sub in subscores.iter() {
        names.entry(sub.name()).or_insert((0, 0)).0 += 1;
    }
    if names.len() == subscores.len() {
        return; // all unique: nothing to rename
    }
    let mut renames: Vec<(usize, String)> = Vec::new();
    let mut candidate = String::new();
    for (index, sub) in subscores.iter().enumerate() {
        let name = sub.name();
        let Some(&(count, mut suffix)) = names.get(name) else {
            continue; // unreachable: every name was counted
        };
        if count == 1 {
            continue;
        }
        loop {
            suffix += 1;
            candidate.clear();
            // Writing to a String cannot fail.
            let _ = write!(candidate, "{name}-{suffix}");
            if !names.contains_key(candidate.as_str()) {
                break;
            }
        }
        if let Some(entry) = names.get_mut(name) {
            entry.1 = suffix;
        }
        renames.push((index, candidate.clone()));
    }
    drop(names);
    for (index, name) in renames {
        subscores[index].set_name(name);
    }
}

/// Compensated (Neumaier) summation starting at +0.0, so the result does not depend on the
/// order of the terms beyond rounding (as CPython 3.12's `sum` of floats).
pub fn neumaier_sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut sum = Neumaier::default();
    for value in values {
        sum.add(value);
    }
    sum.total()
}

/// A compensated (Neumaier) sum kept up to date one term at a time: [`neumaier_sum`] of the
/// terms added so far, bit for bit.
#[derive(Debug, Default, Clone, Copy)]
pub struct Neumaier {
    sum: f64,
    compensation: f64,
}

impl Neumaier {
    /// Adds a term.
    pub fn add(&mut self, value: f64) {
        let total = self.sum + value;
        if self.sum.abs() >= value.abs() {
            self.compensation += (self.sum - total) + value;
        } else {
            self.compensation += (value - total) + self.sum;
        }
        self.sum = total;
    }

    /// The sum of the terms added so far.
    pub fn total(&self) -> f64 {
        if !self.sum.is_finite() {
            // Overflow: the compensation holds an infinity of the other sign (or NaN); the
            // plain sum is the meaningful answer, as for Python's `sum`.
            return self.sum;
        }
        self.sum + self.compensation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(input: &[&str]) -> Vec<String> {
        let mut subs: Vec<SubScore> = input
            .iter()
            .map(|name| SubScore::new(*name, 0.5).expect("valid"))
            .collect();
        dedupe_names(&mut subs);
        subs.iter().map(|s| s.name().to_owned()).collect()
    }

    #[test]
    fn dedupe_matches_the_reference_examples() {
        assert_eq!(names(&["x-1", "x", "x"]), ["x-1", "x-2", "x-3"]);
        assert_eq!(names(&["same", "same"]), ["same-1", "same-2"]);
        assert_eq!(names(&["a", "b"]), ["a", "b"]);
        assert_eq!(
            names(&["a", "a-1", "a", "a-2"]),
            ["a-3", "a-1", "a-4", "a-2"]
        );
    }

    #[test]
    fn dedupe_is_linear_on_many_equal_names() {
        let input: Vec<&str> = std::iter::repeat_n("n", 20_000).collect();
        let out = names(&input);
        assert_eq!(out[0], "n-1");
        assert_eq!(out[19_999], "n-20000");
    }

    #[test]
    fn neumaier_sum_is_exact_where_naive_summation_is_not() {
        assert_eq!(neumaier_sum([1e100, 1.0, -1e100]), 1.0);
        assert_eq!(neumaier_sum([0.1; 10]), 1.0);
        assert!(neumaier_sum([-0.0, -0.0]).is_sign_positive());
        assert_eq!(neumaier_sum([]), 0.0);
        assert_eq!(neumaier_sum([f64::MAX, f64::MAX]), f64::INFINITY);
        assert_eq!(neumaier_sum([-f64::MAX, -f64::MAX, 1.0]), f64::NEG_INFINITY);
    }
}
