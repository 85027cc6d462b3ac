//! What a summary computes, and how: [`SummaryOptions`], and the [`Reducer`]s that make one
//! value of a sample's epochs.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::metrics;

/// How one sample's scored epochs become one value (Inspect AI's epoch reducers).
///
/// Written as a string: `mean`, `median`, `mode`, `max`, `majority`, `at_least_K`, `pass_at_K`
/// (`K` a count; the threshold is the summary's).
///
/// ```
/// use grader_eval::Reducer;
///
/// let reducer: Reducer = "pass_at_2".parse()?;
/// assert_eq!(reducer, Reducer::PassAt(2));
/// assert_eq!(reducer.to_string(), "pass_at_2");
/// assert_eq!(reducer.reduce(&[1.0, 0.0, 0.0], 1.0), Some(2.0 / 3.0));
/// # Ok::<(), grader_eval::summary::UnknownReducer>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
#[non_exhaustive]
pub enum Reducer {
    /// [`metrics::mean`].
    Mean,
    /// [`metrics::median`].
    Median,
    /// [`metrics::mode`].
    Mode,
    /// [`metrics::max`].
    Max,
    /// [`metrics::majority`]: undefined when no value has a strict majority.
    ///
    /// An errored (unscored) epoch counts as a vote for no value, as in Inspect AI: `[1, error,
    /// 0, 1]` has no majority (2 of 4), where leaving the error out would make it 2 of 3, and a
    /// failure would help the agent. The other reducers leave errored epochs out.
    Majority,
    /// [`metrics::at_least`] with this `k`.
    AtLeast(usize),
    /// [`metrics::pass_at`] with this `k`: undefined for fewer than `k` scored epochs.
    PassAt(usize),
}

impl Reducer {
    /// Reduces one sample's epochs, NaN for an errored one (left out by every reducer but
    /// [`Majority`](Self::Majority), where it withholds a vote); `None` when the reducer is
    /// undefined for them.
    #[must_use]
    pub fn reduce(self, values: &[f64], threshold: f64) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        match self {
            // Unscored (NaN) values are left out, as by every reducer (Inspect AI's too).
            Reducer::Mean => metrics::collect(values).map(|values| metrics::mean(&values)),
            Reducer::Median => metrics::median(values),
            Reducer::Mode => metrics::mode(values),
            Reducer::Max => metrics::max(values),
            Reducer::Majority => metrics::majority(values),
            Reducer::AtLeast(k) => metrics::at_least(values, k, threshold),
            Reducer::PassAt(k) => metrics::pass_at(values, k, threshold),
        }
    }
}

impl fmt::Display for Reducer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reducer::Mean => f.write_str("mean"),
            Reducer::Median => f.write_str("median"),
            Reducer::Mode => f.write_str("mode"),
            Reducer::Max => f.write_str("max"),
            Reducer::Majority => f.write_str("majority"),
            Reducer::AtLeast(k) => write!(f, "at_least_{k}"),
            Reducer::PassAt(k) => write!(f, "pass_at_{k}"),
        }
    }
}

/// A string that names no [`Reducer`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown reducer `{0}` (expected mean, median, mode, max, majority, at_least_K or pass_at_K)"
)]
pub struct UnknownReducer(pub String);

impl FromStr for Reducer {
    type Err = UnknownReducer;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let count = |rest: &str| rest.parse::<usize>().ok().filter(|k| *k > 0);
        match text {
            "mean" => Ok(Reducer::Mean),
            "median" => Ok(Reducer::Median),
            "mode" => Ok(Reducer::Mode),
            "max" => Ok(Reducer::Max),
            "majority" => Ok(Reducer::Majority),
            _ => {
                if let Some(k) = text.strip_prefix("at_least_").and_then(count) {
                    Ok(Reducer::AtLeast(k))
                } else if let Some(k) = text.strip_prefix("pass_at_").and_then(count) {
                    Ok(Reducer::PassAt(k))
                } else {
                    Err(UnknownReducer(text.to_owned()))
                }
            }
        }
    }
}

