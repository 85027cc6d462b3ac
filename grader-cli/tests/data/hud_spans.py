"""Rollouts with hud's own code against an environment on 127.0.0.1:PORT (the probe
environment's templates), with hud's local span export on, writing what hud keeps of each run
as hud keeps it:

- OUT/spans/<trace_id>.jsonl: each rollout's trace, one span a line, written by hud's own
  exporter (`HUD_TELEMETRY_LOCAL_DIR`, set by the caller);
- OUT/evaluations.jsonl: `run.evaluation` of each rollout, one a line (`json.dumps`): the last
  is `{}`, a rollout that failed before launch (its task does not exist).

Usage: python hud_spans.py PORT OUT"""

import asyncio
import json
import sys
from pathlib import Path

from hud import Runtime, Task
from hud.agents.base import Agent
from hud.telemetry import exporter


class Scripted(Agent):
    """Answers "Repeat W" with W when W is "right", with something else otherwise."""

    async def __call__(self, run):
        word = run.prompt_text.removeprefix("Repeat ")
        run.trace.content = word if word == "right" else "wrong"


async def main():
    url = f"tcp://127.0.0.1:{sys.argv[1]}"
    out = Path(sys.argv[2])
    tasks = [
        Task(env="probe", id="echo", args={"word": "right"}),
        Task(env="probe", id="echo", args={"word": "left"}),
        Task(env="probe", id="graded", args={"n": 2}),
        Task(env="probe", id="no-such-task", args={}),
    ]
    lines = []
    for task in tasks:
        job = await task.run(Scripted(), runtime=Runtime(url))
        lines.extend(json.dumps(run.evaluation) for run in job.runs)
    (out / "evaluations.jsonl").write_text("\n".join(lines) + "\n")
    exporter.flush()


asyncio.run(main())
