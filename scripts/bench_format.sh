#!/usr/bin/env bash
# Times the format checks and the JSON Schema checks on the same inputs in Rust (criterion,
# `grader_core::format` and `grader_core::json::JsonSchema`) and in their anchors, verifiers
# 0.3.1's parsers and Python's jsonschema 4.26.0 (timeit), back to back, and prints the medians
# and their ratio.
#
#     scripts/bench_format.sh      # VERIFIERS_PYTHON and JSONSCHEMA_PYTHON default to the venvs the tests make
#
# The venvs are made by the first runs of `cargo test -p grader-tests --test format_differential`
# and `--test json_schema_differential`.
set -euo pipefail
cd "$(dirname "$0")/.."

VERIFIERS_PYTHON="${VERIFIERS_PYTHON:-target/tmp/verifiers-venv/env/bin/python}"
JSONSCHEMA_PYTHON="${JSONSCHEMA_PYTHON:-target/tmp/jsonschema-venv/env/bin/python}"
for python in "$VERIFIERS_PYTHON" "$JSONSCHEMA_PYTHON"; do
    if [ ! -x "$python" ]; then
        echo "no venv at $python: run the differential tests first, or set VERIFIERS_PYTHON / JSONSCHEMA_PYTHON" >&2
        exit 1
    fi
done

cargo bench -p grader-core --bench format -- --noplot "$@"
cargo bench -p grader-core --features json-schema --bench json_schema -- --noplot "$@"

TIMING=$(cat <<'PY'
import json
import pathlib
import timeit


def report(group, cases):
    for name, call in cases:
        timer = timeit.Timer(call)
        loops, _ = timer.autorange()
        runs = sorted(timer.repeat(repeat=11, number=loops))
        python_ns = runs[len(runs) // 2] / loops * 1e9
        estimates = pathlib.Path(f"target/criterion/{group}/{name}/new/estimates.json")
        rust_ns = json.loads(estimates.read_text())["median"]["point_estimate"]
        print(f"{group + '/' + name:<28}{rust_ns / 1e3:>13.2f} µs{python_ns / 1e3:>15.2f} µs{python_ns / rust_ns:>15.1f}×")
PY
)

"$VERIFIERS_PYTHON" - <<PY
$TIMING
import importlib.util, logging, pathlib, sys
logging.disable(logging.WARNING)
sys.argv = ["format_cases.py"]
source = pathlib.Path("scripts/format_cases.py").read_text().split("cases = json.load")[0]
exec(source)
text = pathlib.Path("tests/data/inspect_completion.txt").read_text()
completion = f"<think>\n{text}\n</think>\n<answer>\nB\n</answer>"
messages = [{"role": "assistant", "content": completion}]
parser = XMLParser(["think", "answer"])
reward = parser.get_format_reward_func()
think = ThinkParser()
think_reward = think.get_format_reward_func()
print(f"{'function':<28}{'rust (median)':>16}{'python (median)':>18}{'python / rust':>16}")
report("format", [
    ("parse", lambda: parser.parse(completion)),
    ("parse_answer", lambda: parser.parse_answer(completion)),
    ("format_reward", lambda: reward(messages)),
    ("think_answer", lambda: think.parse(completion)),
    ("think_format_reward", lambda: think_reward(messages)),
])
PY

"$JSONSCHEMA_PYTHON" - <<PY
$TIMING
from jsonschema import validators
schema = json.loads(pathlib.Path("tests/data/bench_schema.json").read_text())
text = pathlib.Path("tests/data/bench.json").read_text()
document = json.loads(text)
cls = validators.validator_for(schema)
validator = cls(schema)


def compile_schema():
    cls.check_schema(schema)
    return cls(schema)


report("json_schema", [
    ("compile", compile_schema),
    ("is_valid", lambda: validator.is_valid(document)),
    ("matches_schema", lambda: validator.is_valid(json.loads(text))),
])
PY
