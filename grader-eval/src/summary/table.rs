//! A summary as a terminal table: counts (with a warning for samples that have fewer epochs
//! than asked for), the headline metrics, pass@k, the other reducers, subscores, then a legend
//! ([`Summary::legend`]).

use std::fmt;

use super::Summary;
use super::options::Reducer;
use crate::metrics::Interval;

impl Summary {
    /// What each row of the table means, one `(row, meaning)` pair per kind of row shown, with
    /// this summary's threshold and reducer filled in. The table prints it under `legend:`.
    #[must_use]
    pub fn legend(&self) -> Vec<(String, String)> {
        let threshold = self.options.threshold;
        let reducer = self.options.reducer;
        let mut legend = vec![
            (
                "reward".to_owned(),
                format!(
                    "each sample's scored epochs reduced to one value by {reducer}, then \
                     averaged over the samples; penalties can make a reward negative"
                ),
            ),
            (
                "pass rate".to_owned(),
                format!(
                    "share of samples whose reduced reward is ≥ {threshold}{}",
                    if self.pass_means_all_epochs() {
                        " (no reward is above it, so a sample's mean reaches it only when every \
                         scored epoch does: all epochs passed)"
                    } else {
                        ""
                    }
                ),
            ),
        ];
        if !self.pass_at_k.is_empty() {
            legend.push((
                "pass_at_k".to_owned(),
                format!(
                    "chance that at least one of k epochs drawn from a sample passes \
                     (≥ {threshold}), averaged over the samples with k scored epochs; pass_at_1 \
                     is a sample's share of passing epochs, averaged"
                ),
            ));
        }
        for stat in &self.reducers {
            let meaning = match stat.reducer {
                Reducer::Mean => "the mean of a sample's epochs".to_owned(),
                Reducer::Median => "the median of a sample's epochs".to_owned(),
                Reducer::Mode => {
                    "a sample's most frequent epoch value (on a tie, the one in the earliest epoch)"
                        .to_owned()
                }
                Reducer::Max => "a sample's best epoch".to_owned(),
                Reducer::Majority => "the value held by more than half of a sample's epochs, \
                                      an errored one a vote for none (a sample without one is \
                                      left out of n)"
                    .to_owned(),
                Reducer::AtLeast(k) => {
                    format!("1 when at least {k} of a sample's epochs pass (≥ {threshold}), else 0")
                }
                Reducer::PassAt(k) => format!("pass_at_{k}, as above"),
            };
            if stat.reducer != reducer {
                legend.push((
                    stat.reducer.to_string(),
                    format!("{meaning}, averaged over the samples"),
                ));
            }
        }
        if !self.subscores.is_empty() {
            legend.push((
                "subscores".to_owned(),
                "each top-level subscore's mean over the samples that have it, a sample's value \
                 the mean of its scored epochs (as the reward by mean, and Inspect AI's scores)"
                    .to_owned(),
            ));
        }
        legend.push((
            "n".to_owned(),
            "how many samples the value is over".to_owned(),
        ));
        legend
    }
}

