//! The HTML rendering: the page drawn from its data with `maud`, which escapes every
//! interpolated string: the summary, the histogram of rewards, the subscore table, the error
//! groups and the results table with each result's grade tree and texts.

use std::path::PathBuf;

use grader_core::SubScore;
use grader_core::report::subscore_reason;
use grader_eval::Summary;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use serde_json::Value;

use super::args::ReportArgs;
use super::assets::{SCRIPT, STYLE, content_security_policy};
use super::data::{Collected, ErrorGroup, Row, any_fired, fired, sub_failed};
use super::excerpt::excerpt;
use super::why::{self, weight_text};

/// The page.
pub(super) fn render(
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
                        @if summary.duplicates > 0 { ", " (summary.duplicates) " duplicate lines left out" }
                    } }
                    @if let Some(conflicts) = summary.conflicts_text() {
                        tr { th { "conflicts" } td #conflicts data-conflicts=(summary.conflicts) {
                            (conflicts) } }
                    }
                    tr { th { "mean (" (summary.options.reducer.to_string()) ")" }
                        td #mean data-mean=(stats.mean) {
                            (format!("{:.4} ± {:.4} (stderr), std {:.4}, n = {}",
                                stats.mean, stats.stderr, stats.std, stats.n)) } }
                    tr { th { (level) "% CI" }
                        td { (format!("bootstrap [{:.4}, {:.4}], t [{:.4}, {:.4}]",
                            stats.ci_bootstrap.lower, stats.ci_bootstrap.upper,
                            stats.ci_t.lower, stats.ci_t.upper)) } }
                    tr { th { (summary.pass_rate_label()) }
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
                p.muted { "A subscore passes at or above " (threshold) "; a penalty (negative weight) "
                    "counts against the reward when it fires (value above 0), and its row says how "
                    "often it fired. The mean is per sample (each sample's scored epochs averaged "
                    "first, as the summary, diff and Inspect AI give it); the rates are over the results." }
                table {
                    thead { tr { th { "subscore" } th.num { "weight" } th.num { "results" }
                        th.num title="each sample's scored epochs averaged, then the mean over the samples: as the summary, diff and Inspect AI give it" { "mean per sample" }
                        th.num { "pass rate of results (≥ " (threshold) ") / fired rate" }
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
    let texts = [
        ("input", row.texts.input.as_deref()),
        ("target", row.texts.target.as_deref()),
        ("answer", row.texts.answer.as_deref()),
    ];
    let held: Vec<(&str, &str)> = texts
        .iter()
        .filter_map(|(label, text)| Some((*label, (*text)?)))
        .collect();
    html! {
        @if let Some(error) = &row.error {
            (text_block("error", error, None, true))
        }
        @if !held.is_empty() {
            details.sample-texts {
                summary {
                    @for (at, (label, _)) in held.iter().enumerate() {
                        @if at > 0 { ", " }
                        (label)
                    }
                    @if let Some((_, first)) = held.first() {
                        span.muted { " — " (one_line(first, 120)) }
                    }
                }
                @for (label, text) in &held {
                    (text_block(label, text, None, false))
                }
            }
        }
        @if let Some(result) = &row.result {
            @let wrong = why::wrong(subscores, threshold);
            details {
                summary {
                    @if wrong.is_empty() {
                        @if subscores.is_empty() { "no subscores" }
                        @else { (subscores.len()) " subscore(s), none failed" }
                    } @else {
                        @for (at, item) in wrong.iter().take(why::NAMED).enumerate() {
                            @if at > 0 { " · " }
                            span.fail.sub-name { (item.name) } ": " span.why { (item.why) }
                        }
                        @if wrong.len() > why::NAMED {
                            " · and " (wrong.len() - why::NAMED) " more failed"
                        }
                        span.muted { " (" (subscores.len()) " subscore(s))" }
                    }
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
                        @if let Some(why) = subscore_reason(sub) { " " span.why.muted { (why) } }
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
