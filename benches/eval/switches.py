#!/usr/bin/env python3
"""Why a run's threads gave up their CPU: classifies the context switches that `perf` recorded
with their call stacks, by the first frame (innermost first) that says why.

    perf record -e context-switches -c 1 --call-graph dwarf,16384 -o switches.data \
        target/release/eval-bench /dev/shm/out.jsonl 100000 16 1024 shared
    perf script -i switches.data | python3 benches/eval/switches.py

Prints the 25 most common reasons with their counts and shares:
- `mutex wait in F`: a `std::sync::Mutex` was contended, in F (the first frame that is not the
  lock's own);
- `park: F`: a thread waited for work (a tokio worker parking, a `Condvar`);
- `epoll`: the I/O driver waited;
- `other (innermost user frame): F`: preempted, or a system call that blocked, in F.
"""

from __future__ import annotations

import collections
import sys


def reason(frames: list[str]) -> str:
    for i, frame in enumerate(frames):
        if "lock_contended" in frame:
            caller = next((f for f in frames[i + 1 :] if "lock" not in f and "Mutex" not in f), "?")
            return "mutex wait in " + caller[:100]
        if "Condvar" in frame or ("park" in frame.lower() and "parking_lot" not in frame):
            return "park: " + frame[:100]
        if "epoll" in frame:
            return "epoll"
    user = next(
        (f for f in frames if "[unknown]" not in f and "kernel" not in f and not f.startswith("__")),
        frames[-1],
    )
    return "other (innermost user frame): " + user[:100]


def main() -> None:
    counts: collections.Counter[str] = collections.Counter()
    stack: list[str] = []
    for line in sys.stdin:
        line = line.rstrip("\n")
        if line.startswith((" ", "\t")) and line.strip():
            parts = line.strip().split(" ", 1)
            stack.append(parts[1] if len(parts) > 1 else parts[0])
            continue
        if stack:
            counts[reason(stack)] += 1
        stack = []
    if stack:
        counts[reason(stack)] += 1
    total = sum(counts.values()) or 1
    try:
        for why, n in counts.most_common(25):
            print(f"{n:7d} {100 * n / total:5.1f}%  {why}")
        print("total", sum(counts.values()))
    except BrokenPipeError:
        pass


if __name__ == "__main__":
    main()
