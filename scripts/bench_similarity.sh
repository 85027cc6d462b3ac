#!/usr/bin/env bash
# Times the similarities on the same inputs in Rust (criterion, `grader_core::similarity`) and
# in rapidfuzz 3.14.3, rouge-score 0.1.2 and sacrebleu 2.5.1 (timeit), back to back, and prints
# the medians and their ratio.
#
#     scripts/bench_similarity.sh      # PYTHON defaults to the similarity venv the tests make
#
# The venv is made by the first run of `cargo test -p grader-tests --test similarity_differential`.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-target/tmp/similarity-venv/env/bin/python}"
if [ ! -x "$PYTHON" ]; then
    echo "no similarity venv at $PYTHON: run 'cargo test -p grader-tests --test similarity_differential' first, or set PYTHON" >&2
    exit 1
fi

cargo bench -p grader-core --bench similarity -- --noplot "$@"

"$PYTHON" - <<'PY'
import json
import pathlib
import timeit

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein
from rouge_score import rouge_scorer
from sacrebleu import sentence_bleu, sentence_chrf

a = pathlib.Path("tests/data/inspect_completion.txt").read_text()
b = a.replace("plausible", "likely").replace("total", "sum")
scorers = {k: rouge_scorer.RougeScorer([k]) for k in ("rouge1", "rouge2", "rougeL")}
CASES = [
    ("levenshtein", lambda: Levenshtein.distance(a, b)),
    ("ratio", lambda: fuzz.ratio(a, b)),
    ("rouge_1", lambda: scorers["rouge1"].score(a, b)),
    ("rouge_2", lambda: scorers["rouge2"].score(a, b)),
    ("rouge_l", lambda: scorers["rougeL"].score(a, b)),
    ("bleu", lambda: sentence_bleu(b, [a])),
    ("chrf", lambda: sentence_chrf(b, [a])),
]
print(f"{'function':<14}{'rust (median)':>16}{'python (median)':>18}{'python / rust':>16}")
for name, call in CASES:
    timer = timeit.Timer(call)
    loops, _ = timer.autorange()
    runs = sorted(timer.repeat(repeat=11, number=loops))
    python_ns = runs[len(runs) // 2] / loops * 1e9
    estimates = pathlib.Path(f"target/criterion/similarity/{name}/new/estimates.json")
    rust_ns = json.loads(estimates.read_text())["median"]["point_estimate"]
    print(f"{name:<14}{rust_ns / 1e3:>13.2f} µs{python_ns / 1e3:>15.2f} µs{python_ns / rust_ns:>15.2f}×")

# The Levenshtein distance of long texts: the 3 KB text repeated to n characters, against the
# same edit (similar) and against itself reversed (different), as benches/similarity.rs.
print()
print(f"{'levenshtein':<18}{'rust (median)':>16}{'rapidfuzz (median)':>20}{'rapidfuzz / rust':>18}")
for n in (2_000, 30_000, 100_000):
    long = (a * (n // len(a) + 1))[:n]
    for kind, other in (
        ("similar", long.replace("plausible", "likely").replace("total", "sum")),
        ("different", long[::-1]),
    ):
        timer = timeit.Timer(lambda: Levenshtein.distance(long, other))
        loops, _ = timer.autorange()
        runs = sorted(timer.repeat(repeat=5, number=loops))
        python_ns = runs[len(runs) // 2] / loops * 1e9
        name = f"{kind}_{n}"
        estimates = pathlib.Path(f"target/criterion/levenshtein_long/{name}/new/estimates.json")
        rust_ns = json.loads(estimates.read_text())["median"]["point_estimate"]
        print(f"{name:<18}{rust_ns / 1e6:>13.3f} ms{python_ns / 1e6:>17.3f} ms{python_ns / rust_ns:>17.2f}×")
PY
