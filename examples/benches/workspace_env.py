"""The reference's side of the `workspace_ssh` bench: hud 0.6.21's own environment with a
workspace (`env.workspace(root)`), served by hud itself. One template, `work`, whose prompt
sends the agent to the `shell` capability and whose grade is 1.0.

    python workspace_env.py ROOT        (prints `HUD_SERVE_PORT=<port>`)
"""

import sys

from hud.environment import Environment
from hud.environment.server import serve
from hud.utils.process import run_until_terminated

env = Environment("workspace-bench", version="0.1.0")
env.workspace(sys.argv[1], require_isolation=True)


@env.template(id="work")
async def work():
    yield "Work in the shell."
    yield 1.0


if __name__ == "__main__":
    run_until_terminated(serve(env, "127.0.0.1", 0))
