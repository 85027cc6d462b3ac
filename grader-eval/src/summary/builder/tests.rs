//! The builder's tests: what it keeps of lines pushed in any order, in memory and through
//! temporary files, against a plain reading of them.

use std::collections::BTreeMap;

use super::*;
use crate::line::ErrorKind;
use crate::metrics;
use grader_core::EvaluationResult;

fn graded(id: &str, epoch: u32, reward: f64) -> Line {
    let result = EvaluationResult::from_reward(reward).expect("a finite reward");
    Line::graded(id, epoch, result, 0.0)
}

/// Random lines: ids from a small set, mostly epochs 1 to 4 but also 0, past 64 and the
/// largest, failures, panics, results marked `isError`, subscores, grading times whose sum
/// depends on the order they are added in.
fn random_lines(rng: &mut rand_chacha::ChaCha8Rng) -> Vec<Line> {
    use rand::Rng;

    let mut lines = Vec::new();
    for _ in 0..rng.random_range(0..300) {
        let id = format!("s{}", rng.random_range(0..60));
        let epoch = if rng.random_bool(0.1) {
            [0, 65, 100, u32::MAX][rng.random_range(0..4)]
        } else {
            rng.random_range(1..5)
        };
        let duration = rng.random::<f64>() * 10.0;
        lines.push(match rng.random_range(0..20) {
            0 => Line::failed(&*id, epoch, ErrorKind::Failed, "no", duration),
            1 => Line::failed(&*id, epoch, ErrorKind::Panicked, "boom", duration),
            2 => {
                let mut result = EvaluationResult::from_reward(0.5).expect("finite");
                result.is_error = true;
                Line::graded(id, epoch, result, duration)
            }
            _ => {
                let reward = f64::from(rng.random_range(0..5_u8)) / 4.0 - 0.25;
                let mut result = EvaluationResult::from_reward(reward).expect("finite");
                let names = ["tests", "style", "judge"];
                result.subscores = Some(
                    names[..rng.random_range(0..=names.len())]
                        .iter()
                        .map(|name| {
                            grader_core::SubScore::new(*name, rng.random::<f64>()).expect("valid")
                        })
                        .collect(),
                );
                Line::graded(id, epoch, result, duration)
            }
        });
    }
    lines
}

/// Pushes `lines` into a builder spilling past `budget` bytes into `dir`.
fn spilled(
    lines: &[Line],
    budget: usize,
    dir: &std::path::Path,
    fan_in: usize,
) -> (usize, Result<Summary, SpillError>) {
    spilled_with(SummaryOptions::default(), lines, budget, dir, fan_in)
}

/// As [`spilled`], with `options`.
fn spilled_with(
    options: SummaryOptions,
    lines: &[Line],
    budget: usize,
    dir: &std::path::Path,
    fan_in: usize,
) -> (usize, Result<Summary, SpillError>) {
    let mut builder = SummaryBuilder::new(options).spilling(budget, dir, fan_in);
    for line in lines {
        builder.push(line.clone());
    }
    let runs = builder
        .spilled
        .as_ref()
        .map_or(0, |spilled| spilled.runs.len());
    (runs, builder.finish())
}