impl Summary {
    /// The conflicting duplicates in a sentence, when there are any: how many (sample, epoch)
    /// pairs have lines that differ, which line counted, and the first few pairs.
    ///
    /// ```
    /// use grader_core::EvaluationResult;
    /// use grader_eval::{Line, Summary, SummaryOptions};
    ///
    /// let line = |id: &str, reward| Line::graded(id, 1, EvaluationResult::from_reward(reward).unwrap(), 0.1);
    /// let summary = Summary::from_lines([line("a", 0.0), line("a", 1.0), line("b", 1.0), line("b", 1.0)], SummaryOptions::default());
    /// assert_eq!(
    ///     summary.conflicts_text().as_deref(),
    ///     Some("1 (sample, epoch) pair has lines that differ; the first line read counts: a epoch 1 (2 lines)")
    /// );
    /// ```
    #[must_use]
    pub fn conflicts_text(&self) -> Option<String> {
        if self.conflicts == 0 {
            return None;
        }
        let named: Vec<String> = self
            .conflicting
            .iter()
            .map(|conflict| {
                format!(
                    "{} epoch {} ({} lines)",
                    one_line(&conflict.id),
                    conflict.epoch,
                    conflict.lines
                )
            })
            .collect();
        let more = self.conflicts.saturating_sub(named.len());
        Some(format!(
            "{} (sample, epoch) pair{} {} lines that differ; the {} line read counts: {}{}",
            self.conflicts,
            if self.conflicts == 1 { "" } else { "s" },
            if self.conflicts == 1 { "has" } else { "have" },
            self.options.keep,
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    }
}

impl Summary {
    /// Whether the pass rate is the share of samples whose every scored epoch passed: the
    /// reducer is the mean and no reward is above the threshold (so a mean reaches it only when
    /// every epoch does).
    fn pass_means_all_epochs(&self) -> bool {
        self.options.reducer == Reducer::Mean
            && self
                .highest_reward
                .is_some_and(|highest| highest <= self.options.threshold)
    }

    /// The pass rate's name, saying what passes: `pass rate (all epochs ≥ 1)` when that is what
    /// it counts, else `pass rate (median of epochs ≥ 0.9)` and the like.
    ///
    /// ```
    /// use grader_core::EvaluationResult;
    /// use grader_eval::{Line, Summary, SummaryOptions};
    ///
    /// let line = |epoch, reward| Line::graded("a", epoch, EvaluationResult::from_reward(reward).unwrap(), 0.1);
    /// let lines = [line(1, 1.0), line(2, 0.5)];
    /// let summary = Summary::from_lines(lines.clone(), SummaryOptions::default());
    /// assert_eq!(summary.pass_rate_label(), "pass rate (all epochs ≥ 1)");
    /// let summary = Summary::from_lines(lines, SummaryOptions::default().threshold(0.7));
    /// assert_eq!(summary.pass_rate_label(), "pass rate (mean of epochs ≥ 0.7)");
    /// assert_eq!(summary.reward.pass_rate, 1.0); // 0.75 ≥ 0.7, though epoch 2 is below
    /// ```
    #[must_use]
    pub fn pass_rate_label(&self) -> String {
        let threshold = self.options.threshold;
        if self.pass_means_all_epochs() {
            format!("pass rate (all epochs ≥ {threshold})")
        } else {
            format!(
                "pass rate ({} of epochs ≥ {threshold})",
                self.options.reducer
            )
        }
    }
}

impl fmt::Display for Summary {
    /// A terminal table: counts (with a warning for samples that have fewer epochs than asked
    /// for), the headline metrics, pass@k, the other reducers, subscores, then a legend.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let options = &self.options;
        let percent = options.level * 100.0;
        let interval = |i: &Interval| format!("[{:.4}, {:.4}]", i.lower, i.upper);
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        let expected = options.epochs.unwrap_or(self.epochs);
        let mut rows: Vec<(String, String)> = vec![(
            "samples".into(),
            format!(
                "{} ({} with no score), {}",
                self.samples,
                self.errored_samples,
                if expected == self.epochs {
                    format!("{} epoch{}", self.epochs, plural(self.epochs))
                } else {
                    format!(
                        "{expected} epoch{} asked for, at most {} seen",
                        plural(expected),
                        self.epochs
                    )
                }
            ),
        )];
        if self.incomplete_samples > 0 {
            rows.push((
                "warning".into(),
                format!(
                    "{} sample{} {} fewer than {expected} epoch{} (an unfinished or interrupted \
                     run: run it again to finish); each is reduced over the epochs it has",
                    self.incomplete_samples,
                    if self.incomplete_samples == 1 {
                        ""
                    } else {
                        "s"
                    },
                    if self.incomplete_samples == 1 {
                        "has"
                    } else {
                        "have"
                    },
                    plural(expected),
                ),
            ));
        }
        let conflicts = self.conflicts_text().map(|text| ("conflicts".into(), text));
        rows.extend([
            (
                "results".into(),
                format!(
                    "{} scored, {} errored{}{}",
                    self.scored,
                    self.errored,
                    if self.errors.is_empty() {
                        String::new()
                    } else {
                        let kinds: Vec<String> = self
                            .errors
                            .iter()
                            .map(|(k, n)| format!("{k} {n}"))
                            .collect();
                        format!(" ({})", kinds.join(", "))
                    },
                    if self.duplicates > 0 {
                        format!(
                            ", {} duplicate line{} left out",
                            self.duplicates,
                            if self.duplicates == 1 { "" } else { "s" }
                        )
                    } else {
                        String::new()
                    }
                ),
            ),
            (
                "reward".into(),
                format!(
                    "{:.4} ± {:.4} stderr (bootstrap {:.4}), std {:.4} ({} of epochs, n={})",
                    self.reward.mean,
                    self.reward.stderr,
                    self.reward.bootstrap_stderr,
                    self.reward.std,
                    options.reducer,
                    self.reward.n
                ),
            ),
            (
                format!("{percent}% CI"),
                format!(
                    "bootstrap {} t {}{}",
                    interval(&self.reward.ci_bootstrap),
                    interval(&self.reward.ci_t),
                    self.reward
                        .ci_wilson
                        .as_ref()
                        .map(|i| format!(" Wilson {}", interval(i)))
                        .unwrap_or_default()
                ),
            ),
            (
                self.pass_rate_label(),
                format!("{:.4} (n={})", self.reward.pass_rate, self.reward.n),
            ),
        ]);
        if let Some(row) = conflicts {
            // Right after the results row: it says which of their lines counted.
            let at = rows
                .iter()
                .position(|(key, _)| key == "results")
                .map_or(rows.len(), |at| at + 1);
            rows.insert(at, row);
        }
        // The headline reducer's row would repeat the reward's mean.
        let others = self
            .reducers
            .iter()
            .filter(|s| s.reducer != options.reducer);
        for stat in self.pass_at_k.iter().chain(others) {
            rows.push((
                stat.reducer.to_string(),
                format!("{:.4} (n={})", stat.mean, stat.samples),
            ));
        }
        if !self.subscores.is_empty() {
            rows.push(("subscores".into(), "per sample, mean of epochs".to_owned()));
        }
        for (name, stat) in &self.subscores {
            rows.push((
                format!("  {}", one_line(name)),
                format!("{:.4} (n={})", stat.mean, stat.count),
            ));
        }
        let width = rows
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0);
        for (key, value) in rows {
            let pad = width - key.chars().count();
            writeln!(f, "{key}{:pad$}  {value}", "")?;
        }
        writeln!(f, "legend:")?;
        let legend = self.legend();
        let width = legend
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0);
        for (key, meaning) in legend {
            let pad = width - key.chars().count();
            writeln!(f, "  {key}{:pad$}  {meaning}", "")?;
        }
        Ok(())
    }
}