impl From<Reducer> for String {
    fn from(reducer: Reducer) -> String {
        reducer.to_string()
    }
}

impl TryFrom<String> for Reducer {
    type Error = UnknownReducer;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

/// What a [`Summary`](super::Summary) computes, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SummaryOptions {
    /// A reward at or above it passes (pass rate, pass@k, `at_least`). 1.0 by default.
    pub threshold: f64,
    /// The confidence intervals' level. 0.95 by default.
    pub level: f64,
    /// Bootstrap resamples. 1 000 by default, as Inspect AI.
    pub resamples: usize,
    /// The bootstrap's seed. 0 by default.
    pub seed: u64,
    /// How each sample's epochs become the one value the headline metrics are computed over.
    /// [`Reducer::Mean`] by default, as Inspect AI.
    pub reducer: Reducer,
    /// The reducers reported beside it. Mean, median, mode, max and majority by default;
    /// pass@k is always reported for every `k` up to the number of epochs.
    pub reducers: Vec<Reducer>,
    /// The number of epochs the run asked for: samples with fewer lines are counted in
    /// [`Summary::incomplete_samples`](super::Summary::incomplete_samples) and warned about.
    /// `None` (the default) takes the largest number seen for one sample.
    #[serde(default)]
    pub epochs: Option<u32>,
    /// Which line counts when one (sample, epoch) has several: the first read (the default)
    /// or the last. The others are counted in [`Summary::duplicates`], and pairs whose lines
    /// say different things in [`Summary::conflicts`](super::Summary::conflicts).
    ///
    /// [`Summary::duplicates`]: super::Summary::duplicates
    #[serde(default)]
    pub keep: Keep,
}

/// Which of several lines for one (sample, epoch) counts. Files are read in the order given,
/// each from its first line: `First` keeps what was read first, `Last` what was read last
/// (a re-run appended to a file, or given after the first run, replaces it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Keep {
    /// The first line read.
    #[default]
    First,
    /// The last line read.
    Last,
}

impl fmt::Display for Keep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Keep::First => "first",
            Keep::Last => "last",
        })
    }
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            threshold: 1.0,
            level: 0.95,
            resamples: 1000,
            seed: 0,
            reducer: Reducer::Mean,
            reducers: vec![
                Reducer::Mean,
                Reducer::Median,
                Reducer::Mode,
                Reducer::Max,
                Reducer::Majority,
            ],
            epochs: None,
            keep: Keep::First,
        }
    }
}

