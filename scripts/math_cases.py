#!/usr/bin/env python3
"""Judges cases with math-verify itself, for grader-core's `math` module to compare with.

Reads a JSON object `{"config": NAME, "cases": [[gold, answer], ...]}` on stdin (or a bare
array of pairs, for the default configuration) and writes a JSON array with one entry per
case: `{"verdict": true/false/null, "exact": true/false/null}`.

`verdict` is what the reward function of NAME gives:

- `default`: `verify(parse(gold), parse(answer))` with math-verify's defaults;
- `trl`: TRL 1.16.0's `trl.rewards.accuracy_reward` (the gold with the defaults, `null` where
  it yields nothing; the answer as LaTeX only, `NormalizationConfig(units=True)`,
  `boxed_match_priority=0`, `try_extract_without_anchor=False`, `extraction_mode="first_match"`);
- `open_r1`: open-r1's `accuracy_reward` (the gold with `extraction_mode="first_match"`; the
  answer as TRL's but `NormalizationConfig(nits=False, malformed_operators=False,
  basic_latex=True, equations=True, boxed="all", units=True)`);
- `verl`: verl 0.9.1's `verl.utils.reward_score.math_verify` (the gold in `\\boxed{}` as LaTeX,
  the answer as an expression or LaTeX; `false` where either yields nothing).

`exact` is sympy's exact verdict on the two parsed answers where both are plain values
(`simplify(gold - answer) == 0` on exact numbers, no decimals), `null` elsewhere: what tells a
mathematically wrong verdict of math-verify from a parse of ours that differs.

With `MATH_SHOW` set, each entry also holds `gold` and `answer`: the `repr` of what was parsed.
"""

import json
import os
import logging
import sys

import sympy
from latex2sympy2_extended import NormalizationConfig
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

logging.disable(logging.CRITICAL)


def default(gold, answer):
    g, a = parse(gold), parse(answer)
    return bool(verify(g, a)), g, a


def trl(gold, answer):
    g = parse(gold, parsing_timeout=10)
    if not g:
        return None, g, []
    a = parse(
        answer,
        extraction_config=[
            LatexExtractionConfig(
                normalization_config=NormalizationConfig(units=True),
                boxed_match_priority=0,
                try_extract_without_anchor=False,
            )
        ],
        extraction_mode="first_match",
        parsing_timeout=10,
    )
    return bool(verify(g, a, timeout_seconds=5)), g, a


def open_r1(gold, answer):
    g = parse(gold, extraction_mode="first_match")
    if not g:
        return None, g, []
    a = parse(
        answer,
        extraction_config=[
            LatexExtractionConfig(
                normalization_config=NormalizationConfig(
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
    return bool(verify(g, a)), g, a


def verl(gold, answer):
    g = parse("\\boxed{" + gold + "}", (LatexExtractionConfig(),))
    a = parse(answer, (ExprExtractionConfig(), LatexExtractionConfig()))
    if g and a:
        return max(1.0 if any(verify(x, p) for x in g) else 0.0 for p in a) == 1.0, g, a
    return False, g, a


CONFIGS = {"default": default, "trl": trl, "open_r1": open_r1, "verl": verl}


def plain_value(parsed):
    """The first parsed answer where it is an exact number without decimals."""
    if not parsed or not isinstance(parsed[0], sympy.Expr):
        return None
    value = parsed[0]
    if value.free_symbols or value.atoms(sympy.Float) or not value.is_number:
        return None
    if value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    return value


def exact(gold, answer):
    g, a = plain_value(gold), plain_value(answer)
    if g is None or a is None:
        return None
    try:
        return bool(sympy.simplify(g.doit() - a.doit()) == 0)
    except Exception:
        return None


def main():
    data = json.load(sys.stdin)
    if isinstance(data, list):
        data = {"config": "default", "cases": data}
    judge = CONFIGS[data["config"]]
    out = []
    for gold, answer in data["cases"]:
        verdict, g, a = judge(gold, answer)
        entry = {"verdict": verdict, "exact": exact(g, a) if verdict is not None else None}
        if os.environ.get("MATH_SHOW"):
            entry["gold"] = repr(g)
            entry["answer"] = repr(a)
        out.append(entry)
    json.dump(out, sys.stdout)


main()
