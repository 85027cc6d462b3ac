"""JSON Schema checks of an answer: what matched, where, and why not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graderkit import _native


@dataclass(frozen=True, slots=True)
class SchemaMismatch:
    """Why JSON does not match a schema: the keyword that failed (``type``, ``required``, …),
    where in the value and in the schema (JSON Pointers, ``""`` for the root), and a message."""

    keyword: str
    instance_path: str
    schema_path: str
    message: str


@dataclass(frozen=True, slots=True)
class SchemaMatch:
    """The verdict of a schema check; true when the answer matched.

    - ``matched``: JSON matching the schema was found;
    - ``json``: the answer is JSON (``matches_schema``) or holds a JSON object
      (``contains_schema_match``);
    - ``span``: where the matching JSON is in the answer, as ``answer[start:end]``;
    - ``mismatches``: why the JSON (for a search, the last object tried) does not match, at
      most 20;
    - ``reason``: why the answer could not be judged (a lone surrogate, JSON nested deeper
      than 128 levels or holding a number beyond a double, a search past its bound), which
      scores it as not matching; ``None`` when it was judged.
    """

    matched: bool
    json: bool
    span: tuple[int, int] | None = None
    mismatches: tuple[SchemaMismatch, ...] = ()
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.matched


def _result(checked: tuple[Any, ...]) -> SchemaMatch:
    matched, json, span, mismatches, reason = checked
    return SchemaMatch(
        matched,
        json,
        None if span is None else tuple(span),
        tuple(SchemaMismatch(*m) for m in mismatches),
        reason,
    )


def matches_schema(answer: str, schema: Any) -> SchemaMatch:
    """Whether ``answer`` is JSON matching ``schema`` (promptfoo's ``is-json`` with a schema):
    ``schema`` is a :class:`JsonSchema` or a schema as a Python value (compiled for this call).
    The draft is the schema's ``$schema``, 2020-12 without one; ``format`` is not asserted, as
    in Python's ``jsonschema`` without a format checker.

    Raises ``ValueError`` for a schema that is not a valid JSON Schema.

    >>> bool(matches_schema('{"age": 36}', {"type": "object", "required": ["age"]}))
    True
    """
    return _result(_native.matches_schema(answer, schema))


def contains_schema_match(answer: str, schema: Any) -> SchemaMatch:
    """Whether ``answer`` holds a JSON object matching ``schema`` (promptfoo's
    ``contains-json`` with a schema): the first object that does, found as
    :func:`contains_json` finds objects.

    >>> result = contains_schema_match('Done: {"city": "Paris"}.', {"required": ["city"]})
    >>> result.matched, result.span
    (True, (6, 23))
    """
    return _result(_native.contains_schema_match(answer, schema))
