"""Inspect AI 0.3.285's scorers as functions: ``match``, ``includes``, ``exact``, ``f1``,
``answer``, ``pattern`` and ``choice``, with Inspect's names, options and defaults, each scoring
one completion against its target and returning Inspect's ``Score`` (value, answer, explanation,
reason).

Where Inspect's scorer is a factory called with a ``TaskState`` and a ``Target``, these take the
completion (``state.output.completion``) and the target (a ``str`` or a list of them) first,
then the scorer's options::

    from graderkit.scorer import match
    match("The answer is 42.", "42", numeric=True).value  # "C"

The verdicts are grader-core's ``inspect`` module, compared with Inspect's own scorers on
Inspect's test cases and on generated ones. What differs on purpose: ``pattern`` runs on the
``regex`` crate (linear time; lookaround and backreferences are a ``ValueError``),
``match(numeric=True)`` does not read Chinese numerals, and a completion holding a lone surrogate
cannot be judged (``INCORRECT``, or 0.0 for ``f1``, with reason ``invalid_response_format``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from graderkit import _native

__all__ = [
    "CORRECT",
    "INCORRECT",
    "NOANSWER",
    "Score",
    "Target",
    "answer",
    "choice",
    "exact",
    "f1",
    "includes",
    "match",
    "pattern",
]

#: Inspect's value for a correct answer.
CORRECT = "C"
#: Inspect's value for an incorrect answer.
INCORRECT = "I"
#: Inspect's value for no answer (``choice`` on an empty completion).
NOANSWER = "N"

#: Inspect's ``Target``: one string, or several (any of which may match).
Target = str | Sequence[str]


@dataclass(frozen=True, slots=True)
class Score:
    """Inspect's ``Score``: ``value`` is ``"C"``, ``"I"`` or ``"N"`` (a float for ``f1``),
    ``answer`` what the scorer extracted, ``explanation`` what Inspect records beside it, and
    ``reason`` Inspect's ``ScoreReason`` (``"no_response"``, ``"invalid_response_format"``) or
    ``None``."""

    value: str | float
    answer: str | None = None
    explanation: str | None = None
    reason: str | None = None

    def as_float(self) -> float:
        """The value as Inspect's ``value_to_float()`` reads it: 1.0 for ``"C"``, 0.0 for
        ``"I"`` and ``"N"``, a float as itself."""
        if isinstance(self.value, str):
            return 1.0 if self.value == CORRECT else 0.0
        return float(self.value)


def _letter(value: float) -> str:
    return CORRECT if value == 1.0 else INCORRECT


def _completion_score(completion: str, scored: tuple) -> Score:
    """The score of a scorer whose explanation is the completion (``match``, ``includes``)."""
    value, found, reason, unjudgeable, _ = scored
    return Score(_letter(value), found, unjudgeable or completion, reason)


def _pattern_score(completion: str, scored: tuple) -> Score:
    """The score of ``pattern`` (and ``answer``): when the pattern matched, the explanation is
    the completion; when not, Inspect says so."""
    value, found, reason, unjudgeable, matched = scored
    if unjudgeable is not None:
        return Score(INCORRECT, None, unjudgeable, reason)
    if matched:
        return Score(_letter(value), found, completion, reason)
    return Score(INCORRECT, None, f"Scoring pattern not matched in output: {completion}", reason)


def match(
    completion: str,
    target: Target,
    location: Literal["begin", "end", "any", "exact"] = "end",
    *,
    ignore_case: bool = True,
    numeric: bool = False,
) -> Score:
    """Inspect's ``match()``: a target at the ``location`` of the completion (``"end"`` by
    default), as text (ASCII punctuation and whitespace trimmed, case ignored unless told) or,
    with ``numeric`` and a target that is a number, as a number.

    >>> match("The answer is 42.", "42", numeric=True).value
    'C'
    """
    return _completion_score(
        completion,
        _native.inspect_match(completion, target, location, ignore_case, numeric),
    )


def includes(completion: str, target: Target, ignore_case: bool = True) -> Score:
    """Inspect's ``includes()``: a target anywhere in the completion.

    >>> includes("The capital is PARIS.", "paris").value
    'C'
    """
    return _completion_score(
        completion, _native.inspect_includes(completion, target, ignore_case)
    )


def exact(completion: str, target: Target) -> Score:
    """Inspect's ``exact()``: the completion equals a target after SQuAD normalization
    (case, punctuation, articles and whitespace).

    >>> exact("The Eiffel Tower.", "eiffel tower").value
    'C'
    """
    value, found, reason, unjudgeable, _ = _native.inspect_exact(completion, target)
    return Score(_letter(value), found, unjudgeable, reason)


def f1(
    completion: str,
    target: Target,
    *,
    answer_fn: Callable[[str], str] | None = None,
    stop_words: list[str] | None = None,
) -> Score:
    """Inspect's ``f1()``: the best SQuAD F1 of the answer (``answer_fn(completion)``, or the
    completion) against a target, rounded to two decimals.

    >>> f1("The capital is Paris, France", "Paris").value
    0.4
    """
    found = answer_fn(completion) if answer_fn is not None else completion
    value, answer_text, reason, unjudgeable, _ = _native.inspect_f1(found, target, stop_words)
    if answer_fn is not None and unjudgeable is None:
        # Inspect decides `no_response` from the completion, not from the extracted answer.
        reason = "no_response" if not completion.strip() else None
    if unjudgeable is not None:
        return Score(0.0, None, unjudgeable, reason)
    return Score(value, answer_text, None, reason)


def answer(completion: str, target: Target, pattern: Literal["letter", "word", "line"]) -> Score:
    """Inspect's ``answer()``: the answer after the last ``ANSWER:`` of the completion, a
    letter, a word or the rest of the line, compared with the targets ignoring case.

    >>> answer("Let me see.\\nANSWER: B", "B", "letter").value
    'C'
    """
    return _pattern_score(completion, _native.inspect_answer(completion, target, pattern))


def pattern(
    completion: str,
    target: Target,
    pattern: str,
    ignore_case: bool = True,
    match_all: bool = False,
) -> Score:
    """Inspect's ``pattern()``: the first match of a regular expression in the completion, its
    groups (or the whole match) compared with the targets; with ``match_all`` every group that
    took part must be a target.

    Raises ``ValueError`` for a pattern the ``regex`` crate cannot run.

    >>> pattern("I have 12 apples", "12", r"(\\d+) apples").value
    'C'
    """
    return _pattern_score(
        completion,
        _native.inspect_pattern(completion, target, pattern, ignore_case, match_all),
    )


def _answer_character(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else str(index - 25)


def _answer_index(letter: str) -> int:
    return ord(letter) - ord("A") if letter.isalpha() else int(letter) + 25


def choice(
    completion: str,
    target: Target,
    choices: Sequence[str],
    *,
    shuffled: Sequence[int] | None = None,
    multiple_correct: bool = False,
) -> Score:
    """Inspect's ``choice()`` after its ``multiple_choice`` solver: the letters the completion
    gives after ``ANSWER:`` mark choices. ``choices`` are the sample's choices (their texts, in
    the sample's order); ``shuffled`` says, for each choice as shown to the model, where it was
    in the sample (Inspect's ``original_position``), ``None`` when they were not shuffled.
    Correct when the marked choices, put back in the sample's order, are exactly the target
    letters.

    Raises ``ValueError`` where Inspect does: no choices, a ``shuffled`` that is not an ordering
    of them, a target letter that names no choice.

    >>> choice("ANSWER: B", "B", ["Berlin", "Paris", "Rome"]).value
    'C'
    """
    if isinstance(choices, str):
        raise TypeError("choices must be a sequence of str (the choices' texts), not a str")
    texts = list(choices)
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"each choice must be a str, not {type(text).__name__}")
    order = None if shuffled is None else list(shuffled)
    value, found, reason, unjudgeable, _ = _native.inspect_choice(
        completion, target, len(texts), order, multiple_correct
    )
    if unjudgeable is not None:
        return Score(INCORRECT, None, unjudgeable, reason)
    if order is not None and any(i != p for i, p in enumerate(order)):
        # What Inspect explains for shuffled choices: the options as shown, and the letters
        # the model chose among them.
        shown = sorted(order.index(_answer_index(letter)) for letter in (found or "").split(", ")
                       if letter)
        options = "\n".join(
            f"{_answer_character(i)}) {texts[original]}" for i, original in enumerate(order)
        )
        letters = ", ".join(_answer_character(i) for i in shown)
        explanation = (
            "Choices were shuffled before generating a response, the following was sent to the "
            f"model:\n\n{options}\nShuffled answer:\nANSWER: {letters}"
        )
    else:
        explanation = completion
    if value == 1.0:
        letter = CORRECT
    elif not found and reason == "no_response":
        letter = NOANSWER
    else:
        letter = INCORRECT
    return Score(letter, found, explanation, reason)
