"""graderkit's math against math-verify 0.9.0 itself, under its defaults and the three trainer
configurations (TRL 1.16.0's ``accuracy_reward``, open-r1's ``accuracy_reward``, verl 0.9.1's
math reward), on math-verify's own cases (``tests/data/math_verify_cases.json``, vendored with
attribution) and on seeded generated ones.

The anchor is ``scripts/math_cases.py``, the script that grader-core's Rust differential test
runs: each configuration's reward as that trainer's source writes it, with sympy's exact
verdict beside it. Two of our paths are compared with it:

- the drop-in path: the trainer's own code with ``from graderkit import parse, verify, …`` in
  place of math-verify's imports (``DROP_IN`` below), under both semantics;
- the reward path: ``score_pairs`` with the trainer's preset, which the reward functions of
  :mod:`graderkit.trl`, :mod:`graderkit.verl`, … call.

Every disagreement is classified, so that a new one fails (as in Rust's test):

- ``KNOWN``: parses that differ on purpose under every semantics (docs/graders.md, "Where we
  differ");
- under exact semantics, where math-verify's verdict is mathematically wrong: its verdict
  differs from sympy's exact one and ours is sympy's, or the case is a listed correction (SPEC
  D36, D37);
- on the reward path only, a gold read whole (SPEC D38): ours is "not computed" naming the gold,
  or our gold is read whole where math-verify's ``parse`` cuts it down.
"""

from __future__ import annotations

import json
import random
import sys
import types
from functools import partial
from pathlib import Path
from typing import Any, Callable

import pytest

import graderkit
from graderkit._rewards import MathConfig, score_pairs

from conftest import run_in

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = (ROOT / "scripts" / "math_cases.py").read_text()

#: Pieces of the cases that differ on purpose under every semantics (as Rust's test lists them).
KNOWN = ("|z|", "p=5,q=2", "\\sum", "W(n) = 1 \\\\text")
#: Pieces of the cases where math-verify's verdict is wrong and ours is right (SPEC D37).
CORRECTIONS = ("\\mathrm{e}",)
#: The least share of each configuration's cases where the parity semantics agree.
FLOOR = 0.98

#: The trainers' own readings of the configurations, written once over a module that holds
#: math-verify's names: math-verify itself, or graderkit.
def _default(mv: Any, gold: str, answer: str) -> bool | None:
    return bool(mv.verify(mv.parse(gold), mv.parse(answer)))


def _trl(mv: Any, gold: str, answer: str) -> bool | None:
    # trl/rewards/accuracy_rewards.py (1.16.0), `accuracy_reward`
    gold_parsed = mv.parse(gold, parsing_timeout=10)
    if len(gold_parsed) == 0:
        return None
    answer_parsed = mv.parse(
        answer,
        extraction_config=[
            mv.LatexExtractionConfig(
                normalization_config=mv.NormalizationConfig(units=True),
                boxed_match_priority=0,
                try_extract_without_anchor=False,
            )
        ],
        extraction_mode="first_match",
        parsing_timeout=10,
    )
    return bool(mv.verify(gold_parsed, answer_parsed, timeout_seconds=5))


def _open_r1(mv: Any, gold: str, answer: str) -> bool | None:
    # open-r1's src/open_r1/rewards.py, `accuracy_reward`
    gold_parsed = mv.parse(gold, extraction_mode="first_match")
    if len(gold_parsed) == 0:
        return None
    answer_parsed = mv.parse(
        answer,
        extraction_config=[
            mv.LatexExtractionConfig(
                normalization_config=mv.NormalizationConfig(
                    nits=False,
                    malformed_operators=False,
                    basic_latex=True,
                    equations=True,
                    boxed="all",
                    units=True,
                ),
                boxed_match_priority=0,
                try_extract_without_anchor=False,
            )
        ],
        extraction_mode="first_match",
    )
    return bool(mv.verify(gold_parsed, answer_parsed))


DROP_IN: dict[str, Callable[[Any, str, str], bool | None]] = {
    "default": _default,
    "trl": _trl,
    "open_r1": _open_r1,
}

#: The script's configuration names and graderkit's presets.
PRESET = {"default": "math_verify", "trl": "trl", "open_r1": "open_r1", "verl": "verl"}


