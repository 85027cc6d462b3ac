"""graderkit's parse and verify take math-verify's names, keywords and configuration classes,
and what parse returns behaves as math-verify's list where callers use it."""

from __future__ import annotations

import pickle

import pytest

import graderkit
from graderkit import (
    ExprExtractionConfig,
    LatexExtractionConfig,
    NormalizationConfig,
    StringExtractionConfig,
    parse,
    verify,
)


def test_parse_returns_a_list_like_answer() -> None:
    parsed = parse("so the answer is $\\boxed{\\frac{1}{3}}$")
    assert len(parsed) == 2
    assert bool(parsed)
    assert parsed[0] == "1/3"
    assert parsed[-1] == "\\frac{1}{3}"
    assert str(parsed).startswith("[1/3, ")
    assert list(parsed) == [parsed[0], parsed[1]]
    with pytest.raises(IndexError):
        parsed[2]


def test_nothing_found_is_empty_and_falsy() -> None:
    parsed = parse("no number at all")
    assert len(parsed) == 0
    assert not parsed
    assert str(parsed) == "[]"


def test_verify_with_the_defaults() -> None:
    assert verify(parse("$\\frac{1}{2}$"), parse("The answer is $\\boxed{0.5}$."))
    assert not verify(parse("$\\sqrt{2}$"), parse("\\boxed{1.41}"))
    assert verify(parse("1,000"), parse("It costs $1000."))


def test_exact_verdicts_and_parity() -> None:
    gold, answer = parse("$10000000001$"), parse("$10000000000$")
    assert not verify(gold, answer)
    gold, answer = parse("$\\frac{1}{2^{99}}$"), parse("$\\frac{1}{2^{98}}$")
    assert not verify(gold, answer)
    assert verify(gold, answer, semantics="parity")  # math-verify's own verdict
    assert graderkit.MATH_SEMANTICS == 2


def test_the_configuration_classes_are_math_verify_s() -> None:
    latex = LatexExtractionConfig()
    assert latex.boxed_match_priority == 50
    assert latex.try_extract_without_anchor
    assert latex.normalization_config == NormalizationConfig(
        basic_latex=True, units=True, malformed_operators=True, nits=True, boxed="all", equations=False
    )
    assert NormalizationConfig() == NormalizationConfig(
        basic_latex=True, units=False, malformed_operators=False, nits=False, boxed="all", equations=False
    )
    assert StringExtractionConfig().strings == ("A", "B", "C", "D")
    assert pickle.loads(pickle.dumps(latex)) == latex


def test_trl_s_answer_configuration_reads_latex_only() -> None:
    config = [
        LatexExtractionConfig(
            normalization_config=NormalizationConfig(units=True),
            boxed_match_priority=0,
            try_extract_without_anchor=False,
        )
    ]
    assert not parse("The answer is 42", extraction_config=config, extraction_mode="first_match")
    parsed = parse("My answer is \\boxed{\\frac{1}{3}}", extraction_config=config)
    assert parsed[0] == "1/3"


def test_string_extraction() -> None:
    parsed = parse("I think the answer is B.", extraction_config=[StringExtractionConfig()])
    assert parsed[0] == "b"
    assert verify(parsed, parse("B", extraction_config=[StringExtractionConfig()]))


def test_parsed_pickles() -> None:
    parsed = parse("$x = 3$", extraction_config=[LatexExtractionConfig(), ExprExtractionConfig()])
    back = pickle.loads(pickle.dumps(parsed))
    assert str(back) == str(parsed)
    assert verify(back, parse("3"))


@pytest.mark.parametrize("bad", [None, b"1", 3, ["1"]])
def test_parse_takes_a_str(bad: object) -> None:
    with pytest.raises(TypeError, match="pred must be a str"):
        parse(bad)  # type: ignore[arg-type]


def test_verify_takes_what_parse_returned_or_a_str() -> None:
    with pytest.raises(TypeError, match="gold must be"):
        verify(None, parse("1"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="extraction_config"):
        parse("1", extraction_config="latex")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="extraction_mode"):
        parse("1", extraction_mode="all")  # type: ignore[arg-type]


def test_a_bound_is_an_empty_parse_or_a_limit_error_when_asked() -> None:
    deep = "$" + "\\frac{1}{" * 10_000 + "2" + "}" * 10_000 + "$"
    assert not parse(deep)
    with pytest.raises(graderkit.LimitError):
        parse(deep, raise_on_error=True)
    big = "$\\boxed{" + "\\cdot ".join(["99^{2340}"] * 265) + "}$"
    assert verify(parse("$\\frac{1}{2}$"), parse(big)) is False
