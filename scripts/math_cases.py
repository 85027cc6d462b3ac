#!/usr/bin/env python3
"""Judges cases with math-verify itself, for grader-core's `math` module to compare with.

Reads a JSON array of `[gold, answer]` pairs on stdin and writes a JSON array of verdicts:
`verify(parse(gold), parse(answer))` with math-verify's defaults (what TRL and open-r1 call),
as booleans.

With `--show`, writes `[verdict, repr(parse(gold)), repr(parse(answer))]` instead.
"""

import json
import logging
import sys

from math_verify import parse, verify

logging.disable(logging.CRITICAL)


def judge(gold, answer):
    return bool(verify(parse(gold), parse(answer)))


def show(gold, answer):
    g, a = parse(gold), parse(answer)
    return [bool(verify(g, a)), repr(g), repr(a)]


run = show if "--show" in sys.argv else judge
json.dump([run(g, a) for g, a in json.load(sys.stdin)], sys.stdout)
