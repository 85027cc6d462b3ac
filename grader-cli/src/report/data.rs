//! The page's data: what a report is made from, gathered in one pass over the files (the
//! rewards, each subscore's tally, the errors grouped by message, and the table's rows: the
//! results that went worst when there are more than `--max-rows`), and the verdicts on a
//! subscore (passed, failed, a penalty that fired) that the page is drawn with.

use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::io::Write;

use grader_core::{EvaluationResult, SubScore};
use grader_eval::{Summary, SummaryBuilder};

use super::args::ReportArgs;
use crate::CliError;
use crate::duplicates::{Chosen, OnConflict, files_named, key_of};
use crate::records::{self, Record, SampleTexts};

/// How many sample ids an error group lists.
const GROUP_SAMPLES: usize = 8;

/// One top-level subscore's numbers over the scored results.
#[derive(Debug, Clone, Default)]
pub struct SubscoreTally {
    /// Scored results that have it.
    pub results: usize,
    /// Of those, where it passed (value at or above the threshold); for a penalty, where it
    /// did not fire.
    pub passed: usize,
    /// Of those, where it was a penalty (negative weight).
    pub penalties: usize,
    /// Of the penalties, how many fired (value above 0).
    pub fired: usize,
    /// The smallest weight it had.
    pub min_weight: f64,
    /// The largest weight it had.
    pub max_weight: f64,
}

impl SubscoreTally {
    /// Whether it was a penalty (negative weight) in every result that has it.
    #[must_use]
    pub fn is_penalty(&self) -> bool {
        self.results > 0 && self.penalties == self.results
    }
}

/// Errors with one message (digits aside): how many, and some of their samples.
#[derive(Debug, Clone)]
pub struct ErrorGroup {
    /// The first message of the group, as it was.
    pub message: String,
    /// How many errored results have it.
    pub count: usize,
    /// Whether the group's messages differ (in their digits).
    pub varies: bool,
    /// The first few (sample, epoch) with it.
    pub samples: Vec<(String, u32)>,
}

/// What the page is made from, gathered in one pass over the files.
#[derive(Debug, Default)]
pub struct Collected {
    /// Scored rewards, one per scored result.
    pub rewards: Vec<f64>,
    /// Per top-level subscore name.
    pub subscores: BTreeMap<String, SubscoreTally>,
    /// Errored results.
    pub errors: usize,
    /// Error groups by their key (the message, digits replaced), up to the limit.
    pub error_groups: HashMap<String, ErrorGroup>,
    /// Errored results whose message started a group beyond the limit.
    pub errors_ungrouped: usize,
    /// The table's rows, up to the limit: the results that went worst (see [`Standing`]),
    /// kept as a heap whose top is the first to give way; [`Collected::table`] puts them in
    /// file order.
    pub rows: BinaryHeap<Row>,
    /// Results not in the table because of the limit.
    pub rows_left_out: usize,
    /// Results seen, for the rows' file order.
    pub seen: u64,
}

impl Collected {
    /// The table's rows in file order.
    #[must_use]
    pub fn table(&self) -> Vec<&Row> {
        let mut rows: Vec<&Row> = self.rows.iter().collect();
        rows.sort_by_key(|row| row.order);
        rows
    }
}

/// How well a result went, for choosing which results the table lists when there are more
/// than `--max-rows`: errored results went worst, then those a penalty hit, then failed ones,
/// then passed ones; within each, the lower reward went worse. The table keeps the results
/// that went worst, earlier ones first among equals.
///
/// ```
/// use grader_cli::report::Standing;
///
/// assert!(Standing::Errored < Standing::Penalised(0.9));
/// assert!(Standing::Penalised(0.9) < Standing::Failed(0.1));
/// assert!(Standing::Failed(0.1) < Standing::Failed(0.5));
/// assert!(Standing::Failed(0.9) < Standing::Passed(1.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub enum Standing {
    /// Grading failed: no reward.
    Errored,
    /// A penalty fired; the reward.
    Penalised(f64),
    /// Below the threshold; the reward.
    Failed(f64),
    /// At or above the threshold; the reward.
    Passed(f64),
}

impl Standing {
    fn rank(self) -> (u8, f64) {
        match self {
            Standing::Errored => (0, 0.0),
            Standing::Penalised(reward) => (1, reward),
            Standing::Failed(reward) => (2, reward),
            Standing::Passed(reward) => (3, reward),
        }
    }
}

/// One row of the results table.
#[derive(Debug)]
pub struct Row {
    /// Its place among the results read, from 0.
    pub order: u64,
    /// How well it went.
    pub standing: Standing,
    /// The sample.
    pub sample: String,
    /// The epoch.
    pub epoch: u32,
    /// The result, if any.
    pub result: Option<EvaluationResult>,
    /// Why it has no reward, if it has none.
    pub error: Option<String>,
    /// The sample's input, target and the agent's answer, when its line holds them.
    pub texts: SampleTexts,
}

// Rows are ordered by how well they went, then by their place (a later one gives way first
// among equals), so that the heap's top is the row the table drops first.
impl Ord for Row {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let (a, b) = (self.standing.rank(), other.standing.rank());
        a.0.cmp(&b.0)
            .then_with(|| a.1.total_cmp(&b.1))
            .then_with(|| self.order.cmp(&other.order))
    }
}

