#!/usr/bin/env bash
# The cost of depending on grader-core: a clean debug `cargo build` of a tiny crate with one
# #[grader] (grader-core with its default features) against the same crate depending only on
# serde (derive) and serde_json, the floor any crate that writes JSON pays. CPU seconds (user +
# system, GNU time), each build from an empty target directory, the two alternating RUNS times;
# then `cargo build --timings` of the grader crate lists where the time goes (the HTML report is
# left under target/compile-floor/grader/target/cargo-timings/).
#
# Usage: benches/compile/floor.sh [RUNS=3] [FEATURES]
#   FEATURES: grader-core features to add to its defaults, comma-separated, e.g. "bash" for
#   BashGrader.
set -euo pipefail

runs=${1:-3}
features=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/target/compile-floor"
mkdir -p "$out/grader/src" "$out/floor/src"

if [ -z "$features" ]; then
    core="grader-core = { path = \"$root/grader-core\" }"
else
    list=$(printf '"%s", ' ${features//,/ })
    core="grader-core = { path = \"$root/grader-core\", features = [${list%, }] }"
fi
cat > "$out/grader/Cargo.toml" <<TOML
[package]
name = "floor-grader"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
$core

[workspace]
TOML
cat > "$out/grader/src/main.rs" <<'RS'
use grader_core::grader;

/// Passes when the answer names the expected word.
#[grader]
fn names(answer: &str, word: &str) -> bool {
    answer.contains(word)
}

fn main() {
    let subscore = Names { answer: "forty-two", word: "two" }.grade(1.0).now();
    println!("{subscore:?}");
}
RS
cat > "$out/floor/Cargo.toml" <<'TOML'
[package]
name = "floor-serde"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
serde = { version = "1", features = ["derive"] }
serde_json = "1"

[workspace]
TOML
cat > "$out/floor/src/main.rs" <<'RS'
use serde::Serialize;

/// The same check's result, written as JSON by hand.
#[derive(Serialize)]
struct Names<'a> {
    answer: &'a str,
    word: &'a str,
    value: f64,
}

fn main() {
    let (answer, word) = ("forty-two", "two");
    let value = if answer.contains(word) { 1.0 } else { 0.0 };
    println!("{}", serde_json::to_string(&Names { answer, word, value }).unwrap_or_default());
}
RS
# Both resolve the same versions as the workspace, so neither gets newer crates than the other.
cp "$root/Cargo.lock" "$out/grader/Cargo.lock"
cp "$root/Cargo.lock" "$out/floor/Cargo.lock"

cpu() {
    local dir=$1
    rm -rf "$dir/target"
    /usr/bin/time -f "%U %S" -o "$out/time" cargo build --quiet --offline --manifest-path "$dir/Cargo.toml" \
        || /usr/bin/time -f "%U %S" -o "$out/time" cargo build --quiet --manifest-path "$dir/Cargo.toml"
    awk '{ printf "%.1f", $1 + $2 }' "$out/time"
}

echo "| run | floor (serde + serde_json) CPU s | one #[grader] (default${features:+ + $features}) CPU s | ratio |"
echo "|---|---|---|---|"
for run in $(seq 1 "$runs"); do
    floor=$(cpu "$out/floor")
    grader=$(cpu "$out/grader")
    echo "| $run | $floor | $grader | $(awk -v a="$grader" -v b="$floor" 'BEGIN { printf "%.2f", a / b }') |"
done

rm -rf "$out/grader/target"
cargo build --quiet --offline --timings --manifest-path "$out/grader/Cargo.toml" 2>/dev/null \
    || cargo build --quiet --timings --manifest-path "$out/grader/Cargo.toml"
report=$(ls -t "$out/grader/target/cargo-timings/"cargo-timing-*.html | head -1)
echo
echo "Slowest units (seconds, from $report):"
python3 - "$report" <<'PY'
import json, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);\n", text, re.S).group(1))
for unit in sorted(units, key=lambda u: -u["duration"])[:12]:
    print(f"  {unit['duration']:6.1f}  {unit['name']} {unit['version']} {unit.get('target', '').strip()}")
PY
