#!/usr/bin/env python3
"""End-to-end evaluation benchmark: this project against the same work in Python, in one run.

Usage (from the repository root):  python3 benches/eval/run.py [SAMPLES ...]

Both sides grade the same question-answer samples (10 000 and 100 000 by default) with four
text graders (exact_match, numeric_match, contains_any, f1_score, weights 0.4/0.3/0.1/0.2),
combine them into a result, and append one JSON line per sample to a fresh file, flushed
after each line:

- Rust: `eval-bench` (tests/src/bin/eval-bench.rs), an `Evaluation` with the text graders,
  built with `--release`, on a current-thread runtime (one core); and the same program with
  mimalloc as the global allocator (`eval-bench-mimalloc`, feature `mimalloc` of
  grader-tests), since a quarter of the cost is the system allocator's, which an
  application may choose to replace.
- Python: the reference's helpers (`hud.graders` of hud==0.6.21: the text functions,
  `SubScore` and `_combine_subscores`) and `json.dumps` lines, in a plain loop.

A second table sets the Rust side against the graders alone: the same samples graded in a
plain loop with nothing written (`eval-bench OUT N plain`), the floor under any runner that
writes their lines; both sides' CPU there is their one thread's, in nanoseconds.

Both files are checked to hold the same reward for every sample. Each times itself from the first sample to the last line written, in wall seconds and in CPU
seconds of its own process (Python's `time.process_time`, Linux's `/proc/self/stat` for
Rust), so imports and start-up are left out; each runs under `/usr/bin/time -v` for its peak
RSS. The Rust side, a fraction of a second, runs three times and the run with the least CPU
is reported. On a busy machine the CPU ratio is the steadier one. The Python interpreter defaults to the reference venv the
tests make (`cargo test -p grader-tests --test text_differential`); set PYTHON to use another
with hud==0.6.21 installed.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
PYTHON = Path(os.environ.get("PYTHON", TARGET / "tmp" / "hud-venv" / "env" / "bin" / "python"))
RUST = {
    "system": TARGET / "release" / "eval-bench",
    "mimalloc": TARGET / "release" / "eval-bench-mimalloc",
}

PY_SIDE = r'''
import json, sys, time, warnings
warnings.filterwarnings("ignore")
from hud.graders import SubScore, _combine_subscores, contains_any, exact_match, f1_score, numeric_match

output, samples = sys.argv[1], int(sys.argv[2])

def sample(i):
    number = float(i * 13 % 97)
    # Rust's `{}` prints a whole f64 without ".0": the same texts on both sides.
    reference = f"There are {int(number)} marbles in the jar"
    kind = i % 5
    if kind in (0, 1):
        answer = reference
    elif kind == 2:
        answer = f"I counted {int(number)} marbles."
    elif kind == 3:
        answer = f"about {int(number) + 1} marbles"
    else:
        answer = "I cannot tell from the picture"
    return answer, reference, number

started = time.perf_counter()
cpu_started = time.process_time()
with open(output, "w") as f:
    for i in range(samples):
        t0 = time.perf_counter()
        answer, reference, number = sample(i)
        subs = [
            SubScore(name="exact_match", weight=0.4,
                     value=exact_match(answer, reference, normalize_text=True),
                     info={"_parameters": {"answer": answer, "expected": reference, "normalize_text": True}}),
            SubScore(name="numeric_match", weight=0.3,
                     value=numeric_match(answer, number, tolerance=0.0),
                     info={"_parameters": {"answer": answer, "expected": number, "tolerance": 0.0}}),
            SubScore(name="contains_any", weight=0.1,
                     value=contains_any(answer, ["marble", "marbles"], case_sensitive=False),
                     info={"_parameters": {"answer": answer, "substrings": ["marble", "marbles"], "case_sensitive": False}}),
            SubScore(name="f1_score", weight=0.2,
                     value=f1_score(answer, reference),
                     info={"_parameters": {"answer": answer, "reference": reference}}),
        ]
        result = _combine_subscores(subs)
        line = {"v": 1, "id": str(i), "epoch": 1, "duration_secs": time.perf_counter() - t0,
                "error": None, "result": result.model_dump(mode="json", by_alias=True)}
        f.write(json.dumps(line) + "\n")
        f.flush()
print(json.dumps({"lines": samples, "seconds": time.perf_counter() - started,
                  "cpu_seconds": time.process_time() - cpu_started}))
'''


def timed(cmd: list[str]) -> tuple[dict, int]:
    """Runs cmd under /usr/bin/time -v: its JSON report and its peak RSS in KiB."""
    done = subprocess.run(["/usr/bin/time", "-v", *cmd], check=True, text=True,
                          capture_output=True)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return json.loads(done.stdout.strip().splitlines()[-1]), rss


def same_rewards(rust: Path, python: Path) -> None:
    """Both sides did the same work: every sample has the same reward in both files."""
    rewards = lambda path: {
        line["id"]: line["result"]["reward"] for line in map(json.loads, path.open())
    }
    ours, theirs = rewards(rust), rewards(python)
    assert ours.keys() == theirs.keys(), "the two files hold different samples"
    wrong = [i for i in ours if abs(ours[i] - theirs[i]) > 1e-12]
    assert not wrong, f"rewards differ for {len(wrong)} samples, e.g. {wrong[:3]}"


def main() -> None:
    sizes = [int(arg) for arg in sys.argv[1:]] or [10_000, 100_000]
    if not PYTHON.exists():
        sys.exit(f"no Python reference at {PYTHON}: run 'cargo test -p grader-tests --test "
                 "text_differential' first, or set PYTHON")
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "grader-tests",
                    "--features", "mimalloc", "--bin", "eval-bench", "--bin",
                    "eval-bench-mimalloc"], check=True, cwd=ROOT)
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print()
    print("| samples | allocator | Python wall | grader wall | ratio | Python CPU | grader CPU "
          "| ratio | peak RSS Python | peak RSS grader |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    floors = []
    with tempfile.TemporaryDirectory() as folder:
        py_cmd = lambda n: [str(PYTHON), "-c", PY_SIDE, f"{folder}/py.jsonl", str(n)]
        for n in sizes:
            py, py_rss = timed(py_cmd(n))
            py_cpu = py["cpu_seconds"]
            for allocator, binary in RUST.items():
                # The Rust side is short: the best of three runs, by CPU.
                runs = [timed([str(binary), f"{folder}/rust.jsonl", str(n)]) for _ in range(3)]
                rust, rust_rss = min(runs, key=lambda run: run[0]["cpu_seconds"])
                assert rust["lines"] == py["lines"] == n
                rust_cpu = rust["cpu_seconds"]
                same_rewards(Path(folder, "rust.jsonl"), Path(folder, "py.jsonl"))
                print(f"| {n:,} | {allocator} | {py['seconds']:.2f} s | {rust['seconds']:.3f} s "
                      f"| {py['seconds'] / rust['seconds']:.0f} | {py_cpu:.2f} s "
                      f"| {rust_cpu:.2f} s | {py_cpu / rust_cpu:.0f} | {py_rss / 1024:.1f} MiB "
                      f"| {rust_rss / 1024:.1f} MiB |")
                alone = [timed([str(binary), f"{folder}/unused", str(n), "plain"])[0]
                         for _ in range(3)]
                alone_cpu = min(run["cpu_seconds"] for run in alone)
                assert all(run["lines"] == n for run in alone)
                # The run's own thread (a current-thread runtime: the one thread that works),
                # in nanoseconds like the loop's.
                floors.append((n, allocator, py_cpu, alone_cpu,
                               rust["awaiting_thread_cpu_seconds"]))
    print()
    print("| samples | allocator | graders alone, CPU | Python CPU ÷ graders alone "
          "| `Evaluation` CPU ÷ graders alone |")
    print("|---|---|---|---|---|")
    for n, allocator, py_cpu, alone_cpu, rust_cpu in floors:
        print(f"| {n:,} | {allocator} | {alone_cpu:.3f} s | {py_cpu / alone_cpu:.0f} "
              f"| {rust_cpu / alone_cpu:.2f} |")


if __name__ == "__main__":
    main()
