"""Inspect AI 0.3.285's scorers, compared with Inspect's own (its scorers, and its
``multiple_choice`` solver's reading for ``choice``): the whole ``Score`` (value, answer,
explanation, reason), on cases of Inspect's tests and on generated completions."""

from __future__ import annotations

import pickle
import random
import sys
from typing import Any

import pytest

from conftest import run_in
from graderkit import scorer
from graderkit.scorer import Score

# Inspect's scorers on each case, in a process of their own.
INSPECT = r"""
import asyncio, json, sys
from types import SimpleNamespace
from inspect_ai.scorer import Target, answer, choice, exact, f1, includes, match, pattern
from inspect_ai.solver._multiple_choice import parse_answers, set_choices_based_on_generated_response
from inspect_ai.solver._task_state import Choice, Choices

def state_for(case):
    choices = None
    if case["f"] == "choice":
        texts = case["choices"]
        order = case.get("shuffled") or list(range(len(texts)))
        choices = Choices([Choice(value=texts[p], correct=None, original_position=p) for p in order])
    return SimpleNamespace(output=SimpleNamespace(completion=case["completion"]), choices=choices)

def scorer_for(case):
    f = case["f"]
    if f == "match":
        return match(case["location"], ignore_case=case["ignore_case"], numeric=case["numeric"])
    if f == "includes":
        return includes(ignore_case=case["ignore_case"])
    if f == "exact":
        return exact()
    if f == "f1":
        return f1(stop_words=case.get("stop_words"))
    if f == "answer":
        return answer(case["kind"])
    if f == "pattern":
        return pattern(case["pattern"], ignore_case=case["ignore_case"], match_all=case["match_all"])
    return choice()

async def score(case):
    try:
        state = state_for(case)
        if case["f"] == "choice":
            answers = parse_answers(state, case["multiple_correct"])
            if answers:
                set_choices_based_on_generated_response(state, answers)
        result = await scorer_for(case)(state, Target(case["targets"]))
    except Exception as e:
        return {"error": type(e).__name__}
    return [result.value, result.answer, result.explanation, result.reason]

async def main():
    print(json.dumps([await score(case) for case in json.load(sys.stdin)]))

asyncio.run(main())
"""


def ours(case: dict[str, Any]) -> Any:
    f, completion, targets = case["f"], case["completion"], case["targets"]
    try:
        if f == "match":
            got = scorer.match(completion, targets, case["location"],
                               ignore_case=case["ignore_case"], numeric=case["numeric"])
        elif f == "includes":
            got = scorer.includes(completion, targets, case["ignore_case"])
        elif f == "exact":
            got = scorer.exact(completion, targets)
        elif f == "f1":
            got = scorer.f1(completion, targets, stop_words=case.get("stop_words"))
        elif f == "answer":
            got = scorer.answer(completion, targets, case["kind"])
        elif f == "pattern":
            got = scorer.pattern(completion, targets, case["pattern"], case["ignore_case"],
                                 case["match_all"])
        else:
            got = scorer.choice(completion, targets, case["choices"], shuffled=case.get("shuffled"),
                                multiple_correct=case["multiple_correct"])
    except ValueError as e:
        return {"error": "ValueError", "message": str(e)}
    assert isinstance(got, Score)
    return [got.value, got.answer, got.explanation, got.reason]


def compare(cases: list[dict[str, Any]]) -> list[Any]:
    theirs = run_in(sys.executable, INSPECT, cases)
    differ = []
    for case, expected in zip(cases, theirs, strict=True):
        got = ours(case)
        if isinstance(got, dict) and isinstance(expected, dict):
            continue  # both raise (each language's own message)
        if got != expected:
            differ.append((case, got, expected))
    return differ


def m(completion: str, targets: list[str], location: str, numeric: bool) -> dict[str, Any]:
    return {"f": "match", "completion": completion, "targets": targets, "location": location,
            "ignore_case": True, "numeric": numeric}


def with_(f: str, completion: str, targets: list[str], **extra: Any) -> dict[str, Any]:
    return {"f": f, "completion": completion, "targets": targets, **extra}


LETTERS = ["Paris", "Berlin", "Rome", "Madrid"]