/// A subscore's name as one row of the table: control characters (line breaks included) and
/// the bidirectional formatting characters written as escapes (`\u{a}`), so that a name from a
/// file can neither start a line that reads as the table's nor act on a terminal.
fn one_line(name: &str) -> std::borrow::Cow<'_, str> {
    grader_core::report::escape_controls(name, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::line::{ErrorKind, Line};
    use crate::summary::SummaryOptions;
    use grader_core::EvaluationResult;

    fn graded(id: &str, epoch: u32, reward: f64) -> Line {
        let result = EvaluationResult::from_reward(reward).expect("a finite reward");
        Line::graded(id, epoch, result, 0.0)
    }

    #[test]
    fn samples_with_fewer_epochs_than_asked_are_counted_and_warned_about() {
        let lines = || {
            [
                graded("a", 1, 1.0),
                graded("a", 2, 1.0),
                Line::failed("b", 1, ErrorKind::Failed, "no", 0.0),
                Line::failed("b", 2, ErrorKind::Failed, "no", 0.0),
                graded("c", 2, 0.0),
            ]
        };
        // By default the largest number seen is the one asked for; errored lines count as done.
        let summary = Summary::from_lines(lines(), SummaryOptions::default());
        assert_eq!((summary.epochs, summary.incomplete_samples), (2, 1));
        let text = summary.to_string();
        let warning = text
            .lines()
            .find(|line| line.starts_with("warning"))
            .expect("a warning row");
        assert!(
            warning.contains("1 sample has fewer than 2 epochs (an unfinished or interrupted run"),
            "{text}"
        );
        let samples = text.lines().next().unwrap_or_default();
        assert!(samples.starts_with("samples "), "{text}");
        assert!(
            samples.ends_with(" 3 (1 with no score), 2 epochs"),
            "{text}"
        );

        let summary = Summary::from_lines(lines(), SummaryOptions::default().epochs(3));
        assert_eq!(summary.incomplete_samples, 3);
        let text = summary.to_string();
        assert!(
            text.contains("3 epochs asked for, at most 2 seen"),
            "{text}"
        );
        assert!(
            text.contains("3 samples have fewer than 3 epochs"),
            "{text}"
        );

        let complete = Summary::from_lines(
            [graded("a", 1, 1.0), graded("a", 2, 0.0)],
            SummaryOptions::default(),
        );
        assert_eq!(complete.incomplete_samples, 0);
        assert!(!complete.to_string().contains("warning"));
    }

    #[test]
    fn a_name_cannot_forge_a_row_or_act_on_a_terminal() {
        let mut result = EvaluationResult::from_reward(0.0).expect("finite");
        result.subscores = Some(vec![
            grader_core::SubScore::new("tests\nnow passing  1.0000\u{1b}]0;x\u{7}\u{202e}", 0.0)
                .expect("valid"),
        ]);
        let text = Summary::from_lines(
            [Line::graded("a", 1, result, 0.0)],
            SummaryOptions::default(),
        )
        .to_string();
        assert!(
            !text
                .lines()
                .any(|line| line.trim_start().starts_with("now passing")),
            "{text}"
        );
        assert!(
            !text
                .chars()
                .any(|c| c == '\u{1b}' || c == '\u{7}' || c == '\u{202e}'),
            "{text}"
        );
        assert!(
            text.contains("tests\\u{a}now passing  1.0000\\u{1b}]0;x\\u{7}\\u{202e}"),
            "{text}"
        );
        assert_eq!(one_line("tests"), "tests");
    }

    #[test]
    fn every_row_is_explained_once_and_the_headline_reducer_is_not_repeated() {
        let mut result = EvaluationResult::from_reward(1.0).expect("finite");
        result.subscores = Some(vec![
            grader_core::SubScore::new("tests", 1.0).expect("valid"),
        ]);
        let summary = Summary::from_lines(
            [
                Line::graded("a", 1, result, 0.0),
                graded("a", 2, 0.0),
                graded("b", 1, 1.0),
                graded("b", 2, 1.0),
            ],
            SummaryOptions::default(),
        );
        let text = summary.to_string();
        let (table, legend) = text.split_once("legend:\n").expect("a legend");
        let labels: Vec<&str> = table
            .lines()
            .map(|line| line.split("  ").next().unwrap_or_default())
            .collect();
        assert_eq!(
            labels,
            [
                "samples",
                "results",
                "reward",
                "95% CI",
                "pass rate (all epochs ≥ 1)",
                "pass_at_1",
                "pass_at_2",
                "median",
                "mode",
                "max",
                "majority",
                "subscores",
                "",
            ],
            "{text}"
        );
        assert!(
            !table.contains("mean ("),
            "no row labelled by the mean twice: {text}"
        );
        assert!(table.contains("(mean of epochs, n=2)"), "{text}");
        for term in [
            "reward",
            "pass rate",
            "pass_at_k",
            "median",
            "mode",
            "max",
            "majority",
            "subscores",
            "n",
        ] {
            assert_eq!(
                legend
                    .lines()
                    .filter(|line| line.trim_start().starts_with(&format!("{term} ")))
                    .count(),
                1,
                "{term} explained once: {legend}"
            );
        }
        assert!(
            legend.contains("penalties can make a reward negative"),
            "{legend}"
        );
        // Another headline reducer: the mean gets a row and an explanation of its own.
        let summary = Summary::from_lines(
            [graded("a", 1, 1.0), graded("a", 2, 0.0)],
            SummaryOptions::default().reducer(Reducer::Max),
        );
        let text = summary.to_string();
        assert!(text.contains("\nmean "), "{text}");
        assert!(!text.contains("\nmax "), "{text}");
        assert!(text.contains("(max of epochs, n=1)"), "{text}");
    }
}
