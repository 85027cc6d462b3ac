//! `grader report`: one self-contained static HTML page of an evaluation.
//!
//! The page has the summary (grader-core's), a histogram of the scored rewards (inline SVG),
//! each top-level subscore's mean and pass rate, the errored results apart, and a table of the
//! results whose grade trees expand in place (`<details>`). It loads nothing: no network, no
//! external file; its content security policy allows only its own inline style and the one
//! inline script (by hash), which filters the table and expands or folds every tree.
//!
//! Everything from the files is escaped: the page is built with `maud`, which escapes every
//! interpolated string, and nothing from the files is ever inserted unescaped. Long texts in
//! `info` (a command's output) are cut to [`INFO_CHARS`] characters so the page stays small.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::PathBuf;

use base64::Engine as _;
use grader_core::eval::{Summary, SummaryBuilder};
use grader_core::{EvaluationResult, SubScore};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde_json::Value;
use sha2::Digest as _;

use crate::records::{self, Record};
use crate::summary::SummaryFlags;
use crate::{CliError, EXIT_OK};

/// The longest text shown for one subscore's info, in characters.
pub const INFO_CHARS: usize = 4000;

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
    /// List at most this many results in the table, and as many errors (the summary and the
    /// histogram count all).
    #[arg(long, default_value_t = 5000)]
    pub max_rows: usize,
    /// How the summary is computed; `--threshold` is also what a subscore must reach to pass.
    #[command(flatten)]
    pub flags: SummaryFlags,
}

/// What the page is made from, gathered in one pass over the files.
#[derive(Debug, Default)]
pub struct Collected {
    /// Scored rewards, one per scored result.
    pub rewards: Vec<f64>,
    /// Per top-level subscore: (results that have it, how many pass, sum of values).
    pub subscores: BTreeMap<String, (usize, usize, f64)>,
    /// Errored results: (sample, epoch, why), up to the limit.
    pub errors: Vec<(String, u32, String)>,
    /// Errored results not listed because of the limit.
    pub errors_left_out: usize,
    /// The table's rows, in file order, up to the limit.
    pub rows: Vec<Row>,
    /// Results not in the table because of the limit.
    pub rows_left_out: usize,
}

/// One row of the results table.
#[derive(Debug)]
pub struct Row {
    /// The sample.
    pub sample: String,
    /// The epoch.
    pub epoch: u32,
    /// The result, if any.
    pub result: Option<EvaluationResult>,
    /// Why it has no reward, if it has none.
    pub error: Option<String>,
}

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
    Ok((builder.finish(), collected))
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
                let stat = collected
                    .subscores
                    .entry(sub.name().to_owned())
                    .or_default();
                stat.0 += 1;
                stat.1 += usize::from(sub.value() >= threshold);
                stat.2 += sub.value();
            }
        }
        None if collected.errors.len() < max_rows => collected.errors.push((
            id.to_owned(),
            epoch,
            error.clone().unwrap_or_else(|| "no result".to_owned()),
        )),
        None => collected.errors_left_out += 1,
    }
    if collected.rows.len() < max_rows {
        collected.rows.push(Row {
            sample: id.to_owned(),
            epoch,
            result: record.result.clone(),
            error,
        });
    } else {
        collected.rows_left_out += 1;
    }
}

