#!/usr/bin/env bash
# Times math answers on the same pairs in Rust (criterion, `grader_core::math::verify`) and in
# math-verify 0.9.0 (`verify(parse(gold), parse(answer))`, timeit), back to back, and prints the
# medians and their ratio.
#
#     scripts/bench_math.sh      # PYTHON defaults to the math venv the tests make
#
# The venv is made by the first run of `cargo test -p grader-tests --test math_differential`.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-target/tmp/math-venv/env/bin/python}"
if [ ! -x "$PYTHON" ]; then
    echo "no math venv at $PYTHON: run 'cargo test -p grader-tests --test math_differential' first, or set PYTHON" >&2
    exit 1
fi

cargo bench -p grader-core --features math --bench math -- --noplot "$@"

"$PYTHON" - <<'PY'
import json
import logging
import pathlib
import timeit

from math_verify import parse, verify

logging.disable(logging.CRITICAL)
pairs = json.loads(pathlib.Path("tests/data/math_bench_pairs.json").read_text())
print(f"{'pair':<10}{'rust (median)':>16}{'python (median)':>18}{'python / rust':>16}")
for name, gold, answer in pairs:
    assert verify(parse(gold), parse(answer)), name
    timer = timeit.Timer(lambda: verify(parse(gold), parse(answer)))
    loops, _ = timer.autorange()
    runs = sorted(timer.repeat(repeat=7, number=loops))
    python_ns = runs[len(runs) // 2] / loops * 1e9
    estimates = pathlib.Path(f"target/criterion/math/{name}/new/estimates.json")
    rust_ns = json.loads(estimates.read_text())["median"]["point_estimate"]
    print(f"{name:<10}{rust_ns / 1e3:>13.2f} µs{python_ns / 1e3:>15.1f} µs{python_ns / rust_ns:>15.0f}×")
PY