/// What a summary keeps of lines pushed in any order, against the plain reading: every
/// sample's first line per epoch, samples by id, epochs in order, sums in the order the
/// lines came. Spilled to many small runs (merged a few at a time), the same summary.
#[test]
fn the_compact_builder_keeps_what_the_plain_reading_would() {
    use rand::SeedableRng;
    use rand::seq::SliceRandom;

    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for round in 0..40 {
        let lines = random_lines(&mut rng);
        // The plain reading, first line of each (sample, epoch) wins.
        let mut plain: BTreeMap<String, BTreeMap<u32, Option<f64>>> = BTreeMap::new();
        let mut duplicates = 0;
        let mut durations = Vec::new();
        // Name → sample → epoch → the values (a name may be given twice in one result).
        let mut subscores: BTreeMap<String, BTreeMap<String, BTreeMap<u32, Vec<f64>>>> =
            BTreeMap::new();
        for line in &lines {
            let epochs = plain.entry(line.id.clone()).or_default();
            match epochs.entry(line.epoch) {
                std::collections::btree_map::Entry::Occupied(_) => duplicates += 1,
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(line.reward());
                    durations.push(line.duration_secs);
                    if line.reward().is_some() {
                        for sub in line
                            .result
                            .as_ref()
                            .and_then(|r| r.subscores.as_deref())
                            .unwrap_or_default()
                        {
                            subscores
                                .entry(sub.name().to_owned())
                                .or_default()
                                .entry(line.id.clone())
                                .or_default()
                                .entry(line.epoch)
                                .or_default()
                                .push(sub.value());
                        }
                    }
                }
            }
        }
        let means: Vec<f64> = plain
            .values()
            .map(|e| e.values().flatten().copied().collect::<Vec<f64>>())
            .filter(|v| !v.is_empty())
            .map(|v| metrics::mean(&v))
            .collect();
        let summary = Summary::from_lines(lines.clone(), SummaryOptions::default());
        assert_eq!(summary.samples, plain.len(), "round {round}");
        assert_eq!(summary.duplicates, duplicates, "round {round}");
        assert_eq!(summary.lines, lines.len() - duplicates, "round {round}");
        assert_eq!(summary.reward.n, means.len(), "round {round}");
        assert_eq!(summary.reward.mean, metrics::mean(&means), "round {round}");
        assert_eq!(
            summary.reward.ci_bootstrap,
            metrics::ci_bootstrap(&means, 0.95, 1000, 0).expect("a level"),
            "round {round}: samples in the order of their ids"
        );
        assert_eq!(
            summary.grading_secs,
            grader_core::grade::neumaier_sum(durations.iter().copied()),
            "round {round}: the grading times added in the order of the lines"
        );
        // Per sample, the mean of its epochs; then the mean over the samples, by id.
        let subscore_means: BTreeMap<String, f64> = subscores
            .iter()
            .map(|(name, samples)| {
                let per_sample: Vec<f64> = samples
                    .values()
                    .map(|epochs| {
                        metrics::mean(&epochs.values().flatten().copied().collect::<Vec<_>>())
                    })
                    .collect();
                (name.clone(), metrics::mean(&per_sample))
            })
            .collect();
        assert_eq!(
            summary
                .subscores
                .iter()
                .map(|(name, stat)| (name.clone(), stat.mean))
                .collect::<BTreeMap<_, _>>(),
            subscore_means,
            "round {round}"
        );
        let json = serde_json::to_string(&summary).expect("a summary as JSON");
        // Through temporary files: the same summary, bit for bit.
        for (budget, fan_in) in [
            (usize::MAX, spill::FAN_IN),
            (600, spill::FAN_IN),
            (300, 3),
            (300, 2),
        ] {
            let (runs, spilled) = spilled(&lines, budget, dir.path(), fan_in);
            if budget < 1000 && lines.len() > 30 {
                let least = if budget == 300 { 3 } else { 1 };
                assert!(
                    runs >= least,
                    "round {round}: {runs} runs under a budget of {budget}"
                );
            } else if budget == usize::MAX {
                assert_eq!(runs, 0, "round {round}: nothing spilled below the budget");
            }
            let spilled = spilled.expect("a summary through temporary files");
            assert_eq!(
                serde_json::to_string(&spilled).ok().as_ref(),
                Some(&json),
                "round {round}, budget {budget}, {runs} runs merged {fan_in} at a time"
            );
        }
        // Another order of the same distinct lines: the same summary.
        let mut distinct: Vec<Line> = Vec::new();
        let mut taken = std::collections::HashSet::new();
        for line in lines {
            if taken.insert((line.id.clone(), line.epoch)) {
                distinct.push(line);
            }
        }
        distinct.shuffle(&mut rng);
        let mut again = Summary::from_lines(distinct, SummaryOptions::default());
        again.duplicates = summary.duplicates;
        again.conflicts = summary.conflicts;
        again.conflicting.clone_from(&summary.conflicting);
        again.grading_secs = summary.grading_secs;
        again.subscores.clone_from(&summary.subscores);
        assert_eq!(
            serde_json::to_string(&again).ok(),
            serde_json::to_string(&summary).ok(),
            "round {round}"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path())
            .expect("the directory")
            .count(),
        0,
        "the temporary files have no name"
    );
}

