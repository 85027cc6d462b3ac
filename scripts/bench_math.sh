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
from math_verify import parser

logging.disable(logging.CRITICAL)


def cold(gold, answer):
    # math-verify keeps the last 20 parses in lru_caches; every completion of a training run
    # is new, so the caches are emptied before each comparison.
    parser.parse_latex_cached.cache_clear()
    parser.parse_expr_cached.cache_clear()
    parser.extract_latex.cache_clear()
    return verify(parse(gold), parse(answer))


def median_ns(call):
    timer = timeit.Timer(call)
    loops, _ = timer.autorange()
    runs = sorted(timer.repeat(repeat=7, number=loops))
    return runs[len(runs) // 2] / loops * 1e9


pairs = json.loads(pathlib.Path("tests/data/math_bench_pairs.json").read_text())
print(f"{'pair':<10}{'rust':>12}{'python (cold)':>16}{'ratio':>9}{'python (cached)':>18}{'ratio':>9}")
for name, gold, answer in pairs:
    assert cold(gold, answer), name
    cold_ns = median_ns(lambda: cold(gold, answer))
    cached_ns = median_ns(lambda: verify(parse(gold), parse(answer)))
    estimates = pathlib.Path(f"target/criterion/math/{name}/new/estimates.json")
    rust_ns = json.loads(estimates.read_text())["median"]["point_estimate"]
    print(
        f"{name:<10}{rust_ns / 1e3:>9.2f} µs{cold_ns / 1e3:>13.0f} µs{cold_ns / rust_ns:>8.0f}×"
        f"{cached_ns / 1e3:>15.0f} µs{cached_ns / rust_ns:>8.0f}×"
    )

# The eight pairs together under each configuration, against math-verify's defaults.
print()
print(f"{'configuration':<14}{'rust, 8 pairs':>16}{'vs defaults':>13}")
base = None
for name in ("math_verify", "parity", "trl", "open_r1", "verl"):
    estimates = pathlib.Path(f"target/criterion/math_configs/{name}/new/estimates.json")
    rust_ns = json.loads(estimates.read_text())["median"]["point_estimate"]
    base = base or rust_ns
    print(f"{name:<14}{rust_ns / 1e3:>13.2f} µs{rust_ns / base:>12.2f}×")
PY