impl PartialOrd for Row {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Row {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Row {}

pub(super) fn collect(
    args: &ReportArgs,
    err: &mut dyn Write,
) -> Result<(Summary, Collected), CliError> {
    let rule = args.flags.on_conflict;
    // Keeping the last line of a (sample, epoch) takes a first reading to find it.
    let mut chosen = if rule == OnConflict::Last {
        if args.files.iter().any(|path| path.as_os_str() == "-") {
            return Err(CliError::Usage(
                "--on-conflict last reads the files twice, and standard input cannot be read \
                 again"
                    .to_owned(),
            ));
        }
        Some(Chosen::read(&args.files, args.flags.limits, rule, err)?)
    } else {
        None
    };
    let mut builder = SummaryBuilder::new(args.flags.options());
    let mut collected = Collected::default();
    let mut seen = HashSet::new();
    let threshold = args.flags.threshold;
    let reading = records::for_each_record(&args.files, args.flags.limits, |record, path, n| {
        let key = key_of(&record, path, n);
        // As in the summary, the line of a (sample, epoch) that counts: the first, or the
        // last.
        let counts = match &mut chosen {
            Some(chosen) => chosen.chosen(&key),
            None => seen.insert(key.clone()),
        };
        let (id, epoch) = key;
        if counts {
            gather(
                &mut collected,
                &record,
                &id,
                epoch,
                threshold,
                args.max_rows,
            );
        }
        builder.push(record.into_line(id));
    })?;
    reading.finish(err)?;
    let summary = builder.finish()?;
    if chosen.is_none() {
        rule.check(&summary, &files_named(&args.files), err)?;
    }
    Ok((summary, collected))
}

fn gather(
    collected: &mut Collected,
    record: &Record,
    id: &str,
    epoch: u32,
    threshold: f64,
    max_rows: usize,
) {
    let error = record.error_text();
    match record.reward() {
        Some(reward) => {
            collected.rewards.push(reward);
            let subscores = record
                .result
                .as_ref()
                .and_then(|r| r.subscores.as_deref())
                .unwrap_or_default();
            for sub in subscores {
                let tally = collected
                    .subscores
                    .entry(sub.name().to_owned())
                    .or_insert_with(|| SubscoreTally {
                        min_weight: f64::INFINITY,
                        max_weight: f64::NEG_INFINITY,
                        ..SubscoreTally::default()
                    });
                tally.results += 1;
                tally.min_weight = tally.min_weight.min(sub.weight());
                tally.max_weight = tally.max_weight.max(sub.weight());
                if sub.weight() < 0.0 {
                    tally.penalties += 1;
                    tally.fired += usize::from(fired(sub));
                }
                tally.passed += usize::from(!sub_failed(sub, threshold));
            }
        }
        None => {
            collected.errors += 1;
            let message = error.clone().unwrap_or_else(|| "no result".to_owned());
            let key = group_key(&message);
            let limit = max_rows;
            let groups = collected.error_groups.len();
            match collected.error_groups.get_mut(&key) {
                Some(group) => {
                    group.count += 1;
                    group.varies |= group.message != message;
                    if group.samples.len() < GROUP_SAMPLES {
                        group.samples.push((id.to_owned(), epoch));
                    }
                }
                None if groups < limit => {
                    collected.error_groups.insert(
                        key,
                        ErrorGroup {
                            message,
                            count: 1,
                            varies: false,
                            samples: vec![(id.to_owned(), epoch)],
                        },
                    );
                }
                None => collected.errors_ungrouped += 1,
            }
        }
    }
    let order = collected.seen;
    collected.seen += 1;
    let standing = match record.reward() {
        None => Standing::Errored,
        Some(reward) => {
            let subscores = record
                .result
                .as_ref()
                .and_then(|r| r.subscores.as_deref())
                .unwrap_or_default();
            if any_fired(subscores) {
                Standing::Penalised(reward)
            } else if reward < threshold {
                Standing::Failed(reward)
            } else {
                Standing::Passed(reward)
            }
        }
    };
    if max_rows == 0 {
        collected.rows_left_out += 1;
        return;
    }
    if collected.rows.len() == max_rows {
        let goes_in = collected.rows.peek().is_some_and(|top| {
            let (new, kept) = (standing.rank(), top.standing.rank());
            new.0
                .cmp(&kept.0)
                .then_with(|| new.1.total_cmp(&kept.1))
                .is_lt()
        });
        collected.rows_left_out += 1;
        if !goes_in {
            return;
        }
        collected.rows.pop();
    }
    collected.rows.push(Row {
        order,
        standing,
        sample: id.to_owned(),
        epoch,
        result: record.result.clone(),
        error,
        texts: record.texts.clone(),
    });
}

/// The key errors are grouped by: the message with each run of digits replaced by `#`, so
/// that messages differing only in a number, a duration or an id are one group.
///
/// ```
/// use grader_cli::report::group_key;
///
/// assert_eq!(group_key("failed: timeout after 30.5s on q17"), "failed: timeout after #.#s on q#");
/// assert_eq!(group_key("failed: timeout after 2.0s on q3"), group_key("failed: timeout after 30.5s on q17"));
/// ```
#[must_use]
pub fn group_key(message: &str) -> String {
    let mut key = String::with_capacity(message.len());
    let mut in_digits = false;
    for c in message.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                key.push('#');
            }
            in_digits = true;
        } else {
            key.push(c);
            in_digits = false;
        }
    }
    key
}

/// Whether a subscore is a penalty (negative weight) that fired (value above 0).
pub(super) fn fired(sub: &SubScore) -> bool {
    sub.weight() < 0.0 && sub.value() > 0.0
}

/// Whether a subscore went against the agent: a penalty that fired, or a subscore below the
/// threshold.
pub(super) fn sub_failed(sub: &SubScore, threshold: f64) -> bool {
    if sub.weight() < 0.0 {
        fired(sub)
    } else {
        sub.value() < threshold
    }
}

/// Whether a penalty fired anywhere in the tree.
pub(super) fn any_fired(subscores: &[SubScore]) -> bool {
    subscores
        .iter()
        .any(|sub| fired(sub) || sub.children().is_some_and(any_fired))
}
