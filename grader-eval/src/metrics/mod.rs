//! Metrics over many rewards and reducers over one sample's epochs, as pure functions over
//! slices.
//!
//! Each function follows Inspect AI's definition where it has one (`inspect_ai/scorer/_metrics/`
//! for the metrics, `inspect_ai/scorer/_reducer/reducer.py` for the reducers), including its
//! answers for tiny inputs (the mean of nothing is 0.0, the standard error of one value is
//! 0.0).
//!
//! Where it differs: sums are compensated (Neumaier, SPEC D6 and D16), where Inspect AI's
//! numpy sums pairwise (`np.mean`, `np.var`, `np.std`) and its reducers use `statistics.mean`.
//! A compensated sum is as exact as a double allows whatever the order of the values, so
//! results can differ from Inspect AI's in the last bits (they agree within 1e-12, and the
//! tests hold them to that); they never differ by more.
//!
//! ```
//! use grader_eval::metrics;
//!
//! let rewards = [1.0, 0.0, 1.0, 1.0];
//! assert_eq!(metrics::mean(&rewards), 0.75);
//! assert!((metrics::stderr(&rewards) - 0.25).abs() < 1e-15);
//! assert_eq!(metrics::pass_at_k(5, 1, 1), Some(0.2));
//! # Ok::<(), grader_eval::metrics::MetricError>(())
//! ```

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use grader_core::grade::{Neumaier, neumaier_sum};

mod numeric;

use numeric::{DoubleDouble, normal_quantile, student_t_quantile};

/// A metric was asked for something it cannot compute.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MetricError {
    /// A confidence level outside the open interval `(0, 1)`.
    #[error("confidence level {level:?} is not in the open interval (0, 1)")]
    InvalidLevel {
        /// The rejected level.
        level: f64,
    },
    /// `ci_wilson` was given a value outside `[0, 1]`, which has no binomial reading.
    #[error("ci_wilson: value {value:?} at index {index} is not in [0, 1]")]
    NotAProportion {
        /// Where the value is in the slice.
        index: usize,
        /// The rejected value.
        value: f64,
    },
}

/// A two-sided confidence interval for a mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The lower bound.
    pub lower: f64,
    /// The upper bound.
    pub upper: f64,
}

/// The arithmetic mean, `Σx / n`, summed with compensation; 0.0 for no values.
///
/// Inspect AI: `mean()` in `_metrics/mean.py` (`np.mean`, 0.0 when empty), and the `mean`
/// reducer in `_reducer/reducer.py` (`statistics.mean`).
#[must_use]
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    neumaier_sum(values.iter().copied()) / values.len() as f64
}

/// The sample variance, `Σ(x − x̄)² / (n − 1)`; 0.0 for fewer than two values.
///
/// Inspect AI: `var()` in `_metrics/std.py` (`np.var(values, ddof=1)`).
#[must_use]
pub fn var(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let center = mean(values);
    let squares = neumaier_sum(values.iter().map(|x| (x - center) * (x - center)));
    squares / (values.len() - 1) as f64
}

/// The sample standard deviation, `√var`; 0.0 for fewer than two values.
///
/// Inspect AI: `std()` in `_metrics/std.py` (`np.std(values, ddof=1)`).
#[must_use]
pub fn std(values: &[f64]) -> f64 {
    var(values).sqrt()
}

/// The standard error of the mean by the central limit theorem, `std / √n`; 0.0 for fewer than
/// two values.
///
/// Inspect AI: `stderr()` in `_metrics/std.py` (unclustered).
#[must_use]
pub fn stderr(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    std(values) / (values.len() as f64).sqrt()
}

