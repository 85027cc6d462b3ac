#!/usr/bin/env python3
"""Scores cases with Inspect AI 0.3.285's `math()` scorer itself, for grader-core's
`inspect_math` to compare with.

Reads a JSON array of `[output, [target, ...]]` on stdin and writes a JSON array with one entry
per case: `{"value": "C" | "I" | null, "status": ..., "answer": ..., "reason": ...}` where `status`
is the scorer's `math_scorer_status` metadata (`correct`, `incorrect`, `answer_parse_error`,
`answer_limit`), `target_error` where no target can be parsed (the scorer raises `ValueError`)
or `scorer_error` where the scorer raises anything else (a sample error in Inspect), and
`value` is null where the sample is unscored.

The scorer runs as Inspect runs it, with its wall-clock budget set high (600 s) so that a loaded
machine does not turn a verdict into a timeout.
"""

import asyncio
import json
import logging
import sys

from inspect_ai.model import ChatMessageUser, ModelOutput
from inspect_ai.scorer import Target, math
from inspect_ai.solver import TaskState

logging.disable(logging.CRITICAL)

SCORER = math(timeout=600.0)


def state(output):
    return TaskState(
        model="mockllm/model",
        sample_id=0,
        epoch=1,
        input="",
        messages=[ChatMessageUser(content="")],
        output=ModelOutput.from_content("mockllm/model", output),
    )


async def score(output, targets):
    try:
        result = await SCORER(state(output), Target(targets))
    except ValueError as error:
        return {"value": None, "status": "target_error", "answer": None, "reason": str(error)}
    except Exception as error:  # the scorer's own failures (a sample error in Inspect)
        return {"value": None, "status": "scorer_error", "answer": None, "reason": repr(error)}
    status = (result.metadata or {}).get("math_scorer_status")
    value = result.value if isinstance(result.value, str) else None
    return {"value": value, "status": status, "answer": result.answer, "reason": result.reason}


async def main():
    cases = json.load(sys.stdin)
    out = [await score(output, targets) for output, targets in cases]
    json.dump(out, sys.stdout)


asyncio.run(main())
