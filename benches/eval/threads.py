#!/usr/bin/env python3
"""How an evaluation scales over worker threads: `eval-bench` on 100 000 samples × four text
graders, on a current-thread runtime and on 1 and 2 worker threads at concurrency 16 (the
default), 64 and 1 024, through `Evaluation::run` and through `Evaluation::run_shared` (the
worker threads make the gradings); and, as the ceiling, two current-thread runs side by side on two
threads of one process, each of half the samples (`eval-bench ... split 2`: no grading crosses
a thread, so no way of spreading one run over workers can beat it on this machine).

Usage (from the repository root, after `cargo build --release -p grader-tests --bin eval-bench`):

    python3 benches/eval/threads.py [ROUNDS] [EVAL_BENCH ...]

Each round runs every configuration once, in turn, so that a slow spell of a shared machine
falls on all of them alike; the best of ROUNDS (15 by default) is kept for each. The output goes
to a file under /dev/shm where there is one (so that the disk's write-back does not time
itself), else the system's temporary folder. Several `eval-bench` programs (built from
different commits, say) are measured in the same rounds and reported one after the other.
With each time goes the fewest context switches a run of that configuration made (all its
threads; a count that hardly moves with what else the machine runs, where times do).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

SAMPLES = 100_000
# (workers, concurrency, mode); workers 0 is a current-thread runtime, and -2 the two runs side
# by side; mode "shared" is `run_shared`, "" is `run`.
SPLIT = -2
MODES = ("", "shared")
CONFIGURATIONS = [(0, 0, ""), (SPLIT, 0, "")] + [
    (w, c, mode) for mode in MODES for c in (16, 64, 1024) for w in (1, 2)
]


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    programs = sys.argv[2:] or ["target/release/eval-bench"]
    folder = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    output = os.path.join(folder, f"eval-threads-{os.getpid()}.jsonl")
    outputs = [output, f"{output}.0", f"{output}.1"]
    best: dict[tuple[str, int, int, str], float] = {}
    switches: dict[tuple[str, int, int, str], int] = {}
    try:
        for _ in range(rounds):
            for program in programs:
                for workers, concurrency, mode in CONFIGURATIONS:
                    remove(outputs)
                    args = [program, output, str(SAMPLES)]
                    if workers == SPLIT:
                        args += ["split", "2"]
                    elif workers:
                        args += [str(workers), str(concurrency)] + ([mode] if mode else [])
                    run = json.loads(subprocess.check_output(args))
                    if run["lines"] != SAMPLES:
                        sys.exit(f"{program} wrote {run['lines']} lines, not {SAMPLES}")
                    key = (program, workers, concurrency, mode)
                    best[key] = min(best.get(key, float("inf")), run["seconds"])
                    if run.get("context_switches") is not None:
                        switches[key] = min(switches.get(key, run["context_switches"]),
                                            run["context_switches"])
    finally:
        remove(outputs)
    def told(key: tuple[str, int, int, str]) -> str:
        count = switches.get(key)
        return f"{best[key]:.3f} s" + ("" if count is None else f" ({count} switches)")

    for program in programs:
        print(f"{program} (best of {rounds}):")
        current, split = (program, 0, 0, ""), (program, SPLIT, 0, "")
        print(f"  current thread: {told(current)}")
        print(
            f"  two current-thread runs side by side (the ceiling): {told(split)}, "
            f"{best[current] / best[split]:.2f}x"
        )
        for mode in MODES:
            print(f"  {'run_shared' if mode else 'run'}:")
            for concurrency in (16, 64, 1024):
                one, two = (program, 1, concurrency, mode), (program, 2, concurrency, mode)
                print(
                    f"    concurrency {concurrency}: 1 worker {told(one)}, 2 workers {told(two)}, "
                    f"{best[one] / best[two]:.2f}x; the current thread over 2 workers "
                    f"{best[current] / best[two]:.2f}x"
                )


def remove(paths: list[str]) -> None:
    for path in paths:
        if os.path.exists(path):
            os.remove(path)


if __name__ == "__main__":
    main()
