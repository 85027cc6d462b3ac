"""Programming errors raise, typed and named; every error of the package is an Exception."""

from __future__ import annotations

import pytest

import graderkit


@pytest.mark.parametrize("bad", [None, b"bytes", 42, 1.5, ["a"], {"a": 1}])
def test_a_non_string_answer_is_a_type_error_naming_the_argument(bad: object) -> None:
    with pytest.raises(TypeError, match="answer must be a str"):
        graderkit.exact_match(bad, "x")  # type: ignore[arg-type]


def test_a_non_string_reference_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match="reference must be a str"):
        graderkit.f1_score("x", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="substrings must be a list of str"):
        graderkit.contains_any("x", "abc")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="references must be a list of str"):
        graderkit.bleu("x", "abc")  # type: ignore[arg-type]


def test_the_error_classes_derive_from_exception() -> None:
    for cls in (graderkit.GraderError, graderkit.PanicError, graderkit.LimitError):
        assert issubclass(cls, Exception)
    assert issubclass(graderkit.PanicError, graderkit.GraderError)
    assert issubclass(graderkit.LimitError, graderkit.GraderError)


def test_an_answer_with_a_lone_surrogate_scores_zero() -> None:
    assert graderkit.exact_match("\ud800 paris", "paris") == 0.0
    assert graderkit.contains("paris\udfff", "paris") == 0.0


def test_a_limit_is_a_limit_error() -> None:
    # 100 001 by 100 000 characters with nothing in common: past the 6.4e9 cells bound.
    with pytest.raises(graderkit.LimitError, match="cells"):
        graderkit.levenshtein("a" * 100_000 + "x", "b" * 100_000)
