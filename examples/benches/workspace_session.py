"""The agent's side of the `workspace_ssh` bench, on hud 0.6.21's own client: `hud.connect`,
`client.open("shell")` through the control channel's tunnel, `SSHClient`.

    python workspace_session.py PORT SERVER_PID [--tasks N] [--commands N] [--sessions N]

Prints one JSON object:
- `first_output_s`: for each of N tasks, the seconds from sending `tasks.start` to the first
  command's output (the task starts, `hello` is said again and the shell opened with the key
  it gives, as a new rollout does, `echo` runs in the task's sandbox);
- `commands_per_s`: N commands (`echo i`) one after another on the shell opened through the
  control channel's tunnel, as an agent elsewhere reaches it;
- `direct_commands_per_s`: the same on a connection made straight to the SSH port the binding
  names (an agent on the same machine);
- `rss_kib_idle`, `rss_kib_sessions`: the server process's resident set (`VmRSS`) with one
  session, then with N more SSH connections open at once, each having run a command.
"""

import argparse
import asyncio
import json
import time

from hud import Runtime, connect
from hud.capabilities import Capability
from hud.capabilities.ssh import SSHClient


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def reopen(control):
    """The shell opened with the key of a new `hello` on the same session."""
    old = control._opened.pop("shell", None)
    if old is not None:
        await old.close()
    await control.hello(control.manifest.session_id)
    return await control.open("shell")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("pid", type=int)
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--commands", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=100)
    args = parser.parse_args()
    out = {}
    async with connect(Runtime(f"tcp://127.0.0.1:{args.port}")) as control:
        firsts = []
        for _ in range(args.tasks):
            started = time.perf_counter()
            await control.start_task("work", {})
            # Each task's shell is opened anew with the key of a new hello, as a rollout does
            # (a task's end closes its connections and takes its key).
            client = await reopen(control)
            result = await client.run("echo first", timeout=60)
            firsts.append(time.perf_counter() - started)
            assert result.stdout == "first\n", result
            await control.grade({"answer": "done"})
        out["first_output_s"] = firsts

        await control.start_task("work", {})
        client = await reopen(control)
        started = time.perf_counter()
        for i in range(args.commands):
            result = await client.run(f"echo {i}", timeout=60)
            assert result.stdout == f"{i}\n", result
        out["commands_per_s"] = args.commands / (time.perf_counter() - started)

        published = next(b for b in control.manifest.bindings if b.name == "shell")
        cap = Capability.from_manifest(published.to_manifest())
        direct = await SSHClient.connect(cap)
        started = time.perf_counter()
        for i in range(args.commands):
            result = await direct.run(f"echo {i}", timeout=60)
            assert result.stdout == f"{i}\n", result
        out["direct_commands_per_s"] = args.commands / (time.perf_counter() - started)
        await direct.close()

        out["rss_kib_idle"] = rss_kib(args.pid)
        clients = await asyncio.gather(*(SSHClient.connect(cap) for _ in range(args.sessions)))
        results = await asyncio.gather(*(c.run("echo ready", timeout=120) for c in clients))
        assert all(r.stdout == "ready\n" for r in results)
        out["rss_kib_sessions"] = rss_kib(args.pid)
        out["sessions"] = args.sessions
        await asyncio.gather(*(c.close() for c in clients))
        await control.grade({"answer": "done"})
    print(json.dumps(out), flush=True)


asyncio.run(main())
