"""A whole hud rollout, offline: `Task.run` with a scripted agent, placed on a `Runtime`
pointing at an environment on 127.0.0.1:PORT. Prints what the job recorded as JSON."""

import asyncio
import json
import sys

from hud import Runtime, Task
from hud.agents.base import Agent


class Scripted(Agent):
    """Answers every prompt with the word after "Repeat "."""

    async def __call__(self, run):
        run.trace.content = run.prompt_text.removeprefix("Repeat ")


async def main():
    port = sys.argv[1]
    task = Task(env="probe", id="echo", args={"word": "offline"})
    job = await task.run(Scripted(), runtime=Runtime(f"tcp://127.0.0.1:{port}"))
    runs = [
        {"reward": run.reward, "evaluation": run.evaluation, "prompt": run.prompt_text}
        for run in job.runs
    ]
    print(json.dumps({"runs": runs}))


asyncio.run(main())
