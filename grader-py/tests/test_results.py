"""Combined results are the HUD SDK's own: the same reward and keys, read back by the SDK."""

from __future__ import annotations

import json
import os

import pytest

import graderkit
from conftest import run_in

SDK = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
from hud.graders import EvaluationResult, SubScore, _combine_subscores, combine_any, combine_all
cases = json.load(sys.stdin)
out = []
for case in cases:
    subs = [SubScore(**s) for s in case["subs"]]
    if case["kind"] == "combine":
        out.append(json.loads(_combine_subscores(subs).model_dump_json()))
    elif case["kind"] == "read":
        out.append(json.loads(EvaluationResult.model_validate(case["result"]).model_dump_json()))
    else:
        f = combine_any if case["kind"] == "any" else combine_all
        out.append(json.loads(f(case["weight"], subs).model_dump_json()))
print(json.dumps(out))
"""

CASES = [
    [("tests", 1.0, 0.7), ("lint", 0.5, 0.3)],
    [("ok", 0.0, 1.0), ("penalty", 1.0, -0.5)],
    [("a", 0.25, 2.0), ("b", 0.75, 2.0), ("c", 1.0, -0.25)],
    [("only", 0.4, 1.0)],
]


def hud() -> str:
    path = os.environ.get("GRADERKIT_TEST_HUD_PYTHON")
    if not path:
        pytest.fail("GRADERKIT_TEST_HUD_PYTHON is not set (run through cargo test)")
    return path


def test_combine_gives_the_sdk_s_reward_and_the_sdk_reads_it_unchanged() -> None:
    payload = [
        {"kind": "combine", "subs": [{"name": n, "value": v, "weight": w} for n, v, w in case]}
        for case in CASES
    ]
    theirs = run_in(hud(), SDK, payload)
    ours = [graderkit.combine([graderkit.subscore(n, v, w) for n, v, w in case]) for case in CASES]
    for mine, sdk in zip(ours, theirs, strict=True):
        assert mine["reward"] == pytest.approx(sdk["reward"], abs=1e-12)
    read_back = run_in(hud(), SDK, [{"kind": "read", "subs": [], "result": r} for r in ours])
    for mine, sdk in zip(ours, read_back, strict=True):
        assert sdk["reward"] == mine["reward"]
        assert [s["name"] for s in sdk["subscores"]] == [s["name"] for s in mine["subscores"]]


@pytest.mark.parametrize("kind", ["any", "all"])
def test_any_and_all_are_the_sdk_s(kind: str) -> None:
    subs = [("a", 0.2, 1.0), ("b", 0.9, 1.0)]
    theirs = run_in(
        hud(),
        SDK,
        [{"kind": kind, "weight": 0.5, "subs": [{"name": n, "value": v, "weight": w} for n, v, w in subs]}],
    )[0]
    combine = graderkit.combine_any if kind == "any" else graderkit.combine_all
    ours = combine(0.5, [graderkit.subscore(n, v, w) for n, v, w in subs])
    assert ours["value"] == theirs["value"]
    assert ours["weight"] == theirs["weight"]
    assert ours["name"] == theirs["name"] == kind
    assert [c["name"] for c in ours["children"]] == ["a", "b"]


def test_a_penalty_lowers_the_reward_below_zero() -> None:
    result = graderkit.combine(
        [graderkit.subscore("tests", 0.0, 1.0), graderkit.subscore("deleted tests", 1.0, -0.5)]
    )
    assert result["reward"] == -0.5
    json.dumps(result)  # plain JSON types only


@pytest.mark.parametrize("value", [1.5, -0.1, float("nan")])
def test_a_value_outside_zero_one_is_a_value_error(value: float) -> None:
    with pytest.raises(ValueError):
        graderkit.subscore("x", value)


def test_info_is_kept() -> None:
    sub = graderkit.subscore("x", 1.0, info={"exit_code": 0, "stdout": "ok"})
    assert sub["info"]["exit_code"] == 0
    result = graderkit.combine([sub])
    assert result["subscores"][0]["info"]["stdout"] == "ok"
