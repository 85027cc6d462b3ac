"""graderkit's reward in a real verifiers 0.3.1 environment: a ``SingleTurnEnv`` whose rubric is
``graderkit.verifiers.rubric()``, evaluated by verifiers itself (its client, its rollouts, its
rubric's calls) against a scripted OpenAI-compatible server on 127.0.0.1: no model is reached,
each question's reply is written here."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import run_in

#: question, gold, the scripted reply, and the reward verifiers must record.
ROWS = [
    ("What is 6 x 7?", "$42$", "6 x 7 = 42, so the answer is $\\boxed{42}$.", 1.0),
    ("Half of one?", "$\\frac{1}{2}$", "It is \\boxed{0.5}", 1.0),
    ("What is 2^10?", "$1024$", "I think it is \\boxed{1000}.", 0.0),
    ("Is there an answer?", "$3$", "No idea.", 0.0),
    # A gold read only in part is not computed: graderkit raises, and verifiers' error path
    # logs the error and records 0 (verifiers has no "not computed").
    ("Read the gold?", "the answer is 72", "\\boxed{72}", 0.0),
]

#: Runs in verifiers' environment: the data set, the environment, the evaluation.
SCRIPT = r"""
import json, os, sys, logging
logging.basicConfig(level=logging.ERROR)
from datasets import Dataset
import verifiers as vf
from graderkit.verifiers import rubric

data = json.load(sys.stdin)
rows = [{"question": q, "answer": a} for q, a in data["rows"]]
env = vf.SingleTurnEnv(dataset=Dataset.from_list(rows), rubric=rubric())
config = vf.ClientConfig(
    api_base_url=data["base_url"], api_key_var="GRADERKIT_TEST_KEY", max_retries=0, timeout=60.0
)
out = env.evaluate_sync(client=config, model="scripted", num_examples=-1, rollouts_per_example=1)
print(json.dumps([
    {"answer": o.get("answer"), "reward": o["reward"], "metrics": o["metrics"]}
    for o in out["outputs"]
]))
"""


class Scripted(BaseHTTPRequestHandler):
    """OpenAI's chat completions: the reply scripted for the last user message."""

    replies: dict[str, str] = {}
    asked: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        question = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        if isinstance(question, list):  # content parts
            question = "".join(p.get("text", "") for p in question)
        self.asked.append(question)
        reply = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.replies[question]},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass


@pytest.fixture
def server() -> Iterator[str]:
    Scripted.replies = {q: reply for q, _, reply, _ in ROWS}
    Scripted.asked = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def test_a_verifiers_environment_scores_with_graderkit_s_rubric(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = os.environ.get("GRADERKIT_TEST_VERIFIERS_PYTHON")
    if not python:
        pytest.fail("GRADERKIT_TEST_VERIFIERS_PYTHON is not set (run through cargo test)")
    monkeypatch.setenv("GRADERKIT_TEST_KEY", "not-a-key")  # the client reads its key from it
    outputs = run_in(python, SCRIPT, {"base_url": server, "rows": [[q, g] for q, g, _, _ in ROWS]})
    assert sorted(Scripted.asked) == sorted(q for q, *_ in ROWS)  # one rollout each
    by_gold = {o["answer"]: o for o in outputs}
    assert len(by_gold) == len(ROWS)
    for _, gold, _, reward in ROWS:
        assert by_gold[gold]["reward"] == reward, (gold, by_gold[gold])
        assert by_gold[gold]["metrics"]["math_reward"] == reward
