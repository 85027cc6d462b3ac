"""The examples in the docstrings run and give what they show."""

from __future__ import annotations

import doctest

import pytest

import graderkit
from graderkit import _formats, _json, scorer


@pytest.mark.parametrize("module", [_formats, _json, scorer], ids=lambda m: m.__name__)
def test_docstring_examples_run(module: object) -> None:
    failed, attempted = doctest.testmod(module, report=True)  # type: ignore[arg-type]
    assert attempted > 0
    assert failed == 0


NATIVE = ["is_json", "contains_json", "json_equals", "JsonSchema", "BashGrader", "Sandbox"]


@pytest.mark.parametrize("name", NATIVE)
def test_native_docstring_examples_run(name: str) -> None:
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    tests = finder.find(getattr(graderkit, name), name, globs=dict(vars(graderkit)))
    assert sum(len(test.examples) for test in tests) > 0
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
