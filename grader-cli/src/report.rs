//! `grader report`: one self-contained static HTML page of an evaluation.
//!
//! The page has the summary (grader-core's), a histogram of the scored rewards (inline SVG),
//! each top-level subscore's weight, mean and pass rate (for a penalty, how often it fired),
//! the errors grouped by message with their counts, and a table of the results whose grade
//! trees expand in place (`<details>`). The table sorts by reward and filters by what went
//! wrong (errored, failed, penalised), by subscore and by sample id; the choice is kept in the
//! address's fragment (`#status=failed&subscore=tests&sort=reward-asc`, and `open=1` to
//! expand the trees shown), so a link opens the page filtered. It loads nothing: no network, no external file; its content security policy
//! allows only its own inline style and the one inline script (by hash).
//!
//! What a grader recorded is shown as text, not as JSON: a command's `stdout` and `stderr`, a
//! judge's `reason`, an error's message are preformatted blocks; a long one shows its first
//! and last lines (see [`excerpt`]) with what lies between counted, and the bytes a grader's
//! output budget dropped (`stdout_dropped_bytes`, `stderr_dropped_bytes`) are shown beside
//! it. A penalty (negative weight) that fired is shown as a failure.
//!
//! Everything from the files is escaped: the page is built with `maud`, which escapes every
//! interpolated string, and nothing from the files is ever inserted unescaped.

use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::io::Write;
use std::path::PathBuf;

use base64::Engine as _;
use grader_eval::{Summary, SummaryBuilder};
use grader_core::{EvaluationResult, SubScore};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde_json::Value;
use sha2::Digest as _;

use crate::records::{self, Record};
use crate::summary::SummaryFlags;
use crate::{CliError, EXIT_OK};

/// Lines kept at each end of a long text.
pub const KEEP_LINES: usize = 20;

/// Bytes kept at each end of a long text, at most (a text of very long lines is cut within a
/// line).
pub const KEEP_BYTES: usize = 2000;

/// How many sample ids an error group lists.
const GROUP_SAMPLES: usize = 8;

/// Arguments of `grader report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Result files (JSON Lines); several are merged.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Where to write the page.
    #[arg(short, long)]
    pub output: PathBuf,
    /// The page's title.
    #[arg(long, default_value = "Evaluation report")]
    pub title: String,
    /// List at most this many results in the table (those that went worst: errored, then
    /// penalised, then the lowest rewards), and as many error groups; the summary, the
    /// histogram, the subscore table and the error counts count all.
    #[arg(long, default_value_t = 5000)]
    pub max_rows: usize,
    /// How the summary is computed; `--threshold` is also what a result or a subscore must
    /// reach to pass.
    #[command(flatten)]
    pub flags: SummaryFlags,
}

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

