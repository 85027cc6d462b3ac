#!/usr/bin/env python3
"""Scores cases with Inspect AI's own scorers, for grader-core's `inspect` module to compare with.

Reads a JSON array of cases on stdin and writes a JSON array of results, one per case:
`{"value": "C" | "I" | "N" | float, "answer": str | None, "reason": str | None}`, or
`{"error": message}` where Inspect raises. Each case names a scorer (`f`) and its arguments:

    {"f": "match", "completion": "...", "targets": ["..."], "location": "end",
     "ignore_case": true, "numeric": false}
    {"f": "includes", ..., "ignore_case": true}
    {"f": "exact", ...}
    {"f": "f1", ..., "stop_words": ["..."] | null}
    {"f": "answer", ..., "kind": "letter" | "word" | "line"}
    {"f": "pattern", ..., "pattern": "...", "ignore_case": true, "match_all": false}
    {"f": "choice", ..., "choices": 4, "shuffled": [2, 0, 1, 3] | null, "multiple_correct": false}

A choice case runs the `multiple_choice` solver's own reading of the completion
(`parse_answers`, `set_choices_based_on_generated_response`) before the `choice` scorer.
"""

import asyncio
import json
import sys
from types import SimpleNamespace

from inspect_ai.scorer import Target, answer, choice, exact, f1, includes, match, pattern
from inspect_ai.solver._multiple_choice import (
    parse_answers,
    set_choices_based_on_generated_response,
)
from inspect_ai.solver._task_state import Choice, Choices


def state_for(case):
    choices = None
    if case["f"] == "choice":
        positions = case.get("shuffled") or list(range(case["choices"]))
        choices = Choices(
            [Choice(value=str(i), correct=None, original_position=p) for i, p in enumerate(positions)]
        )
    return SimpleNamespace(output=SimpleNamespace(completion=case["completion"]), choices=choices)


def scorer_for(case):
    f = case["f"]
    if f == "match":
        return match(case["location"], ignore_case=case["ignore_case"], numeric=case["numeric"])
    if f == "includes":
        return includes(ignore_case=case["ignore_case"])
    if f == "exact":
        return exact()
    if f == "f1":
        return f1(stop_words=case.get("stop_words"))
    if f == "answer":
        return answer(case["kind"])
    if f == "pattern":
        return pattern(case["pattern"], ignore_case=case["ignore_case"], match_all=case["match_all"])
    if f == "choice":
        return choice()
    raise ValueError(f"unknown scorer {f}")


async def score(case):
    try:
        state = state_for(case)
        if case["f"] == "choice":
            answers = parse_answers(state, case["multiple_correct"])
            if answers:
                set_choices_based_on_generated_response(state, answers)
        result = await scorer_for(case)(state, Target(case["targets"]))
    except Exception as e:  # noqa: BLE001 - every error Inspect raises is a result here
        return {"error": f"{type(e).__name__}: {e}"}
    return {"value": result.value, "answer": result.answer, "reason": result.reason}


async def main():
    cases = json.load(sys.stdin)
    results = [await score(case) for case in cases]
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