def graderkit_as_math_verify(semantics: str) -> types.SimpleNamespace:
    """graderkit under math-verify's names, with one semantics throughout."""
    return types.SimpleNamespace(
        parse=partial(graderkit.parse, semantics=semantics),
        verify=partial(graderkit.verify, semantics=semantics),
        LatexExtractionConfig=graderkit.LatexExtractionConfig,
        ExprExtractionConfig=graderkit.ExprExtractionConfig,
        NormalizationConfig=graderkit.NormalizationConfig,
    )


def _number(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return str(rng.randrange(1000))
    if kind == 1:
        return f"-{rng.randrange(100) + 1}"
    if kind == 2:
        return f"{rng.randrange(100)}.{rng.randrange(100)}"
    if kind == 3:
        return f"\\frac{{{rng.randrange(20) + 1}}}{{{rng.randrange(20) + 1}}}"
    if kind == 4:
        return f"{rng.randrange(5) + 1}\\sqrt{{{rng.randrange(20) + 2}}}"
    return f"{rng.randrange(99) + 1},{rng.randrange(1000):03}"


def _answer(rng: random.Random) -> str:
    kind = rng.randrange(11)
    v = rng.choice(["x", "y", "a", "n"])
    a, b = rng.randrange(9) + 1, rng.randrange(9) + 1
    if kind <= 2:
        return _number(rng)
    if kind == 3:
        return f"x = {_number(rng)}"
    if kind == 4:
        return f"({rng.randrange(10)}, {rng.randrange(10) + 10})"
    if kind == 5:
        return f"[{rng.randrange(10)}, {rng.randrange(10) + 10})"
    if kind == 6:
        return f"\\{{{rng.randrange(10)}, {rng.randrange(10)}\\}}"
    if kind == 7:
        return f"{rng.randrange(100)}\\%"
    if kind == 8:
        return rng.choice([f"{a}{v} + {b}", f"{b} + {a}{v}", f"{a}({v} + {b})", f"{v}^2 + {b}"])
    if kind == 9:
        op = rng.choice(["<", "\\le", ">", "\\geq"])
        return f"{v} {op} {rng.randrange(20)}"
    return f"{rng.randrange(5) + 1} \\pm \\sqrt{{{rng.randrange(10) + 2}}}"


def _exact_pair(rng: random.Random) -> tuple[str, str]:
    """An exact value and a neighbour or another form of it (big integers, powers, tiny
    values), where rounding in floats would call two different values equal."""
    k = 10 + rng.randrange(50)
    kind = rng.randrange(5)
    if kind == 0:
        n = 10 ** (10 + rng.randrange(15)) + rng.randrange(1000)
        gold, same, near = str(n), str(n), str(n + 1)
    elif kind == 1:
        gold, same, near = f"2^{{{k}}}", str(2**k), str(2**k - 1)
    elif kind == 2:
        e = 40 + rng.randrange(70)
        gold, same, near = f"\\frac{{1}}{{2^{{{e}}}}}", f"2^{{-{e}}}", f"\\frac{{1}}{{2^{{{e + 1}}}}}"
    elif kind == 3:
        e = 11 + rng.randrange(20)
        gold, same, near = f"10^{{-{e}}}", f"\\frac{{1}}{{10^{{{e}}}}}", "0"
    else:
        gold, same, near = f"x+10^{{{k}}}", f"10^{{{k}}}+x", f"x+10^{{{k}}}+1"
    return gold, rng.choice([gold, same, near])


def _generated(count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i % 3 == 0:
            out.append(_exact_pair(rng))
            continue
        gold = _answer(rng)
        wrap = rng.randrange(3)
        answer = gold if rng.randrange(2) else _answer(rng)
        if wrap == 0:
            answer = f"The answer is $\\boxed{{{answer}}}$."
        elif wrap == 1:
            answer = f"${answer}$"
        out.append((gold, answer))
    return out


def _cases() -> list[tuple[str, str]]:
    suite = json.loads((ROOT / "tests" / "data" / "math_verify_cases.json").read_text())
    assert "Apache" in suite["source"]
    cases = [(g, a) for g, a in suite["cases"]]
    bench = json.loads((ROOT / "tests" / "data" / "math_bench_pairs.json").read_text())
    cases += [(g, a) for _, g, a, *_ in bench]
    return cases + _generated(300, seed=44)


CASES = _cases()


@pytest.fixture(scope="module")
def anchor() -> dict[str, list[dict[str, Any]]]:
    """math-verify's verdicts (and sympy's exact ones) for every configuration: one run of
    the script each."""
    return {
        name: run_in(sys.executable, SCRIPT, {"config": name, "cases": CASES})
        for name in PRESET
    }


def _listed(pieces: tuple[str, ...], gold: str, answer: str) -> bool:
    return any(p in gold or p in answer for p in pieces)


def _show(i: int, gold: str, answer: str) -> str:
    return f"#{i} {gold[:80]!r} | {answer[:80]!r}"


def _classify_exact(
    ours: bool | None, parity: bool | None, theirs: dict[str, Any], gold: str, answer: str
) -> bool:
    """Whether an exact-semantics difference is one math-verify gets wrong."""
    if parity != theirs["verdict"]:
        return _listed(KNOWN, gold, answer)
    return _listed(CORRECTIONS, gold, answer) or (ours is not None and theirs["exact"] == ours)


@pytest.mark.parametrize("name", sorted(DROP_IN))
def test_the_trainers_code_with_graderkit_s_imports(name: str, anchor: dict) -> None:
    """The migration is the imports: the trainer's code over graderkit gives math-verify's
    verdicts under parity semantics, and under exact ones differs only where math-verify is
    wrong."""
    judge = DROP_IN[name]
    parity_mv, exact_mv = graderkit_as_math_verify("parity"), graderkit_as_math_verify("exact")
    agree = corrected = 0
    unclassified = []
    for i, ((gold, answer), theirs) in enumerate(zip(CASES, anchor[name], strict=True)):
        parity = judge(parity_mv, gold, answer)
        exact = judge(exact_mv, gold, answer)
        if parity == theirs["verdict"]:
            agree += 1
        elif not _listed(KNOWN, gold, answer):
            unclassified.append(f"parity: ours {parity}, math-verify {theirs['verdict']}: {_show(i, gold, answer)}")
        if exact != theirs["verdict"]:
            if _classify_exact(exact, parity, theirs, gold, answer):
                corrected += parity == theirs["verdict"]
            else:
                unclassified.append(
                    f"exact: ours {exact}, math-verify {theirs['verdict']}, sympy {theirs['exact']}: "
                    + _show(i, gold, answer)
                )
    share = agree / len(CASES)
    print(f"{name}: {len(CASES)} cases, parity agrees on {agree} ({share:.1%}), {corrected} corrected")
    assert not unclassified, "\n".join(unclassified)
    assert share >= FLOOR


@pytest.mark.parametrize("name", sorted(PRESET))
@pytest.mark.parametrize("semantics", ["parity", "exact"])
def test_the_reward_presets(name: str, semantics: str, anchor: dict) -> None:
    """The reward functions' path (``score_pairs`` with the trainer's preset, as TRL's, verl's,
    OpenRLHF's and verifiers' reward functions call it) against the trainer's own reward."""
    golds, answers = [g for g, _ in CASES], [a for _, a in CASES]
    ours = score_pairs(golds, answers, MathConfig(preset=PRESET[name], semantics=semantics), threads=2)
    parity = (
        ours
        if semantics == "parity"
        else score_pairs(golds, answers, MathConfig(preset=PRESET[name], semantics="parity"), threads=2)
    )
    faithful = graderkit_as_math_verify("parity")
    agree = whole = 0
    unclassified = []
    for i, ((gold, answer), theirs, outcome, par) in enumerate(
        zip(CASES, anchor[name], ours, parity, strict=True)
    ):
        verdict = None if outcome.reward is None else outcome.reward >= 1.0
        if verdict == theirs["verdict"]:
            agree += 1
            continue
        if _listed(KNOWN, gold, answer):
            continue
        if (verdict is None and "gold" in (outcome.reason or "")) or (
            name != "verl" and str(faithful.parse(gold)) != outcome.gold_parsed
        ):
            # A gold that cannot be read whole is not computed, and one that math-verify's
            # parse cuts down is read whole (D38): `[4, 17)` is the interval, where
            # math-verify compares with 17 (and so gives 1 to the answer 17).
            whole += 1
            continue
        if semantics == "exact":
            par_verdict = None if par.reward is None else par.reward >= 1.0
            if _classify_exact(verdict, par_verdict, theirs, gold, answer):
                continue
        unclassified.append(
            f"ours {verdict} ({outcome.reason}), math-verify {theirs['verdict']}, sympy {theirs['exact']}: "
            + _show(i, gold, answer)
        )
    share = agree / (len(CASES) - whole)
    print(
        f"{name}/{semantics}: {len(CASES)} cases, {whole} golds read whole; "
        f"of the others, agree on {agree} ({share:.1%})"
    )
    assert not unclassified, "\n".join(unclassified)
    assert share >= FLOOR