def inspect_cases() -> list[dict[str, Any]]:
    """Cases from Inspect's tests/scorer (test_match.py, test_pattern.py, test_answer.py,
    test_choice.py, test_classification.py) and its docs."""
    cases = [
        m("28 + 32 = 60\nThis solves the problem.", ["60"], "end", True),
        m("**ANSWER: 28 + 32 = 60**\nThis solves the problem.", ["60"], "end", True),
        m("28 + 32 = 60%\nThis solves the problem.", ["60", "60%"], "any", True),
        m("28 + 32 = 60%", ["60%"], "end", True),
        m("The answer is 25", ["5"], "end", True),
        m("50 is the answer", ["5"], "begin", True),
        m("got 25 here", ["5"], "any", True),
        m("first 7 then 25 then done", ["25"], "any", True),
        m("the result is -5 exactly", ["-5"], "end", True),
        m("pi is approximately 3.14", ["3.14"], "end", True),
        m("the value is 1000", ["1e3"], "end", True),
        m("5 some text", ["5"], "exact", True),
        m("answer: −5", ["-5"], "end", True),
        m("the answer is １２３", ["123"], "end", True),
        m("The answer is (42).", ["42"], "end", True),
        m("The total is \\$1,234.50.", ["1234.5"], "end", True),
        m("(42)", ["42"], "exact", True),
        m("x = 2³", ["8"], "end", True),
        m("answer 2½", ["2.5"], "end", True),
        m("chapter Ⅻ", ["12"], "end", True),
        m("", ["."], "end", False),
        m("   ", ["a"], "end", False),
        m("The answer is Paris.", ["paris"], "end", False),
        m("Paris is the answer", ["PARIS"], "begin", False),
        m("I think Paris", ["Berlin", "Paris"], "any", False),
        m("Paris", ["paris"], "exact", False),
    ]
    for completion, targets, kind in [
        ("ANSWER: A", ["A"], "letter"),
        ("answer: (C) because", ["C"], "letter"),
        ("ANSWER: B\nwait\nANSWER: C", ["C"], "letter"),
        ("ANSWER: Bob", ["B"], "letter"),
        ("ANSWER: yes.\n", ["yes"], "word"),
        ("ANSWER:maybe!  \nmore text", ["maybe"], "word"),
        ("ANSWER: first\nANSWER: second", ["second"], "word"),
        ("ANSWER: 42 apples\nThat is all.", ["42 apples"], "line"),
        ("ANSWER: one\nANSWER: two\n\n", ["two"], "line"),
        ("ANSWER:    ", [" "], "line"),
        ("no answer here", ["x"], "line"),
        ("", ["x"], "word"),
        ("answer : \nanswer : \n", ["answer :"], "line"),
        ("ANSWER: \u017f", ["s"], "letter"),
    ]:
        cases.append(with_("answer", completion, targets, kind=kind))
    for completion, pat, targets, match_all in [
        ("The answer is 42", r"answer is (\d+)", ["42"], False),
        ("x=4, y=5", r"x=(\d), y=(\d)", ["5"], False),
        ("x=4, y=5", r"x=(\d), y=(\d)", ["5"], True),
        ("x=5, y=5", r"x=(\d), y=(\d)", ["5"], True),
        ("abc", r"(x)?(y)?", ["x"], True),
        ("FOO bar", r"foo", ["FOO"], False),
        ("", r"(.*)", [""], False),
        ("\n \n", r"(.*)", ["x"], False),
        ("Result: SUCCESS", r"Result: (?P<r>\w+)", ["success"], False),
        ("no match", r"answer: (\d+)", ["1"], False),
        ("price 12.50 USD", r"(\d+)\.(\d+)", ["50"], False),
    ]:
        cases.append(with_("pattern", completion, targets, pattern=pat, ignore_case=True,
                           match_all=match_all))
    for completion, targets, n, shuffled, multiple in [
        ("ANSWER: A", ["A"], 4, None, False),
        ("ANSWER: B", ["A"], 4, None, False),
        ("ANSWER: A, B", ["A", "B"], 4, None, True),
        ("ANSWER: AB", ["A, B"], 4, None, True),
        ("ANSWER: A and C", ["AC"], 4, None, True),
        ("ANSWER: $B$", ["B"], 4, None, False),
        ("**ANSWER: C**", ["C"], 4, None, False),
        ("ANSWER: (d)", ["D"], 4, None, False),
        ("", ["A"], 4, None, False),
        ("I am not sure.", ["A"], 4, None, False),
        ("ANSWER: A", ["C"], 4, [2, 0, 1, 3], False),
        ("ANSWER: B", ["A"], 3, [1, 0, 2], False),
        ("ANSWER: A, C", ["B", "C"], 4, [1, 3, 2, 0], True),
        ("ANSWER: A", ["A"], 4, [0, 1, 2, 3], False),
        ("ANSWER: 1", ["1"], 27, None, False),
        ("ANSWER: A", ["E"], 4, None, False),
        ("ANSWER: A", ["A"], 0, None, False),
    ]:
        texts = [f"choice {i}" for i in range(n)] if n != 4 else LETTERS
        cases.append(with_("choice", completion, targets, choices=texts, shuffled=shuffled,
                           multiple_correct=multiple))
    for completion, targets in [
        ("The Eiffel Tower", ["eiffel tower"]),
        ("a", ["the"]),
        ("3.50", ["3.5"]),
        ("well-known", ["well known"]),
        ("Straße", ["STRASSE"]),
    ]:
        cases.append(with_("exact", completion, targets))
        cases.append(with_("f1", completion, targets, stop_words=None))
    cases += [
        with_("f1", "the cat sat on the mat", ["a cat on a mat"], stop_words=["on"]),
        with_("f1", "cat cat cat", ["cat"], stop_words=None),
        with_("f1", "", ["cat"], stop_words=None),
        with_("includes", "The capital is PARIS.", ["paris"], ignore_case=True),
        with_("includes", "The capital is PARIS.", ["paris"], ignore_case=False),
        with_("includes", "STRASSE", ["straße"], ignore_case=True),
        with_("includes", "", [""], ignore_case=True),
    ]
    return cases


