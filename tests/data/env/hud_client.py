"""Drives an environment on 127.0.0.1:PORT with the reference's own client (`hud.connect`,
`HudClient`) and reads its grades with `Grade.from_dict`, as a rollout does. Prints one JSON
object of what the client saw; the Rust test asserts on it."""

import asyncio
import json
import sys

from hud import Runtime, connect
from hud.clients.client import HudClient, HudProtocolError
from hud.eval.run import Grade

URL = f"tcp://127.0.0.1:{sys.argv[1]}"
seen = {}


def grade_view(frame):
    grade = Grade.from_dict(frame)
    return {
        "reward": grade.reward,
        "done": grade.done,
        "content": grade.content,
        "info": grade.info,
        "is_error": grade.is_error,
        "subscores": grade.evaluation.get("subscores"),
    }


async def refused(call):
    try:
        await call
    except HudProtocolError as exc:
        return {"code": exc.code, "message": str(exc)}
    return "accepted"


async def main():
    async with connect(Runtime(URL)) as client:
        manifest = client.manifest
        seen["server"] = {"name": manifest.server_info.name, "version": manifest.server_info.version}
        seen["bindings"] = len(manifest.bindings)
        tasks = await client.list_tasks()
        seen["tasks"] = {t["id"]: t for t in tasks}

        seen["echo_prompt"] = await client.start_task("echo", {"word": "hi"})
        seen["echo_grade"] = grade_view(await client.grade({"answer": "hi"}))

        seen["graded_prompt"] = await client.start_task("graded", {"n": 3})
        seen["graded_grade"] = grade_view(await client.grade({"answer": "whatever"}))

        await client.start_task("typed")
        seen["typed_grade"] = grade_view(await client.grade({"answer": "[1, 2, 3]"}))

        await client.start_task("echo", {"word": "hi"})
        await client.cancel()
        seen["grade_after_cancel"] = await refused(client.grade({"answer": "hi"}))

        seen["unknown_task"] = await refused(client.start_task("nope"))
        seen["bad_args"] = await refused(client.start_task("echo", {"wrong": 1}))
        seen["wrong_type"] = await refused(client.start_task("echo", {"word": 7}))
        seen["fails"] = await refused(client.start_task("fails"))
        await client.start_task("panics")
        seen["panics"] = await refused(client.grade({"answer": 1}))
        await client.start_task("nonfinite")
        seen["nonfinite"] = await refused(client.grade({"answer": 1}))
        seen["unknown_method"] = await refused(client._call("tasks.nope", {}))
        # The server kept serving this session through all of that.
        await client.start_task("echo", {"word": "again"})
        seen["still_serving"] = grade_view(await client.grade({"answer": "again"}))

        # A hang-up during a started task parks it; a new connection resumes it by id.
        await client.start_task("echo", {"word": "parked"})
        parked_id = manifest.session_id
    async with connect(Runtime(URL)) as second:
        resumed = await second.hello(session_id=parked_id)
        seen["resumed_same_id"] = resumed.session_id == parked_id
        seen["resumed_grade"] = grade_view(await second.grade({"answer": "parked"}))
        seen["resume_unknown"] = await refused(second.hello(session_id="sess-00000000"))
    print(json.dumps(seen))


asyncio.run(main())
