"""The probe environment of `tests/src/bin/env-probe.rs`, written for the reference's own
server: the same templates, the same prompts, the same grades. Served with
`python env_probe.py [--port N]`, it prints the reference's port line."""

import asyncio
import math
import sys

from hud.environment import Environment
from hud.environment.server import serve
from hud.graders import EvaluationResult, SubScore
from hud.utils.process import run_until_terminated

env = Environment("probe", version="1.2.3")


@env.template(id="echo", description="Repeat a word.")
async def echo(word: str):
    answer = yield f"Repeat {word}"
    yield 1.0 if answer == word else 0.0


@env.template(id="graded")
async def graded(n: int = 1):
    yield {"prompt": "Grade me", "n": n}
    yield EvaluationResult(
        reward=0.75,
        content="partial",
        info={"n": n},
        subscores=[
            SubScore(name="a", value=1.0, weight=0.5),
            SubScore(name="b", value=0.5, weight=0.5),
        ],
    )


@env.template(id="typed", returns=list[int])
async def typed():
    answer = yield "List three numbers"
    ok = isinstance(answer.content, list)
    yield EvaluationResult(reward=1.0 if ok else 0.0, info={"raw": answer.raw})


@env.template(id="fails")
async def fails():
    raise ValueError("boom")
    yield  # pragma: no cover


@env.template(id="fails_grade")
async def fails_grade():
    yield "Answer anything"
    raise RuntimeError("grading broke")


@env.template(id="nonfinite")
async def nonfinite():
    yield "Answer anything"
    yield math.nan


@env.template(id="panics")
async def panics():
    yield "Answer anything"
    raise RuntimeError("kaboom")


@env.template(id="slow")
async def slow():
    await asyncio.sleep(0.6)
    yield "Slowly"
    yield 1.0


@env.template(id="sleeper")
async def sleeper(pid_file: str):
    yield "Wait"
    proc = await asyncio.create_subprocess_exec(
        "/bin/bash", "-c", f"echo $$ > '{pid_file}'; exec sleep 300"
    )
    try:
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
    yield EvaluationResult(reward=1.0 if code == 0 else 0.0)


if __name__ == "__main__":
    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 0
    run_until_terminated(serve(env, "127.0.0.1", port))