/// The clustered standard error of the mean, for samples that come in groups (several
/// questions about one document, several runs of one task): with `C` clusters, `n` values and
/// `x̄` their mean, `√(Σ_c (Σ_{i∈c} (x_i − x̄))² · C / (C − 1)) / n`; 0.0 for fewer than two
/// clusters.
///
/// Each item is a value with its cluster's key; keys compare with `Eq` (Inspect AI compares
/// metadata values with Python's `==`, where `1`, `1.0` and `True` are one cluster).
///
/// Inspect AI: `stderr(cluster=...)` in `_metrics/std.py` (`_clustered_stderr`, with the finite
/// cluster correction `C / (C − 1)`). A sample without the cluster key is an error there;
/// here every value comes with its key.
///
/// ```
/// use grader_eval::metrics;
///
/// // Two documents with two questions each.
/// let scores = [("doc-a", 1.0), ("doc-a", 1.0), ("doc-b", 0.0), ("doc-b", 0.0)];
/// let clustered = metrics::stderr_clustered(scores);
/// assert!((clustered - 0.5).abs() < 1e-15);
/// // Answers about one document agree: the clusters carry less evidence than four samples.
/// assert!(clustered > metrics::stderr(&[1.0, 1.0, 0.0, 0.0]));
/// ```
#[must_use]
pub fn stderr_clustered<K: Eq + std::hash::Hash>(
    scores: impl IntoIterator<Item = (K, f64)>,
) -> f64 {
    let clusters = partition(scores);
    clustered_stderr_of(&clusters)
}

/// Values grouped by key, groups in order of first appearance.
fn partition<K: Eq + std::hash::Hash>(scores: impl IntoIterator<Item = (K, f64)>) -> Vec<Vec<f64>> {
    let mut index: std::collections::HashMap<K, usize, foldhash::fast::RandomState> =
        std::collections::HashMap::default();
    let mut groups: Vec<Vec<f64>> = Vec::new();
    for (key, value) in scores {
        let at = *index.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[at].push(value);
    }
    groups
}

fn clustered_stderr_of(clusters: &[Vec<f64>]) -> f64 {
    let count = clusters.len();
    if count < 2 {
        return 0.0;
    }
    let n: usize = clusters.iter().map(Vec::len).sum();
    let center = neumaier_sum(clusters.iter().flatten().copied()) / n as f64;
    let variance = neumaier_sum(clusters.iter().map(|cluster| {
        let deviation = neumaier_sum(cluster.iter().map(|x| x - center));
        deviation * deviation
    }));
    (variance * count as f64 / (count - 1) as f64).sqrt() / n as f64
}

/// The `level` Student-t confidence interval for the mean of clustered values: `x̄ ± t(1 − (1 −
/// level)/2, C − 1) · stderr_clustered` with `C` clusters (at least 1 degree of freedom); the
/// point `[x, x]` for one value and `[0, 0]` for none.
///
/// Inspect AI: `ci(level, method="t", cluster=...)` in `_metrics/std.py`.
///
/// # Errors
/// [`MetricError::InvalidLevel`] unless `0 < level < 1`.
pub fn ci_t_clustered<K: Eq + std::hash::Hash>(
    scores: impl IntoIterator<Item = (K, f64)>,
    level: f64,
) -> Result<Interval, MetricError> {
    check_level(level)?;
    let clusters = partition(scores);
    let values: Vec<f64> = clusters.iter().flatten().copied().collect();
    if let Some(point) = degenerate(&values) {
        return Ok(point);
    }
    let center = mean(&values);
    let tail = (1.0 - level) / 2.0;
    let df = clusters.len().saturating_sub(1).max(1);
    let t = student_t_quantile(1.0 - tail, df as f64);
    let se = clustered_stderr_of(&clusters);
    Ok(Interval {
        lower: center - t * se,
        upper: center + t * se,
    })
}

/// The bootstrap standard error of the mean: the population standard deviation (`ddof = 0`) of
/// `resamples` means of `n` values drawn with replacement; 0.0 for no values.
///
/// Inspect AI: `bootstrap_stderr()` in `_metrics/std.py`. Its resampling uses numpy's global
/// random state; this one uses ChaCha8 seeded with `seed`, so a result is reproducible for a
/// given seed, and agrees with Inspect AI's statistically, not bit for bit.
#[must_use]
pub fn bootstrap_stderr(values: &[f64], resamples: usize, seed: u64) -> f64 {
    if values.is_empty() || resamples == 0 {
        return 0.0;
    }
    stderr_of_means(&bootstrap_means(values, resamples, seed))
}

