#!/usr/bin/env python3
"""How one evaluation scales over the cores of a big machine: `eval-bench` on SAMPLES samples
× four text graders, for each N of CORES, through `Evaluation::run` and
`Evaluation::run_shared` on N worker threads at each concurrency of CONCURRENCIES, against the
ceiling for N: N current-thread runs side by side on N threads of one process, each on 1/N of
the samples (`eval-bench ... split N`; no grading crosses a thread, so no way of spreading one
run over N workers can beat it).

Usage (from the repository root, after `cargo build --release -p grader-tests --bin eval-bench`):

    python3 benches/eval/scaling.py [ROUNDS=7] [CORES=2,4,8,16] [SAMPLES=400000] [EVAL_BENCH[,EVAL_BENCH2...]]

Each round runs every configuration once, in turn (of each build of `eval-bench` given, so that
two builds are compared in the same rounds); the best of ROUNDS is kept for each. Prints
one line per configuration (seconds, share of the ceiling's speed = ceiling ÷ run, context
switches per 1 000 samples, the awaiting thread's CPU per sample), then the same as JSON.
The output goes under /dev/shm where there is one. CORES above the machine's are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

CONCURRENCIES = (16, 64, 1024)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    cores = [int(c) for c in (sys.argv[2] if len(sys.argv) > 2 else "2,4,8,16").split(",")]
    cores = [n for n in cores if n <= (os.cpu_count() or 1)]
    samples = int(sys.argv[3]) if len(sys.argv) > 3 else 400_000
    programs = (sys.argv[4] if len(sys.argv) > 4 else "target/release/eval-bench").split(",")
    folder = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    output = os.path.join(folder, f"eval-scaling-{os.getpid()}.jsonl")
    configurations: list[tuple[int, str, int]] = [(1, "current", 0)]
    for n in cores:
        configurations.append((n, "ceiling", 0))
        for mode in ("run", "run_shared"):
            configurations += [(n, mode, c) for c in CONCURRENCIES]
    best: dict[tuple[str, int, str, int], dict] = {}
    try:
        for _ in range(rounds):
            for (n, mode, concurrency), program in [(c, p) for c in configurations for p in programs]:
                remove(output, n)
                args = [program, output, str(samples)]
                if mode == "ceiling":
                    args += ["split", str(n)]
                elif mode != "current":
                    args += [str(n), str(concurrency)] + (["shared"] if mode == "run_shared" else [])
                run = json.loads(subprocess.check_output(args))
                if run["lines"] != samples:
                    sys.exit(f"{args} wrote {run['lines']} lines, not {samples}")
                key = (program, n, mode, concurrency)
                if key not in best or run["seconds"] < best[key]["seconds"]:
                    best[key] = run
    finally:
        for n in cores:
            remove(output, n)
    rows = []
    for (program, n, mode, concurrency), run in best.items():
        ceiling = best.get((program, n, "ceiling", 0), run)["seconds"]
        switches = run.get("context_switches")
        awaiting = run.get("awaiting_thread_cpu_seconds")
        row = {
            "program": program,
            "cores": n,
            "mode": mode,
            "concurrency": concurrency,
            "seconds": round(run["seconds"], 4),
            "share_of_ceiling": round(ceiling / run["seconds"], 3),
            "switches_per_1000": None if switches is None else round(switches * 1000 / samples, 2),
            "awaiting_us_per_sample": None if awaiting is None else round(awaiting * 1e6 / samples, 3),
        }
        rows.append(row)
        print(
            (f"{program}: " if len(programs) > 1 else "") + f"{n:>2} cores {mode:>10} c={concurrency:<5} {row['seconds']:.4f} s "
            f"share {row['share_of_ceiling']:.3f} switches/1000 {row['switches_per_1000']} "
            f"awaiting µs/sample {row['awaiting_us_per_sample']}"
        )
    print(json.dumps({"samples": samples, "rounds": rounds, "cpus": os.cpu_count(), "rows": rows}))


def remove(output: str, n: int) -> None:
    for path in [output] + [f"{output}.{i}" for i in range(n)]:
        if os.path.exists(path):
            os.remove(path)


if __name__ == "__main__":
    main()
