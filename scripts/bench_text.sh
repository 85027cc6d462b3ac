#!/usr/bin/env bash
# Times `normalize` and `f1_score` on the same 10 KB answers in Rust (criterion) and in the
# Python reference (timeit), back to back, and prints the medians and their ratio.
#
#     scripts/bench_text.sh            # PYTHON defaults to the reference venv the tests make
#
# The venv is made by the first run of the comparison tests (`cargo test -p grader-tests`);
# any interpreter with `hud==0.6.21` installed works: `PYTHON=/path/to/python scripts/bench_text.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-target/tmp/hud-venv/env/bin/python}"
if [ ! -x "$PYTHON" ]; then
    echo "no Python reference at $PYTHON: run 'cargo test -p grader-tests --test text_differential' first, or set PYTHON" >&2
    exit 1
fi

cargo bench -p grader-core --bench text -- --noplot "$@"

"$PYTHON" - <<'EOF'
import json
import pathlib
import timeit

from hud.graders import f1_score, normalize

data = pathlib.Path("tests/data")
reference = (data / "text_reference.txt").read_text()
print(f"{'case':<22}{'rust (median)':>16}{'python (median)':>18}{'python / rust':>16}")
for name in ("en", "mixed"):
    answer = (data / f"text_answer_{name}.txt").read_text()
    for helper, call in (
        ("normalize", lambda: normalize(answer)),
        ("f1_score", lambda: f1_score(answer, reference)),
    ):
        timer = timeit.Timer(call)
        loops, _ = timer.autorange()
        runs = sorted(timer.repeat(repeat=11, number=loops))
        python_ns = runs[len(runs) // 2] / loops * 1e9
        estimates = pathlib.Path(f"target/criterion/text/{helper}_{name}/new/estimates.json")
        rust_ns = json.loads(estimates.read_text())["median"]["point_estimate"]
        print(
            f"{helper + '/' + name:<22}{rust_ns / 1e3:>13.1f} µs{python_ns / 1e3:>15.1f} µs"
            f"{python_ns / rust_ns:>15.1f}×"
        )
EOF