/// The population standard deviation of resampled means.
fn stderr_of_means(means: &[f64]) -> f64 {
    let center = mean(means);
    let squares = neumaier_sum(means.iter().map(|m| (m - center) * (m - center)));
    (squares / means.len() as f64).sqrt()
}

/// [`bootstrap_stderr`] and [`ci_bootstrap`] of the same values, resamples and seed, from one
/// set of resampled means: the same two numbers, bit for bit, for half the draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    /// As [`bootstrap_stderr`] gives it.
    pub stderr: f64,
    /// As [`ci_bootstrap`] gives it.
    pub interval: Interval,
}

/// [`bootstrap_stderr`]`(values, resamples, seed)` and [`ci_bootstrap`]`(values, level,
/// resamples, seed)` together, drawing the resamples once (the summary's cost was mostly these
/// draws, made twice with the same seed).
///
/// ```
/// use grader_eval::metrics::{bootstrap, bootstrap_stderr, ci_bootstrap};
/// let values = [0.0, 1.0, 1.0, 0.5, 0.25];
/// let both = bootstrap(&values, 0.95, 1000, 7).expect("a valid level");
/// assert_eq!(both.stderr, bootstrap_stderr(&values, 1000, 7));
/// assert_eq!(both.interval, ci_bootstrap(&values, 0.95, 1000, 7).expect("a valid level"));
/// ```
///
/// # Errors
/// [`MetricError::InvalidLevel`] unless `0 < level < 1`.
pub fn bootstrap(
    values: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Result<Bootstrap, MetricError> {
    check_level(level)?;
    let stderr = |means: &[f64]| {
        if values.is_empty() || resamples == 0 {
            0.0
        } else {
            stderr_of_means(means)
        }
    };
    if let Some(point) = degenerate(values) {
        let means = bootstrap_means(values, resamples, seed);
        return Ok(Bootstrap {
            stderr: stderr(&means),
            interval: point,
        });
    }
    let mut means = bootstrap_means(values, resamples.max(1), seed);
    let stderr = stderr(&means);
    Ok(Bootstrap {
        stderr,
        interval: interval_of_means(&mut means, level),
    })
}

fn bootstrap_means(values: &[f64], resamples: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = values.len();
    // Each resample's mean is summed as it is drawn (`mean` of the draws, bit for bit), so
    // no copy of the values is made.
    (0..resamples)
        .map(|_| {
            let mut draws = RunningMean::default();
            for _ in 0..n {
                draws.push(values[rng.random_range(0..n)]);
            }
            draws.mean()
        })
        .collect()
}

/// The `level` Student-t confidence interval for the mean, `x̄ ± t(1 − (1 − level)/2, n − 1) ·
/// stderr`; the point `[x, x]` for one value and `[0, 0]` for none.
///
/// Inspect AI: `ci(level, method="t")` in `_metrics/std.py` (unclustered). The t quantile is
/// found by bisection on the CDF written with the regularized incomplete beta function, as
/// there.
///
/// # Errors
/// [`MetricError::InvalidLevel`] unless `0 < level < 1`.
pub fn ci_t(values: &[f64], level: f64) -> Result<Interval, MetricError> {
    check_level(level)?;
    if let Some(point) = degenerate(values) {
        return Ok(point);
    }
    let center = mean(values);
    let tail = (1.0 - level) / 2.0;
    let t = student_t_quantile(1.0 - tail, (values.len() - 1) as f64);
    let se = stderr(values);
    Ok(Interval {
        lower: center - t * se,
        upper: center + t * se,
    })
}

/// The `level` percentile-bootstrap confidence interval for the mean: the `(1 − level)/2` and
/// `1 − (1 − level)/2` quantiles (numpy's default linear interpolation) of `resamples` means
/// of `n` values drawn with replacement; the point `[x, x]` for one value and `[0, 0]` for
/// none.
///
/// Inspect AI: `ci(level, method="bootstrap")` in `_metrics/std.py` (unclustered). Seeded
/// ChaCha8 as in [`bootstrap_stderr`], so it agrees with Inspect AI statistically. When a
/// resampled mean is NaN (a NaN among the values), both bounds are NaN, as numpy's quantiles
/// are.
///
/// # Errors
/// [`MetricError::InvalidLevel`] unless `0 < level < 1`.
pub fn ci_bootstrap(
    values: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Result<Interval, MetricError> {
    check_level(level)?;
    if let Some(point) = degenerate(values) {
        return Ok(point);
    }
    let mut means = bootstrap_means(values, resamples.max(1), seed);
    Ok(interval_of_means(&mut means, level))
}

/// The percentile interval of resampled means (sorted in place).
fn interval_of_means(means: &mut [f64], level: f64) -> Interval {
    if means.iter().any(|m| m.is_nan()) {
        // numpy's quantiles of data holding NaN are NaN, both of them: an interval with one
        // bound is neither.
        return Interval {
            lower: f64::NAN,
            upper: f64::NAN,
        };
    }
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Interval {
        lower: quantile_sorted(means, tail),
        upper: quantile_sorted(means, 1.0 - tail),
    }
}

/// The `level` Wilson score interval for a proportion: with `p̂` the mean and `z` the normal
/// quantile at `1 − (1 − level)/2`, centre `(p̂ + z²/2n) / (1 + z²/n)` and half-width
/// `z·√(p̂(1 − p̂)/n + z²/4n²) / (1 + z²/n)`, clamped to `[0, 1]`; `[0, 0]` for no values.
///
/// Inspect AI: `ci_wilson(level)` in `_metrics/std.py` (unclustered). Meant for binary
/// rewards; other values in `[0, 1]` give a conservative interval.
///
/// # Errors
/// [`MetricError::InvalidLevel`] unless `0 < level < 1`; [`MetricError::NotAProportion`] for a
/// value outside `[0, 1]`.
pub fn ci_wilson(values: &[f64], level: f64) -> Result<Interval, MetricError> {
    check_level(level)?;
    if let Some((index, &value)) = values
        .iter()
        .enumerate()
        .find(|(_, v)| !(0.0..=1.0).contains(*v))
    {
        return Err(MetricError::NotAProportion { index, value });
    }
    if values.is_empty() {
        return Ok(Interval {
            lower: 0.0,
            upper: 0.0,
        });
    }
    let z = -normal_quantile((1.0 - level) / 2.0);
    let n = values.len() as f64;
    let p = neumaier_sum(values.iter().copied()) / n;
    let denominator = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denominator;
    Ok(Interval {
        lower: (center - half).max(0.0),
        upper: (center + half).min(1.0),
    })
}

/// The share of values at or above `threshold`; 0.0 for no values.
///
/// Inspect AI has no metric of this name; it is `accuracy()` (`_metrics/accuracy.py`) of the
/// values mapped to 1 when `≥ threshold` and 0 otherwise.
#[must_use]
pub fn pass_rate(values: &[f64], threshold: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let passed = values.iter().filter(|v| **v >= threshold).count();
    passed as f64 / values.len() as f64
}

/// The unbiased pass@k estimator for `n` attempts of which `c` passed: `1 − C(n − c, k) /
/// C(n, k)`, correctly rounded (pass@1 is exactly `c / n`). `None` when `n < k` (undefined)
/// or `c > n`.
///
/// Inspect AI: `pass_at(k)` in `_reducer/reducer.py` (Chen et al. 2021), which computes the
/// same quantity as the product `1 − Π_{i=n−c+1}^{n} (1 − k/i)` in floating point and can be
/// an ulp off. Here the product is carried in double-double arithmetic (about 106 bits) and
/// rounded once.
#[must_use]
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if n < k || c > n {
        return None;
    }
    if k == 0 {
        return Some(0.0);
    }
    if n - c < k {
        return Some(1.0);
    }
    if k == 1 {
        return Some(c as f64 / n as f64);
    }
    // C(n−c, k) / C(n, k) = Π_{i=n−c+1}^{n} (i − k) / i.
    let mut product = DoubleDouble::ONE;
    for i in (n - c + 1)..=n {
        product = product.mul(DoubleDouble::div((i - k) as f64, i as f64));
    }
    Some(DoubleDouble::ONE.sub(product).to_f64())
}

/// The pass^k estimator (all of `k` attempts pass) for `n` attempts of which `c` passed:
/// `C(c, k) / C(n, k)`. `None` when `n < k` or `c > n`.
///
/// Inspect AI: `pass_k(k)` in `_reducer/reducer.py` (`math.comb(c, k) / math.comb(n, k)`).
#[must_use]
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> Option<f64> {
    if n < k || c > n {
        return None;
    }
    if c < k {
        return Some(0.0);
    }
    // C(c, k) / C(n, k) = Π_{j=0}^{k−1} (c − j) / (n − j).
    let mut product = DoubleDouble::ONE;
    for j in 0..k {
        product = product.mul(DoubleDouble::div((c - j) as f64, (n - j) as f64));
    }
    Some(product.to_f64())
}

/// The values that are scored: Inspect AI's reducers leave unscored (NaN) values out.
fn scored(values: &[f64]) -> std::borrow::Cow<'_, [f64]> {
    if values.iter().any(|v| v.is_nan()) {
        values
            .iter()
            .copied()
            .filter(|v| !v.is_nan())
            .collect::<Vec<f64>>()
            .into()
    } else {
        values.into()
    }
}

