"""The Python reference's side of the side-by-side benchmark (hud-python==0.5.39, `hud.native`).

Runs the same workloads as `tests/benches/compare.rs` and prints one JSON object: for each
workload, the median seconds per iteration and how many samples it took. `run.py` calls it.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
import warnings

warnings.filterwarnings("ignore")

from hud.native.graders import BashGrader, Grade, Grader  # noqa: E402
from hud.tools.types import SubScore  # noqa: E402


def subscores(n: int) -> list[SubScore]:
    """Mirror of `subscores` in the Rust benches: half unique names, half in duplicate pairs."""
    out = []
    for i in range(n):
        name = f"check-{i}" if i < n // 2 else f"dup-{i % max(n // 4, 1)}"
        value = min((i % 11) / 10.0, 1.0)
        weight = -0.1 if i % 7 == 0 else 1.0
        out.append(SubScore(name=name, value=value, weight=weight))
    return out


class ThreeParams(Grader):
    """The same 3-parameter grader as the Rust side: a numeric answer within a tolerance."""

    name = "three_params"

    @classmethod
    async def compute_score(cls, answer: str, expected: float, tolerance: float, **kwargs):
        return 1.0 if abs(float(answer) - expected) <= tolerance else 0.0


def median_seconds(run, samples: int, per_sample: int = 1) -> dict:
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) / per_sample)
    return {"median_s": statistics.median(times), "samples": samples}


def bench_from_subscores(n: int, samples: int) -> dict:
    data = subscores(n)
    return median_seconds(lambda: Grade.from_subscores(data), samples)


def bench_grade(samples: int, per_sample: int) -> dict:
    async def many():
        for _ in range(per_sample):
            await ThreeParams.grade(weight=1.0, answer="41.9", expected=42.0, tolerance=0.5)

    return median_seconds(lambda: asyncio.run(many()), samples, per_sample)


def bench_sequential_bash(samples: int) -> dict:
    async def fifty():
        for _ in range(50):
            await BashGrader.grade(weight=1.0, command="true")

    return median_seconds(lambda: asyncio.run(fifty()), samples)


def bench_concurrent_sleep(samples: int) -> dict:
    async def hundred():
        await Grade.gather(
            *(BashGrader.grade(weight=1.0, command="sleep 0.2") for _ in range(100))
        )

    return median_seconds(lambda: asyncio.run(hundred()), samples)


def main() -> None:
    quick = "--quick" in sys.argv
    results = {
        "from_subscores/10": bench_from_subscores(10, 200),
        "from_subscores/1000": bench_from_subscores(1_000, 3 if quick else 20),
        "grade/3-params": bench_grade(5, 200 if quick else 2_000),
        "bash/50-sequential-true": bench_sequential_bash(3 if quick else 5),
        "bash/100-concurrent-sleep-0.2": bench_concurrent_sleep(3),
    }
    if not quick:
        # Over a minute at this size (the de-duplication is quadratic): one run is enough.
        results["from_subscores/100000"] = bench_from_subscores(100_000, 1)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