/// The open files in `dir` of this process (on Linux, where `/proc/self/fd` tells them).
#[cfg(target_os = "linux")]
fn open_files_in(dir: &std::path::Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("the open files")
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter(|target| target.starts_with(dir))
        .count()
}

#[test]
fn spill_files_are_gone_after_finish_and_after_a_drop_without_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let dir = dir.path().canonicalize().expect("a path");
    let lines: Vec<Line> = (0..500)
        .map(|i| graded(&format!("sample-{}", i % 200), 1 + i / 200, 0.5))
        .collect();
    for finish in [true, false] {
        let mut builder = SummaryBuilder::new(SummaryOptions::default()).spilling(2_000, &dir, 4);
        for line in &lines {
            builder.push(line.clone());
        }
        let runs = builder
            .spilled
            .as_ref()
            .map_or(0, |spilled| spilled.runs.len());
        assert!(runs > 4, "{runs} runs");
        // No file in the directory has a name; each run is open, and the log.
        assert_eq!(std::fs::read_dir(&dir).expect("the directory").count(), 0);
        #[cfg(target_os = "linux")]
        assert_eq!(open_files_in(&dir), runs + 1);
        if finish {
            let summary = builder.finish().expect("a summary");
            assert_eq!((summary.samples, summary.lines), (200, 500));
        } else {
            drop(builder);
        }
        #[cfg(target_os = "linux")]
        assert_eq!(open_files_in(&dir), 0, "finished: {finish}");
        assert_eq!(std::fs::read_dir(&dir).expect("the directory").count(), 0);
    }
}

#[test]
fn a_spill_that_fails_is_an_error_naming_the_directory_not_a_partial_summary() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let missing = dir.path().join("missing");
    let lines: Vec<Line> = (0..100).map(|i| graded(&format!("s{i}"), 1, 1.0)).collect();
    let (runs, summary) = spilled(&lines, 500, &missing, spill::FAN_IN);
    assert_eq!(runs, 0);
    let error = summary.expect_err("no directory to spill to");
    assert_eq!(error.dir, missing);
    assert_eq!(error.source.kind(), std::io::ErrorKind::NotFound);
    let message = error.to_string();
    assert!(message.contains(&*missing.to_string_lossy()), "{message}");
    assert!(message.contains("TMPDIR"), "{message}");
    // Below the budget nothing is written, so nothing can fail.
    let (runs, summary) = spilled(&lines, usize::MAX, &missing, spill::FAN_IN);
    assert_eq!(runs, 0);
    assert_eq!(summary.expect("a summary in memory").samples, 100);
}

#[test]
fn a_new_builder_holds_a_few_mebibytes_before_it_spills() {
    let mut builder = SummaryBuilder::new(SummaryOptions::default());
    for i in 0..50_000 {
        builder.push(graded(&format!("sample-{i:06}"), 1, 1.0));
    }
    assert!(builder.spilled.is_none(), "50 000 lines stay in memory");
    assert!(builder.run.size() < SummaryBuilder::MEMORY_BUDGET);
    assert!(builder.run.size() > 50_000 * size_of::<Kept>());
}

#[test]
fn duplicates_are_told_at_every_epoch_number() {
    let mut lines = Vec::new();
    for epoch in [0, 1, 63, 64, 65, 100, u32::MAX] {
        lines.push(graded("a", epoch, 1.0));
        lines.push(graded("b", epoch, 0.0));
        lines.push(graded("a", epoch, 0.0)); // a duplicate: the first line wins
    }
    let summary = Summary::from_lines(lines, SummaryOptions::default());
    assert_eq!(
        (summary.samples, summary.lines, summary.duplicates),
        (2, 14, 7)
    );
    assert_eq!(summary.epochs, 7);
    assert_eq!(summary.reward.mean, 0.5);
}

