"""The parsers, Inspect's scorers and the JSON checks give the same results from 8 threads at
once, on objects the threads share, as one after the other (each call releases the GIL)."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import graderkit
from graderkit import JsonSchema, ThinkParser, XMLParser, scorer
from test_formats import FIELDS, random_text
from test_scorer import answered


def test_shared_objects_from_many_threads() -> None:
    rng = random.Random(3)
    parsers = [XMLParser(fields) for fields in FIELDS]
    schema = JsonSchema({"type": "object", "required": ["a"]})
    calls: list[Callable[[], Any]] = []
    for _ in range(2000):
        text = random_text(rng)
        completion = answered(rng)
        parser = rng.choice(parsers)
        calls += [
            lambda p=parser, t=text: vars(p.parse(t, last=True)),
            lambda p=parser, t=text: p.parse_answer(t),
            lambda t=text: ThinkParser().parse(t),
            lambda c=completion: scorer.answer(c, "A", "letter"),
            lambda c=completion: scorer.pattern(c, "B", r"ANSWER:\s*(\w)"),
            lambda c=completion: scorer.f1(c, "A B"),
            lambda t=text: graderkit.contains_schema_match(t + '{"a": 1}', schema),
        ]
    expected = [call() for call in calls]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda call: call(), calls))
    assert got == expected
