"""Rollouts with hud's own code against an environment on 127.0.0.1:PORT (the probe
environment's templates), writing what hud keeps of each run, as hud keeps it:

- OUT/evaluations.jsonl: `run.evaluation` of each rollout, one a line (`json.dumps`);
- OUT/grade.json: one grade frame as `HudClient.grade` returns it (`tasks.grade`'s reply).

Usage: python hud_rollouts.py PORT OUT"""

import asyncio
import json
import sys
from pathlib import Path

from hud import Runtime, Task, connect
from hud.agents.base import Agent


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
    ]
    lines = []
    for task in tasks:
        job = await task.run(Scripted(), runtime=Runtime(url))
        lines.extend(json.dumps(run.evaluation) for run in job.runs)
    (out / "evaluations.jsonl").write_text("\n".join(lines) + "\n")
    async with connect(Runtime(url)) as client:
        await client.start_task("graded", {"n": 3})
        frame = await client.grade({"answer": "anything"})
    (out / "grade.json").write_text(json.dumps(frame, indent=2))


asyncio.run(main())
