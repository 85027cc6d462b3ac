"""The reference's text helpers (hud.graders.text), compared with hud itself."""

from __future__ import annotations

import os
import random

import pytest

import graderkit
from conftest import run_in

SCRIPT = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
from hud.graders import text
out = []
for case in json.load(sys.stdin):
    f = getattr(text, case["f"])
    out.append(f(*case["args"], **case.get("kwargs", {})))
print(json.dumps(out))
"""

PIECES = ["The", "answer", "is", "42", "Paris", "paris!", "an", "ΟΔΟΣ", "İstanbul", "٣", "3.14",
          "-2e3", "  ", "\t", "_x_", "½", "a.b", "¿qué?"]


def cases() -> list[dict]:
    rng = random.Random(7)
    out = []
    for _ in range(300):
        a = " ".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6)))
        b = " ".join(rng.choice(PIECES) for _ in range(rng.randint(0, 3)))
        flag = rng.random() < 0.5
        out += [
            {"f": "normalize", "args": [a]},
            {"f": "exact_match", "args": [a, b], "kwargs": {"normalize_text": flag}},
            {"f": "contains", "args": [a, b], "kwargs": {"case_sensitive": flag}},
            {"f": "contains_any", "args": [a, b.split()], "kwargs": {"case_sensitive": flag}},
            {"f": "contains_all", "args": [a, b.split()], "kwargs": {"case_sensitive": flag}},
            {"f": "numeric_match", "args": [a, 42.0], "kwargs": {"tolerance": 0.5 if flag else 0.0}},
            {"f": "f1_score", "args": [a, b]},
        ]
    return out


def test_every_helper_gives_the_reference_s_value() -> None:
    hud = os.environ.get("GRADERKIT_TEST_HUD_PYTHON")
    if not hud:
        pytest.fail("GRADERKIT_TEST_HUD_PYTHON is not set (run through cargo test)")
    all_cases = cases()
    theirs = run_in(hud, SCRIPT, all_cases)
    differ = []
    for case, expected in zip(all_cases, theirs, strict=True):
        got = getattr(graderkit, case["f"])(*case["args"], **case.get("kwargs", {}))
        if got != expected:
            differ.append((case, got, expected))
    assert not differ, differ[:10]
