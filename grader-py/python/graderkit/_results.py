"""Subscores combined into the platform's ``EvaluationResult``, as dicts in the wire format."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from graderkit import _native


def subscore(
    name: str, value: float, weight: float = 1.0, info: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One named check: ``value`` in ``[0, 1]``, ``weight`` finite (negative for a penalty).

    Raises ``ValueError`` for a value outside ``[0, 1]``, a NaN, or an infinite weight.
    """
    raw = _native.subscore(name, value, weight, None if info is None else json.dumps(dict(info)))
    return json.loads(raw)


def combine(subscores: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``EvaluationResult`` of ``subscores``: the reward is the weighted sum, positive
    weights scaled to sum to 1 and penalties subtracted (the HUD SDK's ``combine``)."""
    return json.loads(_native.combine(json.dumps([dict(s) for s in subscores])))


def combine_any(
    weight: float, subscores: Iterable[Mapping[str, Any]], *, name: str = "any"
) -> dict[str, Any]:
    """A node worth the best of ``subscores`` (the HUD SDK's ``combine_any``), its children
    kept under ``children``."""
    return json.loads(_native.node("any", name, weight, json.dumps([dict(s) for s in subscores])))


def combine_all(
    weight: float, subscores: Iterable[Mapping[str, Any]], *, name: str = "all"
) -> dict[str, Any]:
    """A node worth the worst of ``subscores`` (the HUD SDK's ``combine_all``)."""
    return json.loads(_native.node("all", name, weight, json.dumps([dict(s) for s in subscores])))
