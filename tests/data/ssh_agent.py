"""An agent on hud's own SSHClient, driven line by line: the workspace tests' real client.

argv[1]: the ssh/2 capability manifest (JSON); argv[2] (optional): "wrong-key" to connect with
a freshly generated key instead of the published one. Prints {"connected": true} or
{"connect_error": ...}, then answers one JSON request per line of stdin.
"""

import asyncio
import json
import sys

import asyncssh
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


async def answer(client, request):
    op = request.get("op", "run")
    if op == "run":
        kwargs = {}
        if "input" in request:
            kwargs["input"] = request["input"]
        if "env" in request:
            kwargs["env"] = request["env"]
        return completed(await client.run(request["cmd"], timeout=BOUND_S, **kwargs))
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


async def main():
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
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        try:
            reply = await answer(client, json.loads(line))
        except Exception as exc:  # noqa: BLE001
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)
    await client.close()


asyncio.run(main())