/// The median: the middle value, or the mean `(a + b) / 2` of the two middle ones; `None` for
/// no values.
///
/// Inspect AI: the `median` reducer (`statistics.median`). NaN values (unscored epochs) are left out, as there.
#[must_use]
pub fn median(values: &[f64]) -> Option<f64> {
    let values = scored(values);
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let half = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 {
        sorted[half]
    } else {
        (sorted[half - 1] + sorted[half]) / 2.0
    })
}

/// The most frequent value, the earliest of those tied; `None` for no values.
///
/// Inspect AI: the `mode` reducer (`Counter(values).most_common(1)`). NaN values (unscored epochs) are left out, as there.
#[must_use]
pub fn mode(values: &[f64]) -> Option<f64> {
    let counts = counts_in_order(&scored(values));
    let mut best: Option<(f64, usize)> = None;
    for (value, count) in counts {
        if best.is_none_or(|(_, most)| count > most) {
            best = Some((value, count));
        }
    }
    best.map(|(value, _)| value)
}

/// The value held by more than half of `values`; `None` when none is (or for no values).
/// NaN values (unscored epochs) are never a winner but count in the total: they withhold a
/// vote without lowering the bar, as in Inspect AI.
///
/// Inspect AI: the `majority` reducer (strict majority, unscored otherwise). A
/// [`Summary`](super::Summary) passes every epoch of a sample here, an errored one as NaN (see
/// [`Reducer::Majority`](super::Reducer::Majority)).
///
/// ```
/// use grader_eval::metrics;
///
/// assert_eq!(metrics::majority(&[1.0, 1.0, 0.0]), Some(1.0));
/// assert_eq!(metrics::majority(&[1.0, 1.0, f64::NAN, f64::NAN]), None);
/// ```
#[must_use]
pub fn majority(values: &[f64]) -> Option<f64> {
    let total = values.len();
    counts_in_order(values)
        .into_iter()
        .find(|(value, count)| !value.is_nan() && count * 2 > total)
        .map(|(value, _)| value)
}

