//! The page's own style and its one script, and the content security policy that allows
//! them and nothing else.

use base64::Engine as _;
use sha2::Digest as _;

/// The page's own style.
pub(super) const STYLE: &str = r#"
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
pub(super) const SCRIPT: &str = r##"
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
pub(super) fn content_security_policy() -> String {
    let hash = sha2::Sha256::digest(SCRIPT.as_bytes());
    let hash = base64::engine::general_purpose::STANDARD.encode(hash);
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{hash}'; \
         img-src data:; base-uri 'none'; form-action 'none'"
    )
}
