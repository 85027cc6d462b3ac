"""graderkit: graders for RL rewards and agent evaluations, with a Rust core.

The functions here give the verdicts of the Python packages they are named after (the HUD SDK's
text helpers, rapidfuzz, rouge-score, sacrebleu, math-verify, Inspect AI, verifiers' parsers,
promptfoo's JSON checks and Python's ``jsonschema``), bounded in time and memory, without
signals, releasing the GIL while they work. Every error they raise derives from
:class:`GraderError`, itself an ``Exception``.
"""

from __future__ import annotations

from typing import NamedTuple

from graderkit import _native, scorer
from graderkit._formats import (
    MaybeThinkParser,
    Parser,
    ThinkParser,
    XMLParser,
    think_format_reward,
)
from graderkit._json import SchemaMatch, SchemaMismatch, contains_schema_match, matches_schema
from graderkit._config import (
    ExprExtractionConfig,
    ExtractionTarget,
    LatexExtractionConfig,
    NormalizationConfig,
    StringExtractionConfig,
)
from graderkit._math import MATH_SEMANTICS, Parsed, parse, verify, verify_many
from graderkit._results import combine, combine_all, combine_any, subscore
from graderkit._rewards import PRESETS, MathConfig
from graderkit._native import (
    BashGrader,
    CommandError,
    GraderError,
    JsonSchema,
    LimitError,
    PanicError,
    Sandbox,
    __version__,
    bleu,
    chrf,
    contains,
    contains_all,
    contains_any,
    contains_json,
    exact_match,
    f1_score,
    indel,
    is_json,
    json_equals,
    levenshtein,
    levenshtein_similarity,
    normalize,
    numeric_match,
    ratio,
)

__all__ = [
    "MATH_SEMANTICS",
    "PRESETS",
    "ExprExtractionConfig",
    "ExtractionTarget",
    "LatexExtractionConfig",
    "MathConfig",
    "NormalizationConfig",
    "Parsed",
    "StringExtractionConfig",
    "parse",
    "verify",
    "verify_many",
    "BashGrader",
    "CommandError",
    "GraderError",
    "JsonSchema",
    "LimitError",
    "MaybeThinkParser",
    "PanicError",
    "Parser",
    "Sandbox",
    "SchemaMatch",
    "SchemaMismatch",
    "Score",
    "ThinkParser",
    "XMLParser",
    "__version__",
    "bleu",
    "chrf",
    "combine",
    "combine_all",
    "combine_any",
    "contains",
    "contains_all",
    "contains_any",
    "contains_json",
    "contains_schema_match",
    "exact_match",
    "f1_score",
    "indel",
    "is_json",
    "json_equals",
    "levenshtein",
    "levenshtein_similarity",
    "matches_schema",
    "normalize",
    "numeric_match",
    "ratio",
    "rouge_l",
    "rouge_n",
    "scorer",
    "subscore",
    "think_format_reward",
]


class Score(NamedTuple):
    """A ROUGE score, as rouge-score's ``Score``: precision, recall and their F-measure."""

    precision: float
    recall: float
    fmeasure: float


def rouge_n(target: str, prediction: str, n: int = 1) -> Score:
    """rouge-score's ROUGE-N of ``prediction`` against ``target`` (its default tokenizer)."""
    return Score(*_native.rouge_n(target, prediction, n))


def rouge_l(target: str, prediction: str) -> Score:
    """rouge-score's ROUGE-L of ``prediction`` against ``target`` (its default tokenizer)."""
    return Score(*_native.rouge_l(target, prediction))
