"""The math reward underneath every trainer's shape: a batch of (gold, completion) pairs scored
on native threads without the GIL, each pair either scored or "not computed" with a reason.

- An answer that cannot be read, or one past a bound (its length, nesting, digits, the work of
  comparing it), scores 0.0 with the reason: an agent cannot escape a 0 by writing something
  unjudgeable.
- A pair whose reward could not be computed for a reason outside the answer (a gold that cannot
  be read or that would be read only in part, the batch's deadline passed) is ``None`` with
  the reason. Each trainer module turns that into the trainer's own "not computed".
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graderkit import _native
from graderkit._config import ExtractionTarget, to_native

logger = logging.getLogger("graderkit")

#: The configurations of math rewards that trainers ship, by name: how each reads the gold and
#: the completion and compares them. ``"math_verify"`` is math-verify's own defaults.
PRESETS = ("math_verify", "trl", "open_r1", "verl")


@dataclass(frozen=True)
class Outcome:
    """One pair's result: ``reward`` (``None`` when not computed), and why where it is not a
    plain verdict; what each side parsed to, as TRL logs them."""

    reward: float | None
    reason: str | None
    gold_parsed: str
    answer_parsed: str


@dataclass(frozen=True)
class MathConfig:
    """How a math reward reads golds and answers and compares them.

    ``preset`` names a trainer's configuration (see :data:`PRESETS`); the other fields, when
    given, replace the preset's: the extraction targets of the gold and of the answer, the
    extraction mode of each, and ``verify``'s options. ``semantics`` is ``"exact"`` (two
    different exact values are never equal) or ``"parity"`` (math-verify's verdicts, its
    rounding included).
    """

    preset: str = "math_verify"
    gold_extraction_config: Sequence[ExtractionTarget] | None = None
    answer_extraction_config: Sequence[ExtractionTarget] | None = None
    gold_extraction_mode: str | None = None
    answer_extraction_mode: str | None = None
    float_rounding: int | None = None
    numeric_precision: int | None = None
    strict: bool | None = None
    allow_set_relation_comp: bool | None = None
    semantics: str = "exact"

    def to_json(self) -> str:
        """The configuration as the native module reads it."""
        if self.preset not in PRESETS:
            raise ValueError(f"preset must be one of {', '.join(PRESETS)}, not {self.preset!r}")
        if self.semantics not in ("exact", "parity"):
            raise ValueError(f"semantics must be 'exact' or 'parity', not {self.semantics!r}")
        out: dict[str, Any] = {"preset": self.preset, "semantics": self.semantics}
        if self.gold_extraction_config is not None:
            out["gold_targets"] = to_native(self.gold_extraction_config)
        if self.answer_extraction_config is not None:
            out["answer_targets"] = to_native(self.answer_extraction_config)
        for key in (
            "gold_extraction_mode",
            "answer_extraction_mode",
            "float_rounding",
            "numeric_precision",
            "strict",
            "allow_set_relation_comp",
        ):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return json.dumps(out)


class MathRewardBase:
    """What the trainers' math reward objects share: a configuration (the trainer's preset by
    default), the native threads of a batch and its deadline. Instances pickle, and their
    ``repr`` shows all three."""

    #: The preset used when no configuration is given.
    preset = "math_verify"
    #: The function name the trainer logs the reward under.
    name = "reward"

    def __init__(
        self,
        config: MathConfig | None = None,
        *,
        threads: int | None = None,
        deadline: float | None = None,
    ) -> None:
        self.config = config if config is not None else MathConfig(preset=self.preset)
        self.threads = threads
        self.deadline = deadline
        self.__name__ = self.name

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(config={self.config!r}, threads={self.threads!r}, "
            f"deadline={self.deadline!r})"
        )


def _check_deadline(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)):
        raise TypeError(f"deadline must be a number of seconds, not {type(deadline).__name__}")
    if not math.isfinite(deadline) or deadline <= 0:
        raise ValueError(f"deadline must be a positive number of seconds, not {deadline!r}")
    return float(deadline)


def _check_threads(threads: int | None) -> int | None:
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"threads must be an int, not {type(threads).__name__}")
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    return threads


def score_pairs(
    golds: Sequence[str],
    answers: Sequence[str],
    config: MathConfig,
    *,
    threads: int | None = None,
    deadline: float | None = None,
) -> list[Outcome]:
    """Scores each ``(gold, answer)`` pair: 1.0 or 0.0, ``None`` where not computed.

    ``threads`` native threads share the batch (default: the machine's cores, at most 8, and
    never more than one per 16 pairs); ``deadline`` is the batch's time in seconds, past which
    the pairs still running stop and those not started are not computed.
    """
    if isinstance(golds, (str, bytes)) or isinstance(answers, (str, bytes)):
        raise TypeError("golds and answers must be lists of str, not a single string")
    golds, answers = list(golds), list(answers)
    if len(golds) != len(answers):
        raise ValueError(
            f"{len(golds)} golds for {len(answers)} answers: give one gold for each answer"
        )
    raw = _native.math_rewards(
        golds, answers, config.to_json(), _check_threads(threads), _check_deadline(deadline)
    )
    return [Outcome(*row) for row in raw]


def _message(item: object) -> tuple[object, object] | None:
    """A chat message's role and content: a dict (OpenAI's, TRL's), or an object with ``role``
    and ``content`` attributes (verifiers' ``AssistantMessage``, pydantic models)."""
    if isinstance(item, Mapping):
        return item.get("role", "assistant"), item.get("content")
    if hasattr(item, "content"):
        return getattr(item, "role", "assistant"), item.content
    return None


def completion_text(completion: object, index: int) -> str:
    """The text of one completion as trainers pass it: a ``str``, or chat messages (dicts or
    message objects with ``role`` and ``content``), whose last assistant message, or last
    message, is the answer."""
    if isinstance(completion, str):
        return completion
    items = completion if isinstance(completion, list) else [completion]
    messages = [_message(m) for m in items]
    if messages and all(m is not None for m in messages):
        assistant = [m for m in messages if m[0] == "assistant"]  # type: ignore[index]
        content = (assistant or messages)[-1][1]  # type: ignore[index]
        if isinstance(content, str):
            return content
        if isinstance(content, list):  # content parts
            parts = [
                (p.get("type", "text"), p.get("text", "")) if isinstance(p, Mapping)
                else (getattr(p, "type", "text"), getattr(p, "text", ""))
                for p in content
            ]
            return "".join(t for kind, t in parts if kind == "text" and isinstance(t, str))
    raise TypeError(
        f"completion {index} must be a str or a list of chat messages with a str content, "
        f"not {type(completion).__name__}"
    )


def report(outcomes: Sequence[Outcome], name: str) -> int:
    """Logs the batch's pairs that were not computed (one line, with the first reasons) and
    returns how many."""
    missing = [o for o in outcomes if o.reward is None]
    if missing:
        reasons = sorted({o.reason or "unknown" for o in missing})
        logger.warning(
            "%s: %d of %d rewards not computed: %s",
            name,
            len(missing),
            len(outcomes),
            "; ".join(reasons[:3]),
        )
    return len(missing)