/// The largest value, the earliest of those tied; `None` for no values.
///
/// Inspect AI: the `max` reducer. NaN values (unscored epochs) are left out, as there.
#[must_use]
pub fn max(values: &[f64]) -> Option<f64> {
    scored(values)
        .iter()
        .copied()
        .reduce(|best, v| if v > best { v } else { best })
}

/// 1.0 when at least `k` values are `≥ threshold`, else 0.0; `None` for no values.
///
/// Inspect AI: the `at_least(k, value)` reducer. NaN values (unscored epochs) are left out, as there.
#[must_use]
pub fn at_least(values: &[f64], k: usize, threshold: f64) -> Option<f64> {
    let values = scored(values);
    if values.is_empty() {
        return None;
    }
    let passed = values.iter().filter(|v| **v >= threshold).count();
    Some(if passed >= k { 1.0 } else { 0.0 })
}

/// [`pass_at_k`] of one sample's epochs: `n` is the number of values and `c` those `≥
/// threshold`; `None` when there are fewer than `k` values.
///
/// Inspect AI: the `pass_at(k, value)` reducer. NaN values (unscored epochs) are left out, as there.
#[must_use]
pub fn pass_at(values: &[f64], k: usize, threshold: f64) -> Option<f64> {
    let values = scored(values);
    let passed = values.iter().filter(|v| **v >= threshold).count();
    pass_at_k(values.len() as u64, passed as u64, k as u64)
}

