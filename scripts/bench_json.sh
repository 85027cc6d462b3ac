#!/usr/bin/env bash
# Times the JSON checks on the same inputs in Rust (criterion, `grader_core::json`) and in Node
# (`JSON.parse`; promptfoo's `extractJsonObjects` search, which parses every prefix from each
# `{`; a key-order-free comparison after `JSON.parse`), back to back, and prints the medians and
# their ratio.
#
#     scripts/bench_json.sh
set -euo pipefail
cd "$(dirname "$0")/.."

cargo bench -p grader-core --bench json -- --noplot "$@"

node - <<'JS'
"use strict";
const fs = require("fs");
const doc = fs.readFileSync("tests/data/bench.json", "utf8");
const prose = `Here is the result you asked for:\n\n${doc}\n\nLet me know.`;
const expected = JSON.parse(doc);

function objects(str) {
  const found = [];
  for (let i = 0; i < str.length; i++) {
    if (str[i] !== "{") continue;
    for (let j = i + 1; j <= Math.min(i + 100000, str.length); j++) {
      try {
        found.push(JSON.parse(str.slice(i, j)));
        i = j - 1;
        break;
      } catch {}
    }
  }
  return found;
}
function same(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && same(a[k], b[k]));
  }
  return a === b;
}
function median(f) {
  let loops = 1;
  for (;;) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < loops; i++) f();
    if (Number(process.hrtime.bigint() - t) > 2e8) break;
    loops *= 2;
  }
  const runs = [];
  for (let r = 0; r < 11; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < loops; i++) f();
    runs.push(Number(process.hrtime.bigint() - t) / loops);
  }
  return runs.sort((x, y) => x - y)[5];
}
const cases = [
  ["is_json", () => { try { JSON.parse(doc); return true; } catch { return false; } }],
  ["contains_json", () => objects(prose).length > 0],
  ["json_equals", () => same(JSON.parse(doc), expected)],
];
console.log("check".padEnd(16) + "rust (median)".padStart(16) + "node (median)".padStart(16) + "node / rust".padStart(14));
for (const [name, f] of cases) {
  const node = median(f);
  const est = JSON.parse(fs.readFileSync(`target/criterion/json/${name}/new/estimates.json`, "utf8"));
  const rust = est.median.point_estimate;
  console.log(name.padEnd(16) + `${(rust / 1e3).toFixed(2)} µs`.padStart(16) + `${(node / 1e3).toFixed(2)} µs`.padStart(16) + `${(node / rust).toFixed(1)}×`.padStart(14));
}
JS
