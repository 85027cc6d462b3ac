#!/usr/bin/env python3
"""graderkit beside math-verify, in one process and one run: per-pair calls, batches on one and
two threads, the cost of crossing into Rust, and a TRL-shaped reward on a batch of 1 024.

    target/tmp/py-venv/env/bin/python grader-py/benches/bench.py [PAIRS]

Run it with the interpreter of the test environment (`tests/envs/py.in`: math-verify and the
wheel the tests installed) after `cargo test -p grader-tests --test python_package`, or after
installing a release build (`pip install ./grader-py` builds one). PAIRS (default 10 000) are
made by cycling the committed math corpus (`tests/data/math_verify_cases.json` and
`math_bench_pairs.json`) with each pair's numbers shifted, so that caches see new texts.

Each figure is the best of several rounds; ratios are against math-verify measured in the same
run. "Cold" is each text's first parse in the process; "warm" parses the same texts again
(math-verify caches its LaTeX parses with `lru_cache`; graderkit caches nothing).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
import warnings
from pathlib import Path

warnings.simplefilter("ignore")
logging.disable(logging.CRITICAL)

import graderkit  # noqa: E402
from graderkit.trl import accuracy_reward as ours_trl  # noqa: E402
from latex2sympy2_extended import NormalizationConfig  # noqa: E402
from math_verify import LatexExtractionConfig, parse, verify  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def corpus() -> list[tuple[str, str]]:
    cases = json.loads((ROOT / "tests/data/math_verify_cases.json").read_text())["cases"]
    bench = json.loads((ROOT / "tests/data/math_bench_pairs.json").read_text())
    return [(g, a) for g, a, *_ in cases] + [(g, a) for _, g, a, *_ in bench]


def shifted(text: str, by: int) -> str:
    return re.sub(r"\d+", lambda m: str(int(m.group()) + by), text) if by else text


def pairs(count: int) -> list[tuple[str, str]]:
    base = corpus()
    out = []
    for i in range(count):
        g, a = base[i % len(base)]
        by = i // len(base)
        out.append((shifted(g, by), shifted(a, by)))
    return out


def best(rounds: int, work) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def math_verify_loop(items):
    for g, a in items:
        try:
            verify(parse(g), parse(a))
        except Exception:  # noqa: BLE001 - math-verify's own errors count as False
            pass


def graderkit_loop(items):
    for g, a in items:
        graderkit.verify(graderkit.parse(g), graderkit.parse(a))


def trl_accuracy_reward(completions, solution, **kwargs):
    """TRL 1.16.0's `trl.rewards.accuracy_reward` (Apache-2.0, The HuggingFace Team), its
    math-verify calls as they are, on the main thread."""
    contents = [completion[0]["content"] for completion in completions]
    rewards = []
    for content, sol in zip(contents, solution, strict=True):
        gold_parsed = parse(sol, parsing_timeout=10)
        if len(gold_parsed) != 0:
            answer_parsed = parse(
                content,
                extraction_config=[
                    LatexExtractionConfig(
                        normalization_config=NormalizationConfig(units=True),
                        boxed_match_priority=0,
                        try_extract_without_anchor=False,
                    )
                ],
                extraction_mode="first_match",
                parsing_timeout=10,
            )
            rewards.append(float(verify(gold_parsed, answer_parsed, timeout_seconds=5)))
        else:
            rewards.append(None)
    return rewards


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    items = pairs(count)
    golds, answers = [g for g, _ in items], [a for _, a in items]
    print(f"{count} pairs, {os.cpu_count()} cores, graderkit {graderkit.__version__}")

    # Cold: each text's first parse in this process, for both.
    mv_cold = best(1, lambda: math_verify_loop(items))
    gk_cold = best(1, lambda: graderkit_loop(items))
    mv_warm = best(2, lambda: math_verify_loop(items))
    gk_warm = best(3, lambda: graderkit_loop(items))
    many_1 = best(3, lambda: graderkit.verify_many(golds, answers, threads=1))
    many_2 = best(3, lambda: graderkit.verify_many(golds, answers, threads=2))
    per = lambda seconds: f"{seconds / count * 1e6:8.1f} us/pair"  # noqa: E731
    print(f"math-verify, parse+verify, cold   {per(mv_cold)}")
    print(f"math-verify, parse+verify, warm   {per(mv_warm)}")
    print(f"graderkit, parse+verify, cold     {per(gk_cold)}   {mv_cold / gk_cold:6.1f}x math-verify")
    print(f"graderkit, parse+verify, warm     {per(gk_warm)}   {mv_warm / gk_warm:6.1f}x math-verify")
    print(f"graderkit verify_many, 1 thread   {per(many_1)}   {mv_warm / many_1:6.1f}x math-verify")
    print(f"graderkit verify_many, 2 threads  {per(many_2)}   {many_1 / many_2:6.2f}x one thread")

    # Crossing into Rust: a call whose Rust work is a few nanoseconds.
    calls = 200_000
    crossing = best(5, lambda: [graderkit.exact_match("a", "a", normalize_text=False) for _ in range(calls)])
    empty = best(5, lambda: [None for _ in range(calls)])
    print(f"a call into Rust (exact_match of one letter, loop removed) {(crossing - empty) / calls * 1e6:.2f} us")

    # TRL's shape, a batch of 1 024 completions.
    batch = items[:1024]
    completions = [[{"role": "assistant", "content": a}] for _, a in batch]
    solutions = [g for g, _ in batch]
    theirs = best(1, lambda: trl_accuracy_reward(completions, solutions))
    mine = best(3, lambda: ours_trl(completions=completions, solution=solutions))
    print(f"TRL accuracy_reward (math-verify), 1 024 completions  {theirs * 1e3:8.1f} ms")
    print(f"graderkit.trl.accuracy_reward, 1 024 completions      {mine * 1e3:8.1f} ms   {theirs / mine:6.1f}x")


if __name__ == "__main__":
    main()