def test_inspects_own_cases_agree() -> None:
    cases = inspect_cases()
    differ = compare(cases)
    assert not differ, differ[:5]
    # What Inspect's tests assert, checked here too.
    assert scorer.match("The answer is 25", "5", numeric=True).value == "I"
    assert scorer.choice("", "A", LETTERS) == Score("N", "", "", "no_response")
    shuffled = scorer.choice("ANSWER: A", "C", LETTERS, shuffled=[2, 0, 1, 3])
    assert shuffled.value == "C" and shuffled.answer == "C"
    assert shuffled.explanation is not None and "A) Rome" in shuffled.explanation


# Pieces of generated completions; left out: Chinese numerals (a documented difference).
PIECES = [
    "ANSWER:", "ANSWER: ", "answer :", "Answer:\n", "ANSWERS:", "ſ", "A", "B", "c", "d", "E",
    "(A)", "(b)", "**", "$", "\\$", ",", ", ", " and ", " AND ", ".", "!", "?", ";", ":", "'",
    '"', "(", ")", "[", "]", "-", "−", "+", "*", "_", "€", "£", "%", "/",
    "yes", "no", "Paris", "paris", "the", "The", "a", "an", "cat", "Straße", "STRASSE", "ΟΔΟΣ",
    "ς", "İ", "ı", "\u212a", "é", "ﬁ",
    "0", "1", "2", "5", "7", "42", "-5", "3.14", "1,000", "1,234.5", "1e3", "2E-2", "٣",
    "１２", "²", "0.5", "100", "007", ".5", "5.", "nan", "inf", "½", "2½", "Ⅻ", "①",
    " ", "  ", "\n", "\n\n", "\t", "\xa0", "\u3000", "\x1c", "\r\n",
]

PATTERNS = [
    r"ANSWER:\s*(\w+)", r"answer\s*:\s*([A-D])", r"(\d+)", r"(-?\d+(?:\.\d+)?)", r"(\w+)\s+(\w+)",
    r"(yes|no)", r"(x)?(\d)?", r"([^\s]+)\s*\Z", r"\S+", r"(?s)ANSWER:(.*)", r"(.+?)[.!?]",
    r"(?m)^(\w)", r"\((\w)\)", r"(\W)",
]


def random_text(rng: random.Random, pieces: int) -> str:
    out = ""
    for _ in range(rng.randrange(pieces + 1)):
        out += rng.choice(PIECES)
        if rng.random() < 0.5:
            out += " "
    return out


def random_targets(rng: random.Random, completion: str) -> list[str]:
    words = completion.split()
    targets = []
    for _ in range(rng.randrange(1, 3)):
        kind = rng.randrange(4)
        if kind == 0 and words:
            targets.append(rng.choice(words))
        elif kind == 1:
            targets.append(random_text(rng, 2))
        else:
            targets.append(rng.choice(["A", "B", "5", "42", "-5", "yes", "Paris", "1000", "3.14",
                                       "1e3", ""]))
    return targets


def answered(rng: random.Random) -> str:
    given = rng.choice(["A", "b", "C", "D", "A, B", "B,C", "AC", "(b)", "(C)", "A and D", "a,",
                        "$B$", "yes", "no.", "Paris", "42", "E", "1", "ſ"])
    return (random_text(rng, 3)
            + rng.choice(["ANSWER:", "ANSWER: ", "answer :", "ANSWER:\n", "**ANSWER: "])
            + given
            + rng.choice(["", ".", "\n", " because", ")\n", "!", "**", "\nANSWER: B", ","])
            + (random_text(rng, 2) if rng.random() < 0.5 else ""))