impl SummaryOptions {
    /// The same options with another pass threshold.
    #[must_use]
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.threshold = threshold;
        self
    }

    /// The same options with another bootstrap seed.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The same options expecting `epochs` epochs per sample (see
    /// [`epochs`](Self::epochs)).
    ///
    /// ```
    /// use grader_core::EvaluationResult;
    /// use grader_eval::{Line, Summary, SummaryOptions};
    ///
    /// let line = |id: &str, epoch| Line::graded(id, epoch, EvaluationResult::default(), 0.1);
    /// let lines = [line("a", 1), line("a", 2), line("b", 1)];
    /// let summary = Summary::from_lines(lines.clone(), SummaryOptions::default());
    /// assert_eq!((summary.epochs, summary.incomplete_samples), (2, 1)); // b has one of two
    /// let summary = Summary::from_lines(lines, SummaryOptions::default().epochs(3));
    /// assert_eq!(summary.incomplete_samples, 2);
    /// assert!(summary.to_string().contains("2 samples have fewer than 3 epochs"));
    /// ```
    #[must_use]
    pub fn epochs(mut self, epochs: u32) -> Self {
        self.epochs = Some(epochs);
        self
    }

    /// The same options keeping `keep` of several lines for one (sample, epoch).
    ///
    /// ```
    /// use grader_core::EvaluationResult;
    /// use grader_eval::summary::Keep;
    /// use grader_eval::{Line, Summary, SummaryOptions};
    ///
    /// let line = |reward| Line::graded("a", 1, EvaluationResult::from_reward(reward).unwrap(), 0.1);
    /// let lines = [line(0.0), line(1.0)];
    /// let first = Summary::from_lines(lines.clone(), SummaryOptions::default());
    /// let last = Summary::from_lines(lines, SummaryOptions::default().keep(Keep::Last));
    /// assert_eq!((first.reward.mean, last.reward.mean), (0.0, 1.0));
    /// assert_eq!((last.duplicates, last.conflicts), (1, 1));
    /// ```
    #[must_use]
    pub fn keep(mut self, keep: Keep) -> Self {
        self.keep = keep;
        self
    }

    /// The same options with another headline reducer.
    #[must_use]
    pub fn reducer(mut self, reducer: Reducer) -> Self {
        self.reducer = reducer;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reducer_names_round_trip() {
        for name in [
            "mean",
            "median",
            "mode",
            "max",
            "majority",
            "at_least_3",
            "pass_at_1",
        ] {
            assert_eq!(
                name.parse::<Reducer>().expect("a reducer name").to_string(),
                name
            );
        }
        assert!("pass_at_0".parse::<Reducer>().is_err());
        assert!("avg".parse::<Reducer>().is_err());
    }

    /// Every sequence of up to 5 epochs of 0, 0.5, 1 or an error (NaN): an errored epoch never
    /// makes a majority, nor a different one, from what a 0 in its place would give (D26).
    #[test]
    fn an_errored_epoch_never_helps_a_majority() {
        let choices = [0.0, 0.5, 1.0, f64::NAN];
        for len in 1..=5_u32 {
            for code in 0..4_usize.pow(len) {
                let epochs: Vec<f64> = (0..len)
                    .map(|i| choices[code / 4_usize.pow(i) % 4])
                    .collect();
                let zeroed: Vec<f64> = epochs
                    .iter()
                    .map(|v| if v.is_nan() { 0.0 } else { *v })
                    .collect();
                if let Some(value) = Reducer::Majority.reduce(&epochs, 1.0) {
                    assert_eq!(
                        Reducer::Majority.reduce(&zeroed, 1.0),
                        Some(value),
                        "{epochs:?}"
                    );
                }
            }
        }
        assert_eq!(
            Reducer::Majority.reduce(&[1.0, f64::NAN, 0.0, 1.0], 1.0),
            None
        );
    }

    /// The same through a summary: `[1, error, 0, 1]` has no majority, 2 of 4 (Inspect AI's
    /// `majority` over the same scores), where leaving the error out would give 2 of 3.
    #[test]
    fn a_summary_counts_an_errored_epoch_in_the_majority() {
        use crate::line::{ErrorKind, Line};
        use crate::summary::Summary;
        use grader_core::EvaluationResult;

        let graded = |id: &str, epoch: u32, reward: f64| {
            let result = EvaluationResult::from_reward(reward).expect("a finite reward");
            Line::graded(id, epoch, result, 0.0)
        };
        let summary = Summary::from_lines(
            [
                graded("a", 1, 1.0),
                Line::failed("a", 2, ErrorKind::Failed, "no", 0.0),
                graded("a", 3, 0.0),
                graded("a", 4, 1.0),
                graded("b", 1, 1.0),
                Line::failed("b", 2, ErrorKind::Failed, "no", 0.0),
                graded("b", 3, 1.0),
            ],
            SummaryOptions::default(),
        );
        let majority = summary
            .reducers
            .iter()
            .find(|stat| stat.reducer == Reducer::Majority)
            .expect("majority is reported by default");
        // `a` has none (2 of 4); `b` has 1 (2 of 3, the error a vote for no value).
        assert_eq!((majority.samples, majority.mean), (1, 1.0));
    }
}