/// Every scored epoch's value, in order, for reporting them side by side; `None` when no epoch
/// is scored. Unscored epochs (NaN) are dropped.
///
/// Inspect AI: the `collect` reducer in `_reducer/reducer.py` (a list-valued score; unscored
/// when nothing is left).
///
/// ```
/// use grader_eval::metrics;
///
/// assert_eq!(metrics::collect(&[1.0, f64::NAN, 0.5]), Some(vec![1.0, 0.5]));
/// assert_eq!(metrics::collect(&[f64::NAN]), None);
/// ```
#[must_use]
pub fn collect(values: &[f64]) -> Option<Vec<f64>> {
    let kept: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    (!kept.is_empty()).then_some(kept)
}

/// A mean kept up to date one value at a time, with a compensated sum.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct RunningMean {
    sum: Neumaier,
    count: u64,
}

impl RunningMean {
    /// Adds a value.
    pub(crate) fn push(&mut self, value: f64) {
        self.sum.add(value);
        self.count += 1;
    }

    /// How many values were added.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// The mean so far; 0.0 before any value.
    pub(crate) fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum.total() / self.count as f64
        }
    }
}

/// Distinct values with their counts, in order of first appearance (`-0.0` counts as `0.0`,
/// as Python's equality has it).
fn counts_in_order(values: &[f64]) -> Vec<(f64, usize)> {
    let mut counts: Vec<(f64, usize)> = Vec::new();
    let mut index: std::collections::HashMap<u64, usize, foldhash::fast::RandomState> =
        std::collections::HashMap::default();
    for &value in values {
        let key = if value == 0.0 { 0.0_f64 } else { value }.to_bits();
        match index.get(&key) {
            Some(&at) => counts[at].1 += 1,
            None => {
                index.insert(key, counts.len());
                counts.push((value, 1));
            }
        }
    }
    counts
}

fn check_level(level: f64) -> Result<(), MetricError> {
    if level > 0.0 && level < 1.0 {
        Ok(())
    } else {
        Err(MetricError::InvalidLevel { level })
    }
}

/// The interval of fewer than two values, as Inspect AI collapses it.
fn degenerate(values: &[f64]) -> Option<Interval> {
    match values {
        [] => Some(Interval {
            lower: 0.0,
            upper: 0.0,
        }),
        [only] => Some(Interval {
            lower: *only,
            upper: *only,
        }),
        _ => None,
    }
}

