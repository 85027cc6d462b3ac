"""Memory per live session of an environment server, measured with hud's own client.

    python scripts/env_live_sessions.py [--sessions N] -- SERVER-COMMAND...

Starts SERVER-COMMAND (it must print `HUD_SERVE_PORT=<port>` on stdout, as any environment
does), warms it up with one session, reads its resident set (`VmRSS` in /proc/<pid>/status),
then opens N live sessions with hud 0.6.21's client (`hud.connect(Runtime(...))`), each
connected, its `echo` task started and awaiting its grade, reads the resident set again, and
prints the growth per session. Run it with the interpreter of the venv the tests make
(`target/tmp/hud-venv/env/bin/python`), for instance:

    cargo build --release -p grader-tests --bin env-probe
    target/tmp/hud-venv/env/bin/python scripts/env_live_sessions.py -- \
        target/release/env-probe --max-connections 2000
    target/tmp/hud-venv/env/bin/python scripts/env_live_sessions.py -- \
        target/tmp/hud-venv/env/bin/python tests/data/env/env_probe.py

The server's template must be the probe's `echo` (args `{"word": …}`). A grader-env server
holds at most 512 connections by default: raise its cap above N as above.
"""

import argparse
import asyncio
import contextlib
import resource
import subprocess
import sys

from hud import Runtime, connect


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    command = [part for part in options.command if part != "--"]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * options.sessions)), hard))
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        line = server.stdout.readline().decode()
        port = int(line.strip().removeprefix("HUD_SERVE_PORT="))
        url = f"tcp://127.0.0.1:{port}"
        async with connect(Runtime(url)) as warm:
            await warm.start_task("echo", {"word": "warm"})
            await warm.grade({"answer": "warm"})
        await asyncio.sleep(0.5)
        before = rss_kib(server.pid)
        async with contextlib.AsyncExitStack() as stack:
            for i in range(options.sessions):
                client = await stack.enter_async_context(connect(Runtime(url)))
                await client.start_task("echo", {"word": f"w{i}"})
            await asyncio.sleep(0.5)
            after = rss_kib(server.pid)
            per = (after - before) / options.sessions
            print(
                f"{' '.join(command)}: {options.sessions} live sessions, "
                f"resident set {before} KiB -> {after} KiB, {per:.1f} KiB per session"
            )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
