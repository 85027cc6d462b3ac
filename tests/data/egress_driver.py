"""Runs scripts in hud's own Workspace with an egress policy, for the egress differential.

stdin: {"root": str, "allowed": [str], "peers": [[name, port, host, target_port]],
"scripts": [str]}. Each script runs as a command in the workspace's network (hud's
`Workspace.run`, joining the sandbox as sessions do); stdout is a JSON list of what each
printed.
"""

import asyncio
import json
import sys

from hud.environment.egress import Peer
from hud.environment.workspace import Workspace


async def main() -> None:
    spec = json.loads(sys.stdin.read())
    workspace = Workspace(
        spec["root"],
        allowed_hosts=spec["allowed"],
        peers=[Peer(name, port, (host, target)) for name, port, host, target in spec["peers"]],
        require_isolation=True,
    )
    await workspace.start()
    try:
        printed = []
        for script in spec["scripts"]:
            result = await workspace.run(["bash", "-c", script], max_wait=60)
            printed.append(result.stdout.decode(errors="replace"))
        print(json.dumps(printed))
    finally:
        await workspace.stop()


asyncio.run(main())
