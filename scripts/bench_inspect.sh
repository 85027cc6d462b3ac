#!/usr/bin/env bash
# Times Inspect AI's scorers on the same inputs in Rust (criterion, `grader_core::inspect`) and
# in Inspect 0.3.285 itself (its scorer coroutines, timeit), back to back, and prints the
# medians and their ratio.
#
#     scripts/bench_inspect.sh         # PYTHON defaults to the Inspect venv the tests make
#
# The venv is made by the first run of `cargo test -p grader-tests --test inspect_differential`;
# any interpreter with `inspect-ai==0.3.285` works: `PYTHON=/path/to/python scripts/bench_inspect.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-target/tmp/inspect-venv/env/bin/python}"
if [ ! -x "$PYTHON" ]; then
    echo "no Inspect venv at $PYTHON: run 'cargo test -p grader-tests --test inspect_differential' first, or set PYTHON" >&2
    exit 1
fi

cargo bench -p grader-core --features pattern --bench inspect -- --noplot "$@"

"$PYTHON" - <<'PY'
import asyncio
import json
import pathlib
import time
from types import SimpleNamespace

from inspect_ai.scorer import Target, answer, exact, f1, includes, match, pattern, choice
from inspect_ai.solver._multiple_choice import parse_answers, set_choices_based_on_generated_response
from inspect_ai.solver._task_state import Choices

data = pathlib.Path("tests/data")
completion = (data / "inspect_completion.txt").read_text()
long_answer = (data / "text_answer_en.txt").read_text()
reference = (data / "text_reference.txt").read_text()


def state(text, choices=None):
    return SimpleNamespace(output=SimpleNamespace(completion=text), choices=choices)


async def choice_once(scorer, target):
    # The multiple_choice solver's reading of the completion, then the scorer: what the Rust
    # `choice` does in one call.
    s = state(completion, Choices(["a", "b", "c", "d"]))
    answers = parse_answers(s, False)
    if answers:
        set_choices_based_on_generated_response(s, answers)
    return await scorer(s, target)


CASES = [
    ("match_numeric", match("end", numeric=True), completion, ["1888"]),
    ("match_text", match(), completion, ["b"]),
    ("includes", includes(), completion, ["best option is b"]),
    ("answer_letter", answer("letter"), completion, ["B"]),
    ("answer_word", answer("word"), completion, ["B"]),
    ("answer_line", answer("line"), completion, ["B"]),
    ("pattern", pattern(r"ANSWER\s*:\s*(\w+)"), completion, ["B"]),
    ("choice", choice(), completion, ["B"]),
    ("exact", exact(), long_answer, [reference]),
    ("f1", f1(), long_answer, [reference]),
]


async def median_ns(name, scorer, text, targets):
    target = Target(targets)
    s = state(text)
    once = (lambda: choice_once(scorer, target)) if name == "choice" else (lambda: scorer(s, target))
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            await once()
        if time.perf_counter() - start > 0.2:
            break
        loops *= 2
    runs = []
    for _ in range(11):
        start = time.perf_counter()
        for _ in range(loops):
            await once()
        runs.append((time.perf_counter() - start) / loops * 1e9)
    return sorted(runs)[len(runs) // 2]


async def main():
    print(f"{'scorer':<16}{'rust (median)':>16}{'python (median)':>18}{'python / rust':>16}")
    for name, scorer, text, targets in CASES:
        python_ns = await median_ns(name, scorer, text, targets)
        estimates = pathlib.Path(f"target/criterion/inspect/{name}/new/estimates.json")
        rust_ns = json.loads(estimates.read_text())["median"]["point_estimate"]
        print(f"{name:<16}{rust_ns / 1e3:>13.2f} µs{python_ns / 1e3:>15.2f} µs{python_ns / rust_ns:>15.1f}×")


asyncio.run(main())
PY