@pytest.mark.parametrize("seed", range(3))
def test_generated_completions_agree(seed: int) -> None:
    rng = random.Random(seed)
    cases = []
    for _ in range(300):
        completion = answered(rng) if rng.random() < 0.5 else random_text(rng, 8)
        targets = random_targets(rng, completion)
        flag = rng.random() < 0.5
        cases += [
            m(completion, targets, rng.choice(["begin", "end", "any", "exact"]), flag),
            with_("includes", completion, targets, ignore_case=flag),
            with_("exact", completion, targets),
            with_("f1", completion, targets,
                  stop_words=rng.choice([None, ["the", "a"], ["and"]])),
            with_("answer", completion, targets, kind=rng.choice(["letter", "word", "line"])),
            with_("pattern", completion, targets, pattern=rng.choice(PATTERNS),
                  ignore_case=flag, match_all=rng.random() < 0.3),
        ]
        n = rng.choice([2, 4, 5])
        shuffled = None
        if rng.random() < 0.5:
            shuffled = list(range(n))
            rng.shuffle(shuffled)
        letters = [chr(ord("A") + i) for i in range(n)]
        target = rng.choice([rng.choice(letters), ", ".join(rng.sample(letters, 2)), "A"])
        cases.append(with_("choice", completion, [target], choices=[f"c{i}" for i in range(n)],
                           shuffled=shuffled, multiple_correct=rng.random() < 0.3))
    differ = compare(cases)
    assert not differ, differ[:5]


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="location"):
        scorer.match("x", "x", "middle")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pattern"):
        scorer.answer("x", "x", "sentence")  # type: ignore[arg-type]
    # What the regex crate cannot run is refused, whatever the completion.
    for bad in [r"(?=x)", r"(a)\1", "("]:
        with pytest.raises(ValueError, match="regex"):
            scorer.pattern("aaa", "a", bad)
        with pytest.raises(ValueError, match="regex"):
            scorer.pattern("\ud800", "a", bad)
    with pytest.raises(ValueError, match="choices"):
        scorer.choice("ANSWER: A", "A", [])
    with pytest.raises(ValueError, match="shuffled"):
        scorer.choice("ANSWER: A", "A", LETTERS, shuffled=[0, 0, 1, 2])
    with pytest.raises(ValueError, match="target"):
        scorer.choice("ANSWER: A", "Z", LETTERS)


def test_non_strings_are_type_errors() -> None:
    with pytest.raises(TypeError, match="completion must be a str"):
        scorer.match(None, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="target must be a str or a list of str"):
        scorer.includes("x", 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="each target must be a str"):
        scorer.exact("x", ["a", None])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="choices"):
        scorer.choice("ANSWER: A", "A", "ABCD")


def test_a_completion_with_a_lone_surrogate_cannot_be_judged() -> None:
    for score in [
        scorer.match("Paris\ud800", "Paris"),
        scorer.includes("Paris\ud800", "Paris"),
        scorer.exact("Paris\ud800", "Paris"),
        scorer.answer("ANSWER: A\ud800", "A", "letter"),
        scorer.pattern("ANSWER: A\ud800", "A", r"ANSWER: (\w)"),
        scorer.choice("ANSWER: A\ud800", "A", LETTERS),
    ]:
        assert score.value == "I"
        assert score.answer is None
        assert score.reason == "invalid_response_format"
        assert "lone surrogate" in (score.explanation or "")
    f1 = scorer.f1("Paris\ud800", "Paris")
    assert f1.value == 0.0 and f1.reason == "invalid_response_format"


def test_long_completions_are_read_in_one_pass() -> None:
    text = "ANSWER:" * 150_000
    for kind in ("letter", "word", "line"):
        assert scorer.answer(text, "A", kind).value == "I"
    assert scorer.pattern("a" * 1_000_000 + "b", "a", r"(a+)+$").value == "I"
    assert scorer.match("7" * 1_000_000, "7", numeric=True).value == "I"


def test_f1_with_an_answer_fn_reads_the_extracted_answer() -> None:
    score = scorer.f1("Reasoning... ANSWER: Paris", "Paris",
                      answer_fn=lambda text: text.split("ANSWER:")[-1])
    assert score.value == 1.0 and score.answer == " Paris" and score.reason is None
    blank = scorer.f1("   ", "Paris", answer_fn=lambda text: "Paris")
    assert blank.value == 1.0 and blank.reason == "no_response"


def test_scores_pickle_and_convert() -> None:
    score = scorer.match("It is 42", "42")
    assert pickle.loads(pickle.dumps(score)) == score
    assert score.as_float() == 1.0
    assert scorer.f1("Paris, France", "Paris").as_float() == 0.67
    assert "Score(value='C'" in repr(score)
