"""math-verify's ``parse`` and ``verify``, with its names, keywords and defaults; and
``verify_many``, a batch on native threads.

Swapping ``from math_verify import parse, verify, LatexExtractionConfig, ...`` and
``from latex2sympy2_extended import NormalizationConfig`` for the same names from graderkit is
the migration. What differs, on purpose:

- verdicts are exact (``semantics="exact"``, the default): two different exact values are
  never equal, where math-verify rounds (``semantics="parity"`` gives math-verify's verdicts);
- timeouts are not signals: they hold on any thread, and a parse or comparison past its
  ``parsing_timeout`` or ``timeout_seconds`` stops there (an empty result or ``False``, or a
  ``LimitError`` with ``raise_on_error=True``);
- ``parse`` returns a :class:`Parsed` whose items are strings, not sympy objects; ``len()``,
  indexing, ``bool()`` and ``str()`` work as on math-verify's list.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

from graderkit import _native
from graderkit._config import (
    ExprExtractionConfig,
    ExtractionTarget,
    LatexExtractionConfig,
    to_native,
)
from graderkit._native import Parsed
from graderkit._rewards import MathConfig, score_pairs

__all__ = ["MATH_SEMANTICS", "Parsed", "parse", "verify", "verify_many"]

#: The version of the math verdicts' semantics (``info["math_semantics"]`` in Rust's graders):
#: 2 for the exact verdicts, 1 for math-verify's own (``semantics="parity"``).
MATH_SEMANTICS = _native.math_semantics_version("exact")


def _semantics(semantics: str) -> str:
    if semantics not in ("exact", "parity"):
        raise ValueError(f"semantics must be 'exact' or 'parity', not {semantics!r}")
    return semantics


def _timeout(value: int | None, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds or None, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, not {value!r}")
    return int(value)


def parse(
    pred: str,
    extraction_config: Sequence[ExtractionTarget] = (LatexExtractionConfig(), ExprExtractionConfig()),
    fallback_mode: Literal["no_fallback", "first_match"] = "first_match",
    extraction_mode: Literal["first_match", "any_match"] = "any_match",
    parsing_timeout: int | None = 5,
    raise_on_error: bool = False,
    *,
    semantics: Literal["exact", "parity"] = "exact",
) -> Parsed:
    """math-verify's ``parse``: the final answer in ``pred``, as the extraction targets find it.

    An answer past a bound, or a parse past ``parsing_timeout`` seconds, gives an empty result
    (a ``LimitError`` with ``raise_on_error=True``).
    """
    if fallback_mode not in ("no_fallback", "first_match"):
        raise ValueError(f"fallback_mode must be 'no_fallback' or 'first_match', not {fallback_mode!r}")
    if extraction_mode not in ("first_match", "any_match"):
        raise ValueError(f"extraction_mode must be 'first_match' or 'any_match', not {extraction_mode!r}")
    options = {
        "extraction_config": to_native(extraction_config),
        "fallback_mode": fallback_mode,
        "extraction_mode": extraction_mode,
        "parsing_timeout": _timeout(parsing_timeout, "parsing_timeout"),
        "raise_on_error": bool(raise_on_error),
        "semantics": _semantics(semantics),
    }
    return _native.parse(pred, json.dumps(options))


def verify(
    gold: Parsed | str,
    target: Parsed | str,
    float_rounding: int = 6,
    numeric_precision: int = 15,
    strict: bool = True,
    allow_set_relation_comp: bool = False,
    timeout_seconds: int | None = 5,
    raise_on_error: bool = False,
    *,
    semantics: Literal["exact", "parity"] = "exact",
) -> bool:
    """math-verify's ``verify``: whether ``target``'s answer is ``gold``'s (both from
    :func:`parse`; a ``str`` is compared as a string, as math-verify compares one).

    A comparison past its work bound or ``timeout_seconds`` is ``False`` (a ``LimitError`` with
    ``raise_on_error=True``).
    """
    for name, value in (("float_rounding", float_rounding), ("numeric_precision", numeric_precision)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative int, not {value!r}")
    options = {
        "float_rounding": float_rounding,
        "numeric_precision": numeric_precision,
        "strict": bool(strict),
        "allow_set_relation_comp": bool(allow_set_relation_comp),
        "timeout_seconds": _timeout(timeout_seconds, "timeout_seconds"),
        "raise_on_error": bool(raise_on_error),
        "semantics": _semantics(semantics),
    }
    return _native.verify(gold, target, json.dumps(options))


def verify_many(
    golds: Sequence[str],
    answers: Sequence[str],
    *,
    config: MathConfig | None = None,
    threads: int | None = None,
    deadline: float | None = None,
) -> list[bool | None]:
    """Verifies each answer against its gold, on native threads without the GIL.

    ``config`` says how both are read and compared (math-verify's defaults unless given; see
    :class:`MathConfig` for the trainers' presets). Each result is ``True``, ``False`` (an
    answer that cannot be read or is past a bound is ``False``), or ``None`` where the verdict
    could not be reached: a gold that cannot be read whole, or ``deadline`` (seconds for the
    whole batch) passed. ``threads`` defaults to the machine's cores, at most 8 and one per 16
    pairs; with a trainer's own worker processes, give each ``cores // workers``.
    """
    outcomes = score_pairs(
        golds, answers, config if config is not None else MathConfig(), threads=threads, deadline=deadline
    )
    return [None if o.reward is None else o.reward >= 1.0 for o in outcomes]
