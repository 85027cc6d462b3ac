"""An agent on hud's own SSHClient, driven line by line: the workspace tests' real client.

argv[1]: the ssh/2 capability manifest (JSON), or an environment's control channel
(`tcp://127.0.0.1:PORT`): then the agent connects as a rollout does (`hud.connect`, `hello`,
`client.open("shell")` through the control channel's tunnel) and can start and grade tasks.
argv[2] (optional): "wrong-key" to connect with a freshly generated key instead of the
published one. Prints {"connected": true, ...} or {"connect_error": ...}, then answers one JSON
request per line of stdin. Through a control channel, {"op": "reconnect"} says `hello` again
on the same session and opens the shell anew with the key it gives (a task's end takes the
session's key and closes its connections).
"""

import asyncio
import contextlib
import json
import sys

import asyncssh
from hud import Runtime, connect
from hud.capabilities import Capability
from hud.capabilities.ssh import SSHClient

BOUND_S = 60


def completed(result):
    signal = result.exit_signal[0] if result.exit_signal else None
    return {
        "stdout": result.stdout,
        "stderr": result.stderr,
        "exit_status": result.exit_status,
        "exit_signal": signal,
    }


async def answer(state, request, control=None):
    client = state["client"]
    op = request.get("op", "run")
    if op == "reconnect":
        # A new `hello` on the same session (a task that ended took its key with it), then a
        # new SSH connection with the key that hello gave.
        old = control._opened.pop("shell", None)
        if old is not None:
            with contextlib.suppress(Exception):
                await old.close()
        await control.hello(control.manifest.session_id)
        state["client"] = await asyncio.wait_for(control.open("shell"), BOUND_S)
        return {"reconnected": True}
    if op == "start":
        return {"prompt": await control.start_task(request["id"], request.get("args", {}))}
    if op == "grade":
        return {"grade": await control.grade({"answer": request["answer"]})}
    if op == "run":
        kwargs = {}
        if "input" in request:
            kwargs["input"] = request["input"]
        if "env" in request:
            kwargs["env"] = request["env"]
        return completed(await client.run(request["cmd"], timeout=BOUND_S, **kwargs))
    if op == "env_flood":
        # One channel whose command is preceded by `count` env requests of `size` bytes each.
        env = {f"FLOOD_{i}": "x" * request["size"] for i in range(request["count"])}
        result = await client.run("echo ran", timeout=BOUND_S, env=env)
        return completed(result)
    if op == "run_len":
        result = await client.run(request["cmd"], timeout=BOUND_S, encoding=None)
        return {"stdout_len": len(result.stdout), "exit_status": result.exit_status}
    if op == "parallel":
        results = await asyncio.gather(
            *(client.run(cmd, timeout=BOUND_S) for cmd in request["cmds"])
        )
        return {"results": [completed(r) for r in results]}
    if op == "write":
        await client.write_text(request["path"], request["content"], timeout_s=BOUND_S)
        return {"ok": True}
    if op == "read":
        return {"content": await client.read_text(request["path"], timeout_s=BOUND_S)}
    if op == "listdir":
        return {"names": await client.listdir(request["path"], timeout_s=BOUND_S)}
    raise ValueError(f"unknown op {op!r}")


async def serve(client, control=None):
    loop = asyncio.get_running_loop()
    state = {"client": client}
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        try:
            reply = await answer(state, json.loads(line), control)
        except Exception as exc:  # noqa: BLE001
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)


async def main():
    if sys.argv[1].startswith("tcp://"):
        async with connect(Runtime(sys.argv[1])) as control:
            binding = control.binding("shell")
            client = await asyncio.wait_for(control.open("shell"), BOUND_S)
            published = next(b for b in control.manifest.bindings if b.name == "shell")
            greeting = {"connected": True, "binding": published.to_manifest()}
            print(json.dumps(greeting), flush=True)
            assert binding.url != published.url, "the shell is reached through the tunnel"
            await serve(client, control)
        return
    cap = Capability.from_manifest(json.loads(sys.argv[1]))
    if len(sys.argv) > 2 and sys.argv[2] == "wrong-key":
        other = asyncssh.generate_private_key("ssh-ed25519")
        cap.params["client_key"] = other.export_private_key().decode()
    try:
        client = await asyncio.wait_for(SSHClient.connect(cap), BOUND_S)
    except Exception as exc:  # noqa: BLE001 - the test reads what failed
        print(json.dumps({"connect_error": f"{type(exc).__name__}: {exc}"}), flush=True)
        return
    print(json.dumps({"connected": True}), flush=True)
    await serve(client)
    await client.close()


asyncio.run(main())
