"""math-verify's configuration classes (and latex2sympy2_extended's ``NormalizationConfig``),
with the same names, fields and defaults, so that code written for math-verify moves to
graderkit by changing its imports.

They are plain frozen dataclasses: hashable, comparable, picklable. graderkit reads them into
its native configuration on each call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Union

__all__ = [
    "ExprExtractionConfig",
    "ExtractionTarget",
    "LatexExtractionConfig",
    "NormalizationConfig",
    "StringExtractionConfig",
]


@dataclass(frozen=True)
class NormalizationConfig:
    """latex2sympy2_extended 1.11.0's ``NormalizationConfig``: which groups of LaTeX clean-ups
    run before an answer is read.

    - ``basic_latex``: basic command replacements (``\\mathrm``, ``\\displaystyle``, ...);
    - ``units``: units and their variations removed;
    - ``malformed_operators``: malformed operators fixed (``\\sqrt2``, ``\\frac12``, ...);
    - ``nits``: small formatting fixes (spaces, dots, ...);
    - ``boxed``: which ``\\boxed{}`` contents are kept: ``"all"``, ``"last"`` or ``"none"``;
    - ``equations``: equation splitting and approximations (deprecated upstream).
    """

    basic_latex: bool = True
    units: bool = False
    malformed_operators: bool = False
    nits: bool = False
    boxed: Literal["all", "last", "none"] = "all"
    equations: bool = False


@dataclass(frozen=True)
class LatexExtractionConfig:
    """math-verify 0.9.0's ``LatexExtractionConfig``: extract LaTeX (``$...$``, ``\\[...\\]``,
    ``\\boxed{}``, after "the final answer is").

    - ``try_extract_without_anchor``: also try LaTeX not introduced by an anchor phrase;
    - ``boxed_match_priority``: where ``\\boxed{}`` ranks: 0 first, 50 (the default) after the
      final-answer patterns, -1 never;
    - ``normalization_config``: the clean-ups applied before reading.
    """

    try_extract_without_anchor: bool = True
    boxed_match_priority: int = 50
    normalization_config: NormalizationConfig = field(
        default_factory=lambda: NormalizationConfig(
            basic_latex=True,
            units=True,
            malformed_operators=True,
            nits=True,
            boxed="all",
            equations=False,
        )
    )


@dataclass(frozen=True)
class ExprExtractionConfig:
    """math-verify 0.9.0's ``ExprExtractionConfig``: extract plain expressions (``1/2``,
    ``3.5``, ``x^2``)."""

    try_extract_without_anchor: bool = True


@dataclass(frozen=True)
class StringExtractionConfig:
    """math-verify 0.9.0's ``StringExtractionConfig``: extract one of the literal ``strings``
    (a multiple choice's letters by default), lowercased when ``lowercase``."""

    strings: tuple[str, ...] = field(default_factory=lambda: ("A", "B", "C", "D"))
    try_extract_without_anchor: bool = True
    lowercase: bool = True


ExtractionTarget = Union[LatexExtractionConfig, ExprExtractionConfig, StringExtractionConfig]


def to_native(targets: object) -> list[dict[str, object]]:
    """The extraction targets in the native module's form (grader-core's ``ExtractionTarget``
    as serde writes it: ``{"latex": {...}}``), with a ``TypeError`` naming anything that is not
    a configuration."""
    if isinstance(targets, (LatexExtractionConfig, ExprExtractionConfig, StringExtractionConfig)):
        targets = [targets]
    if not isinstance(targets, (list, tuple)):
        raise TypeError(
            "extraction_config must be a list of LatexExtractionConfig, ExprExtractionConfig "
            f"or StringExtractionConfig, not {type(targets).__name__}"
        )
    out: list[dict[str, object]] = []
    for target in targets:
        if isinstance(target, LatexExtractionConfig):
            norm = target.normalization_config
            if not isinstance(norm, NormalizationConfig):
                raise TypeError(
                    "normalization_config must be a NormalizationConfig, "
                    f"not {type(norm).__name__}"
                )
            if norm.boxed not in ("all", "last", "none"):
                raise ValueError(f"boxed must be 'all', 'last' or 'none', not {norm.boxed!r}")
            out.append(
                {
                    "latex": {
                        "try_extract_without_anchor": bool(target.try_extract_without_anchor),
                        "boxed_match_priority": int(target.boxed_match_priority),
                        "normalization_config": {
                            "basic_latex": bool(norm.basic_latex),
                            "units": bool(norm.units),
                            "malformed_operators": bool(norm.malformed_operators),
                            "nits": bool(norm.nits),
                            "boxed": norm.boxed,
                            "equations": bool(norm.equations),
                        },
                    }
                }
            )
        elif isinstance(target, ExprExtractionConfig):
            out.append(
                {"expr": {"try_extract_without_anchor": bool(target.try_extract_without_anchor)}}
            )
        elif isinstance(target, StringExtractionConfig):
            strings = target.strings
            if isinstance(strings, str) or not all(isinstance(x, str) for x in strings):
                raise TypeError("strings must be a tuple of str")
            out.append(
                {
                    "string": {
                        "strings": list(strings),
                        "try_extract_without_anchor": bool(target.try_extract_without_anchor),
                        "lowercase": bool(target.lowercase),
                    }
                }
            )
        else:
            raise TypeError(
                "each extraction target must be a LatexExtractionConfig, ExprExtractionConfig or "
                f"StringExtractionConfig, not {type(target).__name__}"
            )
    return out
