"""The grading side of the `workspace_ssh` bench: the `coding_env` example's `fix-tests`
graded after an honest fix, on hud 0.6.21's own client, one rollout per task.

    python coding_grade.py PORT [--tasks N]

Prints one JSON object: `grade_s`, for each of N tasks the seconds from sending
`tasks.grade` to its reply (the workspace sealed, the grade run, the frame back), and
`scores`.
"""

import argparse
import asyncio
import json
import time

from hud import Runtime, connect

FIX = "sed -i 's/\\* discount$/* (1 - discount)/' checkout.py"


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--tasks", type=int, default=5)
    args = parser.parse_args()
    grades, scores = [], []
    for _ in range(args.tasks):
        async with connect(Runtime(f"tcp://127.0.0.1:{args.port}")) as control:
            await control.start_task("fix-tests", {})
            client = await control.open("shell")
            result = await client.run(FIX, timeout=60)
            assert result.exit_status == 0, result
            started = time.perf_counter()
            grade = await control.grade({"answer": "done"})
            grades.append(time.perf_counter() - started)
            scores.append(grade.get("score"))
    print(json.dumps({"grade_s": grades, "scores": scores}), flush=True)


asyncio.run(main())