/// Runs `grader report`.
///
/// # Errors
/// When a file cannot be read or written, or holds lines that are not results.
pub fn run(args: &ReportArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, CliError> {
    let (summary, collected) = collect(args, err)?;
    let page = render(&args.title, &args.files, &summary, &collected, args);
    std::fs::write(&args.output, page.into_string()).map_err(|source| CliError::Write {
        path: args.output.clone(),
        source,
    })?;
    writeln!(
        out,
        "{}: {} results ({} scored, {} errored)",
        args.output.display(),
        summary.lines,
        summary.scored,
        summary.errored
    )?;
    Ok(EXIT_OK)
}

fn collect(args: &ReportArgs, err: &mut dyn Write) -> Result<(Summary, Collected), CliError> {
    let mut builder = SummaryBuilder::new(args.flags.options());
    let mut collected = Collected::default();
    let mut seen = HashSet::new();
    let threshold = args.flags.threshold;
    let reading = records::for_each_record(&args.files, args.flags.max_line, |record, path, n| {
        let id = record.sample_or(|| format!("{}:{n}", path.display()));
        let epoch = record.epoch.unwrap_or(1);
        // As in the summary, the first line of a (sample, epoch) counts and later ones do not.
        if seen.insert((id.clone(), epoch)) {
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
    Ok((builder.finish()?, collected))
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
fn fired(sub: &SubScore) -> bool {
    sub.weight() < 0.0 && sub.value() > 0.0
}

/// Whether a subscore went against the agent: a penalty that fired, or a subscore below the
/// threshold.
fn sub_failed(sub: &SubScore, threshold: f64) -> bool {
    if sub.weight() < 0.0 {
        fired(sub)
    } else {
        sub.value() < threshold
    }
}

/// Whether a penalty fired anywhere in the tree.
fn any_fired(subscores: &[SubScore]) -> bool {
    subscores
        .iter()
        .any(|sub| fired(sub) || sub.children().is_some_and(any_fired))
}

/// A text as a page shows it: whole when short, else its first and last lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt<'a> {
    /// The beginning (the whole text when nothing is left out).
    pub head: &'a str,
    /// The end; empty when nothing is left out.
    pub tail: &'a str,
    /// Lines left out between the two (newlines in the part left out).
    pub lines_left_out: usize,
    /// Bytes left out between the two.
    pub bytes_left_out: usize,
}

/// Cuts `text` for the page: a text of at most `2 × KEEP_LINES + 1` lines and
/// `2 × KEEP_BYTES` bytes is kept whole; a longer one keeps its first [`KEEP_LINES`] lines and
/// its last [`KEEP_LINES`] lines (each end at most [`KEEP_BYTES`] bytes, cut on a character
/// boundary), and counts what lies between.
///
/// ```
/// use grader_cli::report::{KEEP_LINES, excerpt};
///
/// assert_eq!(excerpt("OK\n").head, "OK\n");
/// let log: String = (1..=100).map(|n| format!("line {n}\n")).collect();
/// let cut = excerpt(&log);
/// assert!(cut.head.starts_with("line 1\n") && cut.head.ends_with("line 20\n"));
/// assert!(cut.tail.starts_with("line 81\n") && cut.tail.ends_with("line 100\n"));
/// assert_eq!(cut.lines_left_out, 100 - 2 * KEEP_LINES);
/// assert_eq!(cut.head.len() + cut.bytes_left_out + cut.tail.len(), log.len());
/// ```
#[must_use]
pub fn excerpt(text: &str) -> Excerpt<'_> {
    let whole = Excerpt {
        head: text,
        tail: "",
        lines_left_out: 0,
        bytes_left_out: 0,
    };
    let body = text.strip_suffix('\n').unwrap_or(text);
    let newlines = memchr::memchr_iter(b'\n', body.as_bytes()).count();
    if newlines <= 2 * KEEP_LINES && text.len() <= 2 * KEEP_BYTES {
        return whole;
    }
    // The head ends after its KEEP_LINES-th newline, or at KEEP_BYTES.
    let head_end = memchr::memchr_iter(b'\n', text.as_bytes())
        .nth(KEEP_LINES - 1)
        .map_or(text.len(), |at| at + 1);
    let head_end = floor_boundary(text, head_end.min(KEEP_BYTES));
    // The tail starts after the newline that precedes its first line, or KEEP_BYTES from the
    // end.
    let tail_start = memchr::memrchr_iter(b'\n', body.as_bytes())
        .nth(KEEP_LINES - 1)
        .map_or(0, |at| at + 1);
    let tail_start = ceil_boundary(text, tail_start.max(text.len().saturating_sub(KEEP_BYTES)));
    if tail_start <= head_end {
        return whole;
    }
    let middle = &text[head_end..tail_start];
    Excerpt {
        head: &text[..head_end],
        tail: &text[tail_start..],
        lines_left_out: memchr::memchr_iter(b'\n', middle.as_bytes()).count(),
        bytes_left_out: middle.len(),
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The page's own style.
const STYLE: &str = r#"
:root { color-scheme: light dark; --fg: #1d1f21; --bg: #fff; --muted: #667; --line: #dde;
  --bar: #3b82f6; --pass: #15803d; --fail: #b91c1c; --mid: #b45309; --code: #f3f4f6; }
@media (prefers-color-scheme: dark) { :root { --fg: #e5e7eb; --bg: #111318; --muted: #9aa;
  --line: #2a2f3a; --code: #1b1f27; --pass: #4ade80; --fail: #f87171; --mid: #fbbf24; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  margin: 2rem auto; max-width: 1200px; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.muted { color: var(--muted); } code, pre { font-family: ui-monospace, monospace; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line);
  vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: var(--pass); } .fail { color: var(--fail); } .mid { color: var(--mid); }
.meter { display: inline-block; width: 120px; height: 8px; background: var(--line);
  vertical-align: middle; } .meter > span { display: block; height: 100%; background: var(--bar); }
.meter.penalty > span { background: var(--fail); }
pre { white-space: pre-wrap; word-break: break-word; margin: 0; background: var(--code);
  padding: .35rem .5rem; font-size: 12.5px; line-height: 1.35; }
.text { margin: .3rem 0 .5rem; border-left: 3px solid var(--line); }
.text.error { border-left-color: var(--fail); }
.text-label { font-size: 12px; color: var(--muted); padding: 0 .5rem; }
.text-label b { color: var(--fg); font-weight: 600; }
.elided { font-size: 12px; color: var(--muted); background: var(--code); padding: 0 .5rem;
  border-top: 1px dashed var(--line); border-bottom: 1px dashed var(--line); }
.facts { font-size: 12px; margin: .2rem 0; } .facts span.fact { margin-right: .9rem; }
.facts code { background: var(--code); padding: 0 .25rem; }
ul.tree { list-style: none; padding-left: 1.1rem; margin: .2rem 0; }
ul.tree li { margin: .25rem 0; } .sub-name { font-weight: 600; }
.badge { font-size: 11px; border: 1px solid currentColor; border-radius: 3px; padding: 0 .3rem;
  margin-left: .3rem; }
li.penalty-fired > .sub-name { color: var(--fail); }
svg text { fill: var(--fg); font-size: 11px; } svg rect.bar { fill: var(--bar); }
#controls { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0; }
#filter { padding: .3rem .5rem; width: 16rem; }
th.sortable { cursor: pointer; text-decoration: underline dotted; }
#script-errors { color: var(--fail); }
"#;

/// The page's one script: sorting and filtering the table (the choice kept in the address's
/// fragment) and expanding every tree. It marks the page ready when it has run, records when
/// that was and when the page was first painted, and shows any script error on the page.
const SCRIPT: &str = r##"
(function () {
  "use strict";
  var root = document.documentElement;
  var errors = document.getElementById("script-errors");
  window.addEventListener("error", function (event) {
    errors.hidden = false;
    errors.textContent += String(event.message) + "\n";
  });
  if (window.PerformanceObserver) {
    try {
      new PerformanceObserver(function (list) {
        list.getEntries().forEach(function (entry) {
          if (entry.name === "first-paint") {
            root.setAttribute("data-first-paint-ms", entry.startTime.toFixed(1));
          }
        });
      }).observe({ type: "paint", buffered: true });
    } catch (ignored) { /* no paint timing here */ }
  }
  var filter = document.getElementById("filter");
  var status = document.getElementById("status");
  var subscore = document.getElementById("subscore");
  var sort = document.getElementById("sort");
  var body = document.querySelector("#samples tbody");
  var rows = Array.prototype.slice.call(body.rows);
  var shown = document.getElementById("shown");
  function names(row, attribute) {
    var text = row.getAttribute(attribute);
    return text ? text.split("\n") : [];
  }
  var info = rows.map(function (row, index) {
    var reward = row.getAttribute("data-reward");
    return {
      row: row,
      order: index,
      sample: row.getAttribute("data-sample").toLowerCase(),
      reward: reward === "" ? null : Number(reward),
      status: row.getAttribute("data-status"),
      penalised: row.hasAttribute("data-penalised"),
      subs: names(row, "data-subscores"),
      failed: names(row, "data-failed"),
      fired: names(row, "data-fired")
    };
  });
  function keep(item, wanted, sub, needle) {
    if (item.sample.indexOf(needle) === -1) { return false; }
    var has = sub === "" || item.subs.indexOf(sub) !== -1;
    switch (wanted) {
      case "errored": return item.status === "errored" && sub === "";
      case "failed": return sub === "" ? item.status === "failed" : item.failed.indexOf(sub) !== -1;
      case "penalised": return sub === "" ? item.penalised : item.fired.indexOf(sub) !== -1;
      case "passed": return sub === "" ? item.status === "passed" : has && item.failed.indexOf(sub) === -1;
      default: return has;
    }
  }
  function compare(order) {
    // Errored results have no reward: first when the lowest come first, last otherwise.
    return function (a, b) {
      if (order !== "file" && a.reward !== b.reward) {
        if (a.reward === null) { return order === "reward-asc" ? -1 : 1; }
        if (b.reward === null) { return order === "reward-asc" ? 1 : -1; }
        return order === "reward-asc" ? a.reward - b.reward : b.reward - a.reward;
      }
      return a.order - b.order;
    };
  }
  var sorted = "file";
  function apply(remember) {
    var wanted = status.value, sub = subscore.value, needle = filter.value.toLowerCase();
    if (sort.value !== sorted) {
      sorted = sort.value;
      var fragment = document.createDocumentFragment();
      info.slice().sort(compare(sorted)).forEach(function (item) { fragment.appendChild(item.row); });
      body.appendChild(fragment);
    }
    var count = 0;
    info.forEach(function (item) {
      var match = keep(item, wanted, sub, needle);
      if (item.row.hidden === match) { item.row.hidden = !match; }
      if (match) { count += 1; }
    });
    shown.textContent = String(count);
    root.setAttribute("data-view", [wanted, sub, sorted].join(" "));
    if (remember) {
      var state = new URLSearchParams();
      if (wanted !== "all") { state.set("status", wanted); }
      if (sub !== "") { state.set("subscore", sub); }
      if (sorted !== "file") { state.set("sort", sorted); }
      if (filter.value !== "") { state.set("sample", filter.value); }
      try { history.replaceState(null, "", "#" + state.toString()); } catch (ignored) { /* file: */ }
    }
  }
  function choose(select, value) {
    if (value === null) { return; }
    for (var i = 0; i < select.options.length; i += 1) {
      if (select.options[i].value === value) { select.selectedIndex = i; return; }
    }
  }
  function fromAddress() {
    var state = new URLSearchParams(location.hash.replace(/^#/, ""));
    choose(status, state.get("status"));
    choose(subscore, state.get("subscore"));
    choose(sort, state.get("sort"));
    if (state.get("sample") !== null) { filter.value = state.get("sample"); }
    apply(false);
    if (state.get("open") === "1") { openShown(true); }
  }
  function openShown(open) {
    var details = document.querySelectorAll("#samples tr:not([hidden]) details");
    Array.prototype.forEach.call(details, function (d) { d.open = open; });
  }
  [filter, status, subscore, sort].forEach(function (control) {
    control.addEventListener("input", function () { apply(true); });
    control.addEventListener("change", function () { apply(true); });
  });
  document.getElementById("reward-heading").addEventListener("click", function () {
    sort.value = sort.value === "reward-asc" ? "reward-desc" : "reward-asc";
    apply(true);
  });
  window.addEventListener("hashchange", fromAddress);
  document.getElementById("expand").addEventListener("click", function () {
    var details = document.querySelectorAll("#samples tr:not([hidden]) details");
    openShown(!Array.prototype.every.call(details, function (d) { return d.open; }));
  });
  fromAddress();
  root.setAttribute("data-ready-ms", performance.now().toFixed(1));
  root.setAttribute("data-ready", "yes");
})();
"##;

/// The content security policy: nothing loaded from anywhere, only the page's own style and
/// its one script (by hash).
fn content_security_policy() -> String {
    let hash = sha2::Sha256::digest(SCRIPT.as_bytes());
    let hash = base64::engine::general_purpose::STANDARD.encode(hash);
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{hash}'; \
         img-src data:; base-uri 'none'; form-action 'none'"
    )
}

/// The page.
fn render(
    title: &str,
    files: &[PathBuf],
    summary: &Summary,
    collected: &Collected,
    args: &ReportArgs,
) -> Markup {
    let threshold = args.flags.threshold;
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(content_security_policy());
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { (title) }
                p.muted {
                    @for (index, file) in files.iter().enumerate() {
                        @if index > 0 { ", " }
                        code { (file.display().to_string()) }
                    }
                }
                pre #script-errors hidden {}
                (summary_section(summary))
                (histogram(&collected.rewards))
                (subscore_section(summary, collected, threshold))
                (error_section(collected))
                (sample_section(collected, threshold))
                script { (PreEscaped(SCRIPT)) }
            }
        }
    }
}

fn summary_section(summary: &Summary) -> Markup {
    let stats = &summary.reward;
    let level = summary.options.level * 100.0;
    html! {
        section #summary {
            h2 { "Summary" }
            table {
                tbody {
                    tr { th { "samples" } td #sample-count data-samples=(summary.samples) {
                        (summary.samples) " (" (summary.errored_samples) " with no score), "
                        (summary.epochs) " epoch(s)" } }
                    tr { th { "results" } td #result-count data-results=(summary.lines) {
                        (summary.lines) " — " (summary.scored) " scored, "
                        (summary.errored) " errored"
                        @if summary.duplicates > 0 { ", " (summary.duplicates) " duplicates ignored" }
                    } }
                    tr { th { "mean (" (summary.options.reducer.to_string()) ")" }
                        td #mean data-mean=(stats.mean) {
                            (format!("{:.4} ± {:.4} (stderr), std {:.4}, n = {}",
                                stats.mean, stats.stderr, stats.std, stats.n)) } }
                    tr { th { (level) "% CI" }
                        td { (format!("bootstrap [{:.4}, {:.4}], t [{:.4}, {:.4}]",
                            stats.ci_bootstrap.lower, stats.ci_bootstrap.upper,
                            stats.ci_t.lower, stats.ci_t.upper)) } }
                    tr { th { "pass rate (≥ " (summary.options.threshold) ")" }
                        td { (format!("{:.4}", stats.pass_rate)) } }
                    @for stat in &summary.pass_at_k {
                        tr { th { (stat.reducer.to_string()) }
                            td { (format!("{:.4} (n = {})", stat.mean, stat.samples)) } }
                    }
                }
            }
        }
    }
}

/// The bins of the histogram: `[lower, upper)` tenths of `[0, 1]` (the last one closed), and
/// one bin below 0 when a penalty took a reward there, and one above 1 likewise.
///
/// ```
/// let bins = grader_cli::report::bins(&[0.0, 0.3, 0.35, 1.0, -0.2]);
/// assert_eq!(bins[0], ("< 0".to_owned(), 1));
/// assert_eq!(bins[1], ("0.0–0.1".to_owned(), 1));
/// assert_eq!(bins[4], ("0.3–0.4".to_owned(), 2));
/// assert_eq!(bins[10], ("0.9–1.0".to_owned(), 1));
/// ```
#[must_use]
pub fn bins(rewards: &[f64]) -> Vec<(String, usize)> {
    let mut tenths = [0usize; 10];
    let (mut below, mut above) = (0, 0);
    for &reward in rewards {
        if reward < 0.0 {
            below += 1;
        } else if reward > 1.0 {
            above += 1;
        } else {
            // Truncation is the point: 0.37 is in the bin of 0.3; 1.0 joins the last bin. The
            // nudge keeps 0.3 (0.3 * 10 = 2.9999999999999996) in its own bin.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let index = ((reward * 10.0 + 1e-9) as usize).min(9);
            tenths[index] += 1;
        }
    }
    let mut bins = Vec::new();
    if below > 0 {
        bins.push(("< 0".to_owned(), below));
    }
    for (index, count) in tenths.iter().enumerate() {
        let lower = index as f64 / 10.0;
        let upper = (index + 1) as f64 / 10.0;
        bins.push((format!("{lower:.1}–{upper:.1}"), *count));
    }
    if above > 0 {
        bins.push(("> 1".to_owned(), above));
    }
    bins
}

fn histogram(rewards: &[f64]) -> Markup {
    let bins = bins(rewards);
    let most = bins.iter().map(|(_, n)| *n).max().unwrap_or(0).max(1);
    let (width, height, top, bottom) = (640.0, 220.0, 16.0, 34.0);
    let slot = width / bins.len() as f64;
    html! {
        section {
            h2 { "Rewards" }
            p.muted { (rewards.len()) " scored results" }
            svg #histogram xmlns="http://www.w3.org/2000/svg" role="img"
                width=(width) height=(height) viewBox=(format!("0 0 {width} {height}"))
                data-count=(rewards.len()) {
                title { "Histogram of the scored rewards" }
                @for (index, (label, count)) in bins.iter().enumerate() {
                    @let bar = (height - top - bottom) * (*count as f64) / (most as f64);
                    @let x = slot * index as f64;
                    g {
                        rect.bar x=(x + 3.0) y=(height - bottom - bar) width=(slot - 6.0)
                            height=(bar) data-bin=(label) data-count=(count) {
                            title { (label) ": " (count) }
                        }
                        @if *count > 0 {
                            text x=(x + slot / 2.0) y=(height - bottom - bar - 3.0)
                                text-anchor="middle" { (count) }
                        }
                        text x=(x + slot / 2.0) y=(height - bottom + 14.0) text-anchor="middle" {
                            (label)
                        }
                    }
                }
            }
        }
    }
}

/// A weight as the page shows it: `0.7`, `−0.5`.
fn weight_text(weight: f64) -> String {
    let text = format!("{weight}");
    match text.strip_prefix('-') {
        Some(rest) => format!("−{rest}"),
        None => text,
    }
}

fn subscore_section(summary: &Summary, collected: &Collected, threshold: f64) -> Markup {
    html! {
        section #subscores {
            h2 { "Subscores" }
            @if collected.subscores.is_empty() {
                p.muted { "No scored result has subscores." }
            } @else {
                p.muted { "A subscore passes at or above " (threshold) "; a penalty (negative weight) "
                    "counts against the reward when it fires (value above 0), and its row says how "
                    "often it fired." }
                table {
                    thead { tr { th { "subscore" } th.num { "weight" } th.num { "results" }
                        th.num { "mean" } th.num { "pass rate (≥ " (threshold) ") / fired rate" }
                        th {} } }
                    tbody {
                        @for (name, tally) in &collected.subscores {
                            @let mean = summary.subscores.get(name).map_or(f64::NAN, |s| s.mean);
                            @let weight = if tally.min_weight == tally.max_weight {
                                weight_text(tally.min_weight)
                            } else {
                                format!("{} to {}", weight_text(tally.min_weight), weight_text(tally.max_weight))
                            };
                            tr data-subscore=(name) data-weight=(weight)
                                data-kind=(if tally.is_penalty() { "penalty" } else { "score" }) {
                                td { (name) @if tally.is_penalty() { span.badge.muted { "penalty" } } }
                                td.num { (weight) }
                                td.num { (tally.results) }
                                td.num { (format!("{mean:.4}")) }
                                @if tally.is_penalty() {
                                    @let rate = tally.fired as f64 / tally.results.max(1) as f64;
                                    td class=(if tally.fired > 0 { "num fail" } else { "num pass" })
                                        data-fired-rate=(rate) {
                                        "fired " (format!("{rate:.4}")) " (" (tally.fired) ")" }
                                    td { span.meter.penalty { span style=(format!("width: {:.1}%", rate * 100.0)) {} } }
                                } @else {
                                    @let rate = tally.passed as f64 / tally.results.max(1) as f64;
                                    td.num data-pass-rate=(rate) { "passed " (format!("{rate:.4}")) }
                                    td { span.meter { span style=(format!("width: {:.1}%", rate * 100.0)) {} } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn error_section(collected: &Collected) -> Markup {
    let mut groups: Vec<&ErrorGroup> = collected.error_groups.values().collect();
    groups.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.message.cmp(&b.message))
    });
    let total = collected.errors;
    html! {
        section #errors data-errors=(total) data-groups=(groups.len()) {
            h2 { "Errors (" (total) ")" }
            @if total == 0 {
                p.muted { "No result errored." }
            } @else {
                p.muted { "Counted apart: an errored result is never averaged in as 0. Grouped by "
                    "message (messages that differ only in their numbers are one group)."
                    @if collected.errors_ungrouped > 0 {
                        " " (collected.errors_ungrouped) " more errors have messages beyond the first "
                        (groups.len()) " groups (--max-rows)." } }
                table {
                    thead { tr { th.num { "count" } th { "message" } th { "samples" } } }
                    tbody {
                        @for group in groups {
                            tr.error-group data-group-count=(group.count) {
                                td.num.fail { (group.count) }
                                td {
                                    (text_block("message", &group.message, None, true))
                                    @if group.varies { span.muted { "(the first of the group; the others differ in their numbers)" } }
                                }
                                td {
                                    @for (index, (sample, epoch)) in group.samples.iter().enumerate() {
                                        @if index > 0 { ", " }
                                        code { (sample) } span.muted { " #" (epoch) }
                                    }
                                    @if group.count > group.samples.len() {
                                        span.muted { " and " (group.count - group.samples.len()) " more" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn sample_section(collected: &Collected, threshold: f64) -> Markup {
    let rows = collected.table();
    html! {
        section {
            h2 { "Results" }
            div #controls {
                input #filter type="search" placeholder="filter by sample id" aria-label="filter by sample id";
                label { "show "
                    select #status aria-label="which results" {
                        option value="all" { "all" }
                        option value="errored" { "errored" }
                        option value="failed" { "failed (below " (threshold) ")" }
                        option value="penalised" { "penalised (a penalty fired)" }
                        option value="passed" { "passed" }
                    }
                }
                label { "subscore "
                    select #subscore aria-label="subscore" {
                        option value="" { "any" }
                        @for name in collected.subscores.keys() {
                            option value=(name) { (name) }
                        }
                    }
                }
                label { "sort "
                    select #sort aria-label="sort" {
                        option value="file" { "file order" }
                        option value="reward-asc" { "reward, lowest first" }
                        option value="reward-desc" { "reward, highest first" }
                    }
                }
                button #expand type="button" { "expand / fold shown" }
                span.muted { span #shown { (rows.len()) } " of " (rows.len()) " shown" }
                @if collected.rows_left_out > 0 {
                    span.muted #left-out data-left-out=(collected.rows_left_out) {
                        "; the table lists the " (rows.len()) " results that went worst (errored, "
                        "then penalised, then the lowest rewards), in file order; "
                        (collected.rows_left_out) " more results are counted above but not listed (--max-rows)" }
                }
            }
            table #samples data-rows=(rows.len()) {
                thead { tr { th { "sample" } th.num { "epoch" }
                    th.num.sortable #reward-heading title="sort by reward" { "reward" }
                    th { "grade" } } }
                tbody {
                    @for row in &rows {
                        (result_row(row, threshold))
                    }
                }
            }
        }
    }
}

fn result_row(row: &Row, threshold: f64) -> Markup {
    let subscores = row
        .result
        .as_ref()
        .and_then(|r| r.subscores.as_deref())
        .unwrap_or_default();
    let reward = match (&row.error, &row.result) {
        (None, Some(result)) => Some(result.reward()),
        _ => None,
    };
    let status = match reward {
        None => "errored",
        Some(reward) if reward < threshold => "failed",
        Some(_) => "passed",
    };
    let join = |keep: &dyn Fn(&SubScore) -> bool| {
        subscores
            .iter()
            .filter(|sub| keep(sub))
            .map(SubScore::name)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let names = join(&|_| true);
    let failed = join(&|sub| sub_failed(sub, threshold));
    let fired_names = join(&fired);
    let penalised = any_fired(subscores);
    html! {
        tr data-sample=(row.sample) data-epoch=(row.epoch)
            data-reward=(reward.map(|r| r.to_string()).unwrap_or_default())
            data-status=(status) data-penalised=[penalised.then_some("yes")]
            data-subscores=(names) data-failed=(failed) data-fired=(fired_names) {
            td { code { (row.sample) } }
            td.num { (row.epoch) }
            (reward_cell(reward, penalised))
            td { (grade_cell(row, subscores, threshold)) }
        }
    }
}

fn reward_cell(reward: Option<f64>, penalised: bool) -> Markup {
    match reward {
        Some(reward) => {
            let class = if reward >= 1.0 {
                "num pass"
            } else if reward <= 0.0 {
                "num fail"
            } else {
                "num mid"
            };
            html! { td class=(class) { (format!("{reward:.4}"))
            @if penalised { br; span.badge.fail { "penalised" } } } }
        }
        None => html! { td.num.fail { "error" } },
    }
}

fn grade_cell(row: &Row, subscores: &[SubScore], threshold: f64) -> Markup {
    html! {
        @if let Some(error) = &row.error {
            (text_block("error", error, None, true))
        }
        @if let Some(result) = &row.result {
            details {
                summary { (subscores.len()) " subscore(s)"
                    @if let Some(content) = &result.content { " — " (one_line(content, 200)) } }
                (info_view(&result.info))
                (tree(subscores, threshold))
            }
        }
    }
}

fn tree(subscores: &[SubScore], threshold: f64) -> Markup {
    html! {
        @if !subscores.is_empty() {
            ul.tree {
                @for sub in subscores {
                    @let penalty = sub.weight() < 0.0;
                    @let went_wrong = sub_failed(sub, threshold);
                    @let class = if penalty {
                        if fired(sub) { "fail" } else { "pass" }
                    } else {
                        value_class(sub.value())
                    };
                    li class=[fired(sub).then_some("penalty-fired")]
                        data-subscore=(sub.name()) data-weight=(sub.weight())
                        data-verdict=(if went_wrong { "fail" } else { "pass" }) {
                        span.sub-name { (sub.name()) }
                        " " span.muted { "weight " (weight_text(sub.weight())) " · value " }
                        span class=(class) { (format!("{:.4}", sub.value())) }
                        @if penalty {
                            @if fired(sub) {
                                span.badge.fail { "penalty fired" }
                            } @else {
                                span.badge.pass { "penalty not fired" }
                            }
                        }
                        @if let Some(info) = sub.info() { (info_view(info)) }
                        @if let Some(children) = sub.children() { (tree(children, threshold)) }
                    }
                }
            }
        }
    }
}

fn value_class(value: f64) -> &'static str {
    if value >= 1.0 {
        "pass"
    } else if value <= 0.0 {
        "fail"
    } else {
        "mid"
    }
}

/// Keys whose text is always shown as a block, however short.
const TEXT_KEYS: [&str; 7] = [
    "stdout",
    "stderr",
    "output",
    "reason",
    "explanation",
    "error",
    "message",
];

/// What an info object holds, flattened: `(path, value)` of each scalar, with the path of a
/// nested value joined by dots (`_parameters.command`, `votes.0.reason`).
fn flatten<'a>(prefix: &str, value: &'a Value, out: &mut Vec<(String, &'a Value)>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&path, item, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (index, item) in items.iter().enumerate() {
                flatten(&format!("{prefix}.{index}"), item, out);
            }
        }
        _ => out.push((prefix.to_owned(), value)),
    }
}

/// An info object as people read it: its texts (a command's output, a judge's reason) as
/// preformatted blocks, everything else as `key value` facts on one line.
fn info_view(info: &serde_json::Map<String, Value>) -> Markup {
    if info.is_empty() {
        return html! {};
    }
    let object = Value::Object(info.clone());
    let mut entries = Vec::new();
    flatten("", &object, &mut entries);
    let mut facts = Vec::new();
    let mut texts = Vec::new();
    for (path, value) in entries {
        let leaf = path.rsplit('.').next().unwrap_or(&path);
        match value {
            Value::String(text)
                if TEXT_KEYS.contains(&leaf)
                    || text.contains('\n')
                    || text.chars().count() > 80 =>
            {
                texts.push((path, text.as_str()));
            }
            // Shown beside their text.
            Value::Number(_)
                if leaf.ends_with("_dropped_bytes")
                    && info.contains_key(leaf.trim_end_matches("_dropped_bytes")) => {}
            _ => facts.push((path, value)),
        }
    }
    html! {
        @if !facts.is_empty() {
            div.facts {
                @for (path, value) in &facts {
                    span.fact { span.muted { (path) } " " code { (scalar_text(value)) } }
                }
            }
        }
        @for (path, text) in &texts {
            @let dropped = info
                .get(&format!("{path}_dropped_bytes"))
                .and_then(Value::as_u64);
            (text_block(path, text, dropped, path == "error"))
        }
    }
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(_) => "[]".to_owned(),
        Value::Object(_) => "{}".to_owned(),
        other => other.to_string(),
    }
}

/// A labelled preformatted text: whole when short, else its head and tail with what lies
/// between counted; `dropped` is what the grader's output budget dropped before it was
/// recorded.
fn text_block(label: &str, text: &str, dropped: Option<u64>, error: bool) -> Markup {
    let cut = excerpt(text);
    let lines = text.lines().count();
    html! {
        div.text.error[error] data-key=(label) data-bytes=(text.len())
            data-dropped-bytes=[dropped] {
            div.text-label {
                b { (label) } " · " (text.len()) " bytes"
                @if lines > 1 { ", " (lines) " lines" }
                @if let Some(dropped) = dropped {
                    " · " span.fail { (dropped) " bytes dropped by the grader's output budget" }
                }
            }
            @if text.is_empty() {
                pre.muted { "(empty)" }
            } @else if cut.tail.is_empty() {
                pre { (cut.head) }
            } @else {
                pre.head { (cut.head) }
                div.elided data-lines-left-out=(cut.lines_left_out) data-bytes-left-out=(cut.bytes_left_out) {
                    "⋯ " (cut.lines_left_out) " lines (" (cut.bytes_left_out) " bytes) not shown ⋯"
                }
                pre.tail { (cut.tail) }
            }
        }
    }
}

/// `text` on one line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let total = flat.chars().count();
    if total <= max {
        return flat;
    }
    let kept: String = flat.chars().take(max).collect();
    format!("{kept}… ({} more characters)", total - max)
}