#[test]
fn errors_are_counted_not_averaged_and_duplicates_ignored() {
    let summary = Summary::from_lines(
        [
            graded("a", 1, 1.0),
            graded("a", 2, 0.0),
            graded("a", 2, 1.0),
            Line::failed("b", 1, ErrorKind::Panicked, "boom", 0.0),
            graded("c", 1, 1.0),
            Line::failed("c", 2, ErrorKind::Failed, "no", 0.0),
        ],
        SummaryOptions::default(),
    );
    assert_eq!(summary.samples, 3);
    assert_eq!(summary.lines, 5);
    assert_eq!(summary.duplicates, 1);
    assert_eq!((summary.scored, summary.errored), (3, 2));
    assert_eq!(summary.errored_samples, 1);
    // a: mean(1, 0) = 0.5; c: mean(1) = 1.0; b has no score.
    assert_eq!(summary.reward.n, 2);
    assert_eq!(summary.reward.mean, 0.75);
    assert_eq!(summary.pass_at_k[0].mean, 0.75);
    assert_eq!(summary.pass_at_k[1].samples, 1);
    assert_eq!(summary.errors["panicked"], 1);
    assert!(summary.to_string().contains("3 scored, 2 errored"));
}

/// Keeping the last line of each (sample, epoch): what the plain reading with the last line
/// winning gives, conflicts counted where a pair's lines differ, and the same summary through
/// temporary files.
#[test]
fn keeping_the_last_line_is_the_plain_reading_of_the_last_lines_spilled_or_not() {
    use rand::SeedableRng;

    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let options = SummaryOptions::default().keep(crate::summary::Keep::Last);
    for round in 0..30 {
        let lines = random_lines(&mut rng);
        let mut plain: BTreeMap<String, BTreeMap<u32, Vec<&Line>>> = BTreeMap::new();
        for line in &lines {
            plain
                .entry(line.id.clone())
                .or_default()
                .entry(line.epoch)
                .or_default()
                .push(line);
        }
        let mut conflicts = Vec::new();
        let mut means = Vec::new();
        for (id, epochs) in &plain {
            let mut values = Vec::new();
            for (epoch, of_pair) in epochs {
                let fingerprint = of_pair[0].fingerprint();
                if of_pair.iter().any(|line| line.fingerprint() != fingerprint) {
                    conflicts.push((id.clone(), *epoch));
                }
                values.extend(of_pair.last().and_then(|line| line.reward()));
            }
            if !values.is_empty() {
                means.push(metrics::mean(&values));
            }
        }
        let summary = Summary::from_lines(lines.clone(), options.clone());
        let pairs: usize = plain.values().map(BTreeMap::len).sum();
        assert_eq!(summary.duplicates, lines.len() - pairs, "round {round}");
        assert_eq!(summary.reward.mean, metrics::mean(&means), "round {round}");
        assert_eq!(summary.conflicts, conflicts.len(), "round {round}");
        let named: Vec<(String, u32)> = summary
            .conflicting
            .iter()
            .map(|conflict| (conflict.id.clone(), conflict.epoch))
            .collect();
        conflicts.truncate(Summary::CONFLICTS_NAMED);
        assert_eq!(named, conflicts, "round {round}");
        let json = serde_json::to_string(&summary).expect("a summary as JSON");
        for (budget, fan_in) in [(600, spill::FAN_IN), (300, 2)] {
            let (_, spilled) = spilled_with(options.clone(), &lines, budget, dir.path(), fan_in);
            let spilled = spilled.expect("a summary through temporary files");
            assert_eq!(
                serde_json::to_string(&spilled).ok().as_ref(),
                Some(&json),
                "round {round}, budget {budget}"
            );
        }
    }
}
