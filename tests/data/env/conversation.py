"""One scripted conversation with an environment's control channel, hostile frames included.

`python conversation.py PORT` plays it against the server on 127.0.0.1:PORT and prints, as
one JSON document, every frame it sent (or a description of raw bytes) with the replies
read back, in order: the same script against two servers gives two comparable transcripts.
Each step states how many replies it waits for; `eof` steps read until the server closes.
"""

import json
import os
import socket
import sys
import tempfile
import time

PORT = int(sys.argv[1])
LIMIT = 16 * 1024 * 1024
conns = {}
files = {}
sessions = {}
transcript = []


def rpc(id_, method, params=None):
    frame = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


def open_(name):
    sock = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    conns[name] = sock
    files[name] = sock.makefile("rb")


def read_reply(name):
    line = files[name].readline()
    if not line:
        return "<eof>"
    text = line.decode()
    value = json.loads(text)
    result = value.get("result") if isinstance(value, dict) else None
    if isinstance(result, dict) and "session_id" in result:
        sessions.setdefault(name, result["session_id"])
    return value


def substitute(obj):
    if isinstance(obj, str) and obj.startswith("$"):
        return sessions[obj[1:]]
    if isinstance(obj, dict):
        return {k: substitute(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [substitute(v) for v in obj]
    return obj


def send(name, frame, replies=1, label=None):
    if isinstance(frame, bytes):
        data, shown = frame, label or repr(frame[:80])
    else:
        frame = substitute(frame)
        data, shown = (json.dumps(frame) + "\n").encode(), label or frame
    conns[name].sendall(data)
    got = [read_reply(name) for _ in range(replies)]
    transcript.append({"conn": name, "sent": shown, "replies": got})


def eof(name):
    got = []
    while True:
        reply = read_reply(name)
        got.append(reply)
        if reply == "<eof>":
            break
    transcript.append({"conn": name, "until_eof": got})


def close(name):
    conns[name].close()
    transcript.append({"conn": name, "closed": True})


# A control session through every method and every error path.
open_("a")
send("a", rpc(1, "hello", {}))
send("a", rpc(2, "tasks.list"))
send("a", rpc(3, "nope"))
send("a", {"jsonrpc": "2.0", "id": 4})
send("a", {"jsonrpc": "2.0", "id": 5, "method": 5})
send("a", {"jsonrpc": "2.0", "id": 6, "method": None})
send("a", {"jsonrpc": "2.0", "method": "nope"}, replies=0)
send("a", rpc("str-id", "tasks.list", []))
send("a", rpc(1.5, "tasks.start", {"id": 7}))
send("a", rpc(0, "tasks.start", {"id": "echo", "args": [1]}))
send("a", rpc(8, "tasks.start", {"id": "nope"}))
send("a", rpc(9, "tasks.start", {"id": "echo"}))
send("a", rpc(10, "tasks.start", {"id": "echo", "args": None}))
send("a", rpc(11, "tasks.start", {"id": "echo", "args": {"word": "hi", "extra": 1}}))
send("a", rpc(12, "tasks.start", {"id": "graded", "args": {"m": 1}}))
send("a", rpc(13, "tasks.grade", {"answer": "hi"}))
send("a", rpc(14, "tasks.start", {"id": "echo", "args": {"word": "hi"}}))
send("a", rpc(15, "tasks.grade", {"answer": "hi"}))
send("a", rpc(16, "tasks.start", {"id": "echo", "args": {"word": "hi"}}))
send("a", rpc(17, "tasks.grade", {"answer": "no"}))
send("a", rpc(18, "tasks.start", {"id": "graded", "args": {"n": 4}}))
send("a", rpc(19, "tasks.grade", {}))
send("a", rpc(20, "tasks.start", {"id": "typed"}))
send("a", rpc(21, "tasks.grade", {"answer": "[1, 2, 3]"}))
send("a", rpc(22, "tasks.start", {"id": "typed"}))
send("a", rpc(23, "tasks.grade", {"answer": "three"}))
send("a", rpc(24, "tasks.start", {"id": "typed"}))
send("a", rpc(25, "tasks.grade", {"answer": {"not": "a list"}}))
send("a", rpc(26, "tasks.start", {"id": "fails"}))
send("a", rpc(27, "tasks.start", {"id": "fails_grade"}))
send("a", rpc(28, "tasks.grade", {"answer": 1}))
send("a", rpc(29, "tasks.start", {"id": "nonfinite"}))
send("a", rpc(30, "tasks.grade", {"answer": 1}))
send("a", rpc(31, "tasks.start", {"id": "panics"}))
send("a", rpc(32, "tasks.grade", {"answer": 1}))
send("a", rpc(33, "tasks.start", {"id": "echo", "args": {"word": "hi"}}))
send("a", rpc(34, "tasks.grade", [1]))
send("a", rpc(35, "tasks.grade", {"answer": "hi"}))
send("a", rpc(36, "tasks.start", {"id": "echo", "args": {"word": "hi"}}))
send("a", rpc(37, "tasks.cancel"))
send("a", rpc(38, "tasks.grade", {"answer": "hi"}))
send("a", rpc(39, "tasks.start", {"id": "slow"}), replies=0)
send("a", rpc(40, "tasks.list"))
send("a", rpc(41, "tasks.grade", {"answer": "x"}))
send("a", rpc(42, "tasks.cancel"), replies=2)
send("a", rpc(43, "hello", {"session_id": 5}))
send("a", rpc(44, "hello", {"session_id": "sess-00000000"}))
send("a", rpc(45, "hello", {"session_id": "$a"}))
send("a", rpc(46, "hello", {"workspace_routes": {}}))
send("a", rpc(47, "hello", {"workspace_routes": [1]}))
send("a", rpc(48, "hello", {"workspace_routes": [{"capability": "shell", "host": "db", "port": True}]}))
send("a", rpc(49, "hello", {"workspace_routes": [{"capability": "shell", "host": "10.0.0.1", "port": 5432}]}))
send("a", rpc(50, "hello", {"workspace_routes": [{"capability": "shell", "host": "db", "port": 70000}]}))
send("a", rpc(51, "hello", {"workspace_routes": [{"capability": "shell", "host": "db", "port": 5432}]}))
send("a", rpc(52, "hello", {"connections": None}))
send("a", rpc(53, "hello", {"connections": [{"name": "Bad", "capability": "c", "url": "http://x", "headers": {"a": "b"}}]}))
send("a", rpc(54, "hello", {"connections": [{"name": "api", "capability": "shell", "url": "ftp://x", "headers": {"a": "b"}}]}))
send("a", rpc(55, "hello", {"connections": [{"name": "api", "capability": "shell", "url": "http://x", "headers": {}}]}))
send("a", rpc(56, "hello", {"connections": [{"name": "api", "capability": "shell", "url": "http://x", "headers": {"a": "b"}}]}))
send("a", rpc(57, "hello", ["params", "as", "a", "list"]))
send("a", rpc(58, "hello", {}))
send("a", rpc(59, "bye"))
eof("a")

# A start left by a hang-up parks its task; the session resumes by id and grades it.
open_("p")
send("p", rpc(1, "hello", {}))
send("p", rpc(2, "tasks.start", {"id": "echo", "args": {"word": "parked"}}))
close("p")
open_("q")
send("q", rpc(1, "hello", {"session_id": "$p"}))
send("q", rpc(2, "tasks.grade", {"answer": "parked"}))
send("q", rpc(3, "tasks.grade", {"answer": "parked"}))
send("q", rpc(4, "bye"))
eof("q")

# With one parked task, any connection's grade adopts it.
open_("r")
send("r", rpc(1, "hello", {}))
send("r", rpc(2, "tasks.start", {"id": "echo", "args": {"word": "adopted"}}))
close("r")
open_("s")
send("s", rpc(1, "hello", {}))
send("s", rpc(2, "tasks.grade", {"answer": "adopted"}))
send("s", rpc(3, "bye"))
eof("s")

# With two, a blind grade is refused; resuming each and saying bye cancels them.
for name in ("t", "u"):
    open_(name)
    send(name, rpc(1, "hello", {}))
    send(name, rpc(2, "tasks.start", {"id": "echo", "args": {"word": name}}))
    close(name)
open_("v")
send("v", rpc(1, "hello", {}))
send("v", rpc(2, "tasks.grade", {"answer": "t"}))
send("v", rpc(3, "hello", {"session_id": "$t"}))
send("v", rpc(4, "bye"))
eof("v")
open_("w")
send("w", rpc(1, "hello", {"session_id": "$u"}))
send("w", rpc(2, "tasks.cancel"))
send("w", rpc(3, "tasks.grade", {"answer": "u"}))
close("w")

# A session with a live connection cannot be taken over.
open_("y")
send("y", rpc(1, "hello", {}))
open_("z")
send("z", rpc(1, "hello", {"session_id": "$y"}))
close("z")
close("y")

# A hang-up during a grade cancels it: its command is killed and nothing is left to grade.
pid_file = os.path.join(tempfile.mkdtemp(), "pid")
open_("g")
send("g", rpc(1, "hello", {}))
send("g", rpc(2, "tasks.start", {"id": "sleeper", "args": {"pid_file": pid_file}}), label="start sleeper")
send("g", rpc(3, "tasks.grade", {"answer": "done"}), replies=0)
deadline = time.time() + 20
while not (os.path.exists(pid_file) and open(pid_file).read().strip()):
    assert time.time() < deadline, "the grade's command never started"
    time.sleep(0.02)
pid = int(open(pid_file).read())
close("g")


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(") ", 1)[1][0] not in "ZX"
    except OSError:
        return False


deadline = time.time() + 10
while alive(pid) and time.time() < deadline:
    time.sleep(0.02)
transcript.append({"conn": "g", "command_alive_after_hang_up": alive(pid)})
open_("h")
send("h", rpc(1, "hello", {}))
send("h", rpc(2, "tasks.grade", {"answer": "done"}))
close("h")

# Frames Python's json reads and serde_json alone would refuse, each answered as the
# reference answers it: ids beyond 64 bits, a byte-order mark, a lone surrogate, deep nesting;
# and a prompt whose reply is over the limit only once non-ASCII is escaped.
open_("x")
send("x", rpc(123456789012345678901234567890, "hello", {}))
send("x", rpc(-98765432109876543210, "tasks.cancel"))
send("x", rpc(1e16, "tasks.cancel"))
send("x", b"\xef\xbb\xbf" + json.dumps(rpc(1, "tasks.cancel")).encode() + b"\n", label="a byte-order mark")
send("x", rpc(2, "tasks.start", {"id": "echo", "args": {"word": "w"}}))
send("x", b'{"jsonrpc":"2.0","id":3,"method":"tasks.grade","params":{"answer":"\\ud800"}}\n', label="a lone surrogate")
send("x", rpc(4, "tasks.start", {"id": "echo", "args": {"word": "w"}}))
deep = "[" * 200 + "]" * 200
send("x", ('{"jsonrpc":"2.0","id":5,"method":"tasks.grade","params":{"answer":%s}}\n' % deep).encode(), label="an answer nested 200 deep")
wide = json.dumps(rpc(6, "tasks.start", {"id": "echo", "args": {"word": "\u00e9" * 3000000}}), ensure_ascii=False)
send("x", wide.encode() + b"\n", label="a prompt of 3 000 000 e-acute")
send("x", rpc(7, "bye"))
eof("x")
open_("x2")
deeper = "[" * 1000 + "]" * 1000
send("x2", ('{"jsonrpc":"2.0","id":1,"method":"tasks.list","params":{"x":%s}}\n' % deeper).encode(), replies=0, label="a frame nested 1000 deep")
eof("x2")

# Hostile connections: each ends the connection the reference's way.
open_("m")
send("m", b"{not json}\n", replies=0, label="malformed JSON")
eof("m")
open_("m2")
send("m2", rpc(1, "hello", {}))
send("m2", b"[1, 2]\n", replies=0, label="a JSON array")
eof("m2")
open_("m3")
send("m3", b"\n", replies=0, label="an empty line")
eof("m3")
open_("big")
send("big", b'{"x":"' + b"a" * LIMIT + b'"}\n', replies=0, label="a frame over 16 MiB")
eof("big")
open_("nl")
conns["nl"].sendall(b'{"jsonrpc":"2.0","id":1,"method":"tasks.list","params":{}}')
conns["nl"].shutdown(socket.SHUT_WR)
transcript.append({"conn": "nl", "sent": "a last frame without a newline"})
eof("nl")
open_("tun")
send("tun", rpc(1, "tunnel.open", {"capability": "nope"}))
eof("tun")
open_("tun2")
send("tun2", rpc(1, "tunnel.open", {}))
eof("tun2")

json.dump(transcript, sys.stdout)