/// numpy's default (`linear`) quantile of sorted, non-empty values.
fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let below = position.floor();
    let fraction = position - below;
    let low = sorted[below as usize];
    let high = sorted[(below as usize + 1).min(sorted.len() - 1)];
    if fraction >= 0.5 {
        high - (high - low) * (1.0 - fraction)
    } else {
        low + (high - low) * fraction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_inputs_follow_inspect() {
        assert_eq!(mean(&[]), 0.0);
        assert_eq!(stderr(&[0.3]), 0.0);
        assert_eq!(var(&[0.3]), 0.0);
        assert_eq!(bootstrap_stderr(&[], 100, 0), 0.0);
        assert_eq!(
            ci_t(&[0.3], 0.95),
            Ok(Interval {
                lower: 0.3,
                upper: 0.3
            })
        );
        assert_eq!(median(&[]), None);
        assert_eq!(majority(&[1.0, 0.0]), None);
        assert_eq!(majority(&[1.0, 0.0, 1.0]), Some(1.0));
        assert_eq!(mode(&[0.0, 1.0, 1.0, 0.0]), Some(0.0));
        assert_eq!(mode(&[-0.0, 1.0, 0.0]), Some(-0.0));
    }

    #[test]
    fn levels_outside_the_open_interval_are_errors() {
        assert_eq!(
            ci_wilson(&[1.0], 1.0),
            Err(MetricError::InvalidLevel { level: 1.0 })
        );
        assert_eq!(
            ci_wilson(&[1.0, -0.5], 0.9),
            Err(MetricError::NotAProportion {
                index: 1,
                value: -0.5
            })
        );
    }

    #[test]
    fn bootstrap_is_reproducible_for_a_seed() {
        let values: Vec<f64> = (0..50).map(|i| f64::from(i % 7) / 7.0).collect();
        assert_eq!(
            bootstrap_stderr(&values, 200, 7),
            bootstrap_stderr(&values, 200, 7)
        );
        assert_ne!(
            bootstrap_stderr(&values, 200, 7),
            bootstrap_stderr(&values, 200, 8)
        );
    }

    #[test]
    fn bootstrap_gives_what_the_two_functions_give() {
        let many: Vec<f64> = (0..50).map(|i| f64::from(i % 7) / 7.0).collect();
        let cases: [&[f64]; 6] = [
            &[],
            &[0.3],
            &[0.0, 1.0],
            &many,
            &[0.5, f64::NAN, 1.0],
            &[0.1; 9],
        ];
        for values in cases {
            for resamples in [0, 1, 2, 37, 1000] {
                for (level, seed) in [(0.95, 0), (0.5, 7), (0.9, u64::MAX)] {
                    let both = bootstrap(values, level, resamples, seed).expect("a valid level");
                    let stderr = bootstrap_stderr(values, resamples, seed);
                    let interval = ci_bootstrap(values, level, resamples, seed).expect("a level");
                    let label = format!("{values:?} {resamples} {level} {seed}");
                    assert_eq!(both.stderr.to_bits(), stderr.to_bits(), "{label}");
                    assert_eq!(
                        (both.interval.lower.to_bits(), both.interval.upper.to_bits()),
                        (interval.lower.to_bits(), interval.upper.to_bits()),
                        "{label}"
                    );
                }
            }
        }
        for level in [0.0, 1.0, f64::NAN, -0.5] {
            assert!(bootstrap(&many, level, 10, 0).is_err(), "level {level}");
        }
    }

    /// `C(n, k)` exactly.
    fn choose(n: u64, k: u64) -> u128 {
        if k > n {
            return 0;
        }
        (0..k).fold(1_u128, |acc, i| acc * u128::from(n - i) / u128::from(i + 1))
    }

    #[test]
    fn pass_at_k_is_the_correctly_rounded_exact_ratio() {
        // Up to n = 50 every binomial coefficient is below 2^53, so numerator and denominator
        // are exact doubles and one IEEE division rounds the exact rational correctly.
        for n in 1..=50_u64 {
            for c in 0..=n {
                for k in 1..=n {
                    let total = choose(n, k);
                    let exact_at = (total - choose(n - c, k)) as f64 / total as f64;
                    assert_eq!(pass_at_k(n, c, k), Some(exact_at), "pass@{k}, n={n}, c={c}");
                    let exact_hat = choose(c, k) as f64 / total as f64;
                    assert_eq!(
                        pass_hat_k(n, c, k),
                        Some(exact_hat),
                        "pass^{k}, n={n}, c={c}"
                    );
                }
            }
        }
    }

    #[test]
    fn pass_at_one_is_exactly_c_over_n() {
        for n in 1..60_u64 {
            for c in 0..=n {
                assert_eq!(pass_at_k(n, c, 1), Some(c as f64 / n as f64));
            }
        }
        assert_eq!(pass_at_k(3, 1, 4), None);
        assert_eq!(pass_at_k(4, 2, 3), Some(1.0));
    }
}
