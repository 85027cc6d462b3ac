"""hud 0.6.21 driving two filetracking/1 servers on one root: the one under test and the
reference's own (`FileTracker` with its baseline taken, served by `serve_file_tracking`, as
`hud.environment.workspace.Workspace` does with `track_files=True`).

argv[1]: the root. argv[2]: the server under test: an environment's control channel
(`tcp://127.0.0.1:PORT`, its `filetracking` binding found through `hello`) or, with argv[3]
"direct", the filetracking url itself.

Prints {"ready": <our binding's manifest>}, then answers one JSON request per line of stdin:

- {"raw": [line, ...]}: on a fresh connection to each server, sends the lines (each with a
  newline), closes its sending side, and reads every frame with hud's `read_frame` until the
  server closes. Answers {"ours": [frame, ...], "theirs": [frame, ...]}.
- {"observe": "enter"}: enters hud's eval-loop observer (`file_tracking_observer`) on both
  servers, ours first, and answers {"entered": true} once both made their start calls.
- {"observe": "exit"}: leaves both, and answers {"ours": [[method, reply], ...], "theirs":
  [...], "emitted": [span name, ...]}: every call hud's `FileTrackingClient` made to each.
"""

import asyncio
import contextlib
import json
import logging
import sys
from urllib.parse import urlsplit

from hud import Runtime, connect
from hud.capabilities import Capability
from hud.environment.file_tracker import FileTracker, serve_file_tracking
from hud.environment.utils import read_frame
import hud.eval.file_tracking as file_tracking
from hud.eval.file_tracking import FileTrackingClient, file_tracking_observer
from hud.settings import settings

LIMIT = 160 * 1024 * 1024
BOUND_S = 60

calls = {}
emitted = []

original_call = FileTrackingClient.call
original_connect = FileTrackingClient.connect.__func__


async def recording_call(self, method):
    result = await original_call(self, method)
    calls.setdefault(self.url, []).append([method, result])
    return result


async def recording_connect(cls, cap):
    client = await original_connect(cls, cap)
    client.url = cap.url
    return client


def recording_emit(span_name, payload, *, started_at, ended_at=None):
    emitted.append(span_name)
    return True


# The reference's server logs a traceback for each connection it closes on bad input.
logging.getLogger("asyncio").setLevel(logging.CRITICAL)

FileTrackingClient.call = recording_call
FileTrackingClient.connect = classmethod(recording_connect)
file_tracking._emit_file_tracking = recording_emit
settings.telemetry_enabled = True
# Only the start and end calls: no interval diff lands mid-test.
settings.file_tracking_interval = 3600.0


class Bound:
    """A client whose one binding is `cap` (what the observer asks a HudClient for)."""

    def __init__(self, cap):
        self.cap = cap

    def binding(self, ref):
        return self.cap


async def raw(url, lines):
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port, limit=LIMIT)
    frames = []
    try:
        for line in lines:
            writer.write(line.encode("utf-8") + b"\n")
        await writer.drain()
        writer.write_eof()
        while True:
            frame = await asyncio.wait_for(read_frame(reader), BOUND_S)
            if frame is None:
                break
            frames.append(frame)
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()
    return frames


async def serve(ours, theirs):
    loop = asyncio.get_running_loop()
    stack = contextlib.AsyncExitStack()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        request = json.loads(line)
        if "raw" in request:
            reply = {
                "ours": await raw(ours.url, request["raw"]),
                "theirs": await raw(theirs.url, request["raw"]),
            }
        elif request.get("observe") == "enter":
            await stack.enter_async_context(file_tracking_observer(Bound(ours)))
            await stack.enter_async_context(file_tracking_observer(Bound(theirs)))
            reply = {"entered": True}
        elif request.get("observe") == "exit":
            await stack.aclose()
            reply = {
                "ours": calls.get(ours.url, []),
                "theirs": calls.get(theirs.url, []),
                "emitted": emitted,
            }
        else:
            reply = {"error": f"unknown request {request!r}"}
        print(json.dumps(reply), flush=True)


async def main():
    root, target = sys.argv[1], sys.argv[2]
    tracker = FileTracker(root)
    tracker.take_baseline()
    server = await serve_file_tracking(tracker)
    host, port = server.sockets[0].getsockname()[:2]
    theirs = Capability(
        name="filetracking",
        protocol="filetracking/1",
        url=f"tcp://{host}:{port}",
        params={"root": tracker._root.as_posix(), "setup_diff": True},
    )
    if len(sys.argv) > 3 and sys.argv[3] == "direct":
        ours = Capability(name="filetracking", protocol="filetracking/1", url=target, params={})
        print(json.dumps({"ready": ours.to_manifest(), "reference": theirs.to_manifest()}), flush=True)
        await serve(ours, theirs)
        return
    async with connect(Runtime(target)) as control:
        ours = control.binding("filetracking")
        print(json.dumps({"ready": ours.to_manifest(), "reference": theirs.to_manifest()}), flush=True)
        await serve(ours, theirs)


asyncio.run(main())