/// The page's own style.
const STYLE: &str = r#"
:root { color-scheme: light dark; --fg: #1d1f21; --bg: #fff; --muted: #667; --line: #dde;
  --bar: #3b82f6; --pass: #15803d; --fail: #b91c1c; --mid: #b45309; }
@media (prefers-color-scheme: dark) { :root { --fg: #e5e7eb; --bg: #111318; --muted: #9aa;
  --line: #2a2f3a; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  margin: 2rem auto; max-width: 1100px; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.muted { color: var(--muted); } code, pre { font-family: ui-monospace, monospace; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line);
  vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: var(--pass); } .fail { color: var(--fail); } .mid { color: var(--mid); }
.meter { display: inline-block; width: 120px; height: 8px; background: var(--line);
  vertical-align: middle; } .meter > span { display: block; height: 100%; background: var(--bar); }
pre { white-space: pre-wrap; word-break: break-word; margin: .25rem 0; max-height: 20rem;
  overflow: auto; background: color-mix(in srgb, var(--line) 40%, transparent); padding: .4rem; }
ul.tree { list-style: none; padding-left: 1.1rem; margin: .2rem 0; }
ul.tree li { margin: .15rem 0; } .sub-name { font-weight: 600; }
svg text { fill: var(--fg); font-size: 11px; } svg rect.bar { fill: var(--bar); }
#filter { padding: .3rem .5rem; width: 18rem; margin-right: .5rem; }
#script-errors { color: var(--fail); }
"#;

/// The page's one script: filtering the table and expanding every tree. It marks the page
/// ready when it has run, and shows any script error on the page.
const SCRIPT: &str = r##"
(function () {
  "use strict";
  var errors = document.getElementById("script-errors");
  window.addEventListener("error", function (event) {
    errors.hidden = false;
    errors.textContent += String(event.message) + "\n";
  });
  var filter = document.getElementById("filter");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#samples tbody tr"));
  var shown = document.getElementById("shown");
  function apply() {
    var needle = filter.value.toLowerCase();
    var count = 0;
    rows.forEach(function (row) {
      var match = row.getAttribute("data-sample").toLowerCase().indexOf(needle) !== -1;
      row.hidden = !match;
      if (match) { count += 1; }
    });
    shown.textContent = String(count);
  }
  filter.addEventListener("input", apply);
  document.getElementById("expand").addEventListener("click", function () {
    var details = document.querySelectorAll("#samples details");
    var open = !Array.prototype.every.call(details, function (d) { return d.open; });
    Array.prototype.forEach.call(details, function (d) { d.open = open; });
  });
  apply();
  document.documentElement.setAttribute("data-ready", "yes");
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
                (error_section(&collected.errors, collected.errors_left_out))
                (sample_section(collected))
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

fn subscore_section(summary: &Summary, collected: &Collected, threshold: f64) -> Markup {
    html! {
        section #subscores {
            h2 { "Subscores" }
            @if collected.subscores.is_empty() {
                p.muted { "No scored result has subscores." }
            } @else {
                table {
                    thead { tr { th { "subscore" } th.num { "results" } th.num { "mean" }
                        th.num { "pass rate (≥ " (threshold) ")" } th {} } }
                    tbody {
                        @for (name, (count, passed, _)) in &collected.subscores {
                            @let rate = *passed as f64 / (*count).max(1) as f64;
                            @let mean = summary.subscores.get(name).map_or(f64::NAN, |s| s.mean);
                            tr data-subscore=(name) {
                                td { (name) }
                                td.num { (count) }
                                td.num { (format!("{mean:.4}")) }
                                td.num data-pass-rate=(rate) { (format!("{rate:.4}")) }
                                td { span.meter { span style=(format!("width: {:.1}%", rate * 100.0)) {} } }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn error_section(errors: &[(String, u32, String)], left_out: usize) -> Markup {
    let total = errors.len() + left_out;
    html! {
        section #errors data-errors=(total) {
            h2 { "Errors (" (total) ")" }
            @if errors.is_empty() {
                p.muted { "No result errored." }
            } @else {
                p.muted { "Counted apart: an errored result is never averaged in as 0."
                    @if left_out > 0 { " The first " (errors.len()) " are listed (--max-rows)." } }
                table {
                    thead { tr { th { "sample" } th.num { "epoch" } th { "why" } } }
                    tbody {
                        @for (sample, epoch, why) in errors {
                            tr { td { code { (sample) } } td.num { (epoch) }
                                td { pre { (cut(why, INFO_CHARS)) } } }
                        }
                    }
                }
            }
        }
    }
}

fn sample_section(collected: &Collected) -> Markup {
    let rows = &collected.rows;
    html! {
        section {
            h2 { "Results" }
            p {
                input #filter type="search" placeholder="filter by sample id" aria-label="filter by sample id";
                button #expand type="button" { "expand / fold all" }
                " " span.muted { span #shown { (rows.len()) } " of " (rows.len()) " shown" }
                @if collected.rows_left_out > 0 {
                    span.muted { "; " (collected.rows_left_out) " more results not in the table (--max-rows)" }
                }
            }
            table #samples data-rows=(rows.len()) {
                thead { tr { th { "sample" } th.num { "epoch" } th.num { "reward" } th { "grade" } } }
                tbody {
                    @for row in rows {
                        tr data-sample=(row.sample) {
                            td { code { (row.sample) } }
                            td.num { (row.epoch) }
                            (reward_cell(row))
                            td { (grade_cell(row)) }
                        }
                    }
                }
            }
        }
    }
}

fn reward_cell(row: &Row) -> Markup {
    match (&row.error, &row.result) {
        (None, Some(result)) => {
            let class = if result.reward() >= 1.0 {
                "num pass"
            } else if result.reward() <= 0.0 {
                "num fail"
            } else {
                "num mid"
            };
            html! { td class=(class) { (format!("{:.4}", result.reward())) } }
        }
        _ => html! { td.num.fail { "error" } },
    }
}

fn grade_cell(row: &Row) -> Markup {
    let subscores = row
        .result
        .as_ref()
        .and_then(|r| r.subscores.as_deref())
        .unwrap_or_default();
    html! {
        @if let Some(error) = &row.error {
            pre.fail { (cut(error, INFO_CHARS)) }
        }
        @if let Some(result) = &row.result {
            details {
                summary { (subscores.len()) " subscore(s)"
                    @if let Some(content) = &result.content { " — " (cut(content, 200)) } }
                @if !result.info.is_empty() {
                    pre { (info_text(&result.info)) }
                }
                (tree(subscores))
            }
        }
    }
}

fn tree(subscores: &[SubScore]) -> Markup {
    html! {
        @if !subscores.is_empty() {
            ul.tree {
                @for sub in subscores {
                    li {
                        span.sub-name { (sub.name()) }
                        " " span.muted { "weight " (format!("{:.4}", sub.weight())) " · value " }
                        span class=(value_class(sub.value())) { (format!("{:.4}", sub.value())) }
                        @if let Some(info) = sub.info().filter(|i| !i.is_empty()) {
                            details { summary.muted { "info" } pre { (info_text(info)) } }
                        }
                        @if let Some(children) = sub.children() { (tree(children)) }
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

/// An info object as pretty JSON, each long string cut.
fn info_text(info: &serde_json::Map<String, Value>) -> String {
    fn shorten(value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(cut(text, INFO_CHARS)),
            Value::Array(items) => Value::Array(items.iter().map(shorten).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, item)| (key.clone(), shorten(item)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    let short = shorten(&Value::Object(info.clone()));
    serde_json::to_string_pretty(&short).unwrap_or_else(|error| error.to_string())
}

/// `text` cut to `max` characters, saying how much was left out.
fn cut(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}… ({} more characters)", total - max)
}
