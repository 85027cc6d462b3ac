#!/usr/bin/env python3
"""Scores cases with rapidfuzz, rouge-score and sacrebleu themselves, for grader-core's `similarity`
module to compare with.

Reads a JSON array of cases `{"f": ..., "a": "...", "b": "...", "n": 2}` on stdin and writes a
JSON array of results, floats as `repr` strings (read back exactly):

    levenshtein            -> Levenshtein.distance(a, b)
    levenshtein_similarity -> repr(Levenshtein.normalized_similarity(a, b))
    indel                  -> Indel.distance(a, b)
    ratio                  -> repr(fuzz.ratio(a, b))
    rouge_n                -> [precision, recall, fmeasure] of RougeScorer([f"rouge{n}"]).score(a, b)
    rouge_l                -> the same for "rougeL"
    tokens                 -> rouge-score's tokenize(a, None)
    bleu, chrf             -> repr(sentence_bleu(a, refs).score), the same for sentence_chrf
    tokens_13a             -> sacrebleu's Tokenizer13a()(a).split()

For ROUGE, `a` is the target and `b` the prediction, as `score(target, prediction)` takes them.
"""

import json
import sys

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, Levenshtein
from rouge_score import rouge_scorer, tokenize
from sacrebleu import sentence_bleu, sentence_chrf
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a


def rouge(kind, a, b):
    score = rouge_scorer.RougeScorer([kind]).score(a, b)[kind]
    return [repr(float(x)) for x in (score.precision, score.recall, score.fmeasure)]


def run(case):
    f, a, b = case["f"], case["a"], case.get("b", "")
    if f == "levenshtein":
        return Levenshtein.distance(a, b)
    if f == "levenshtein_similarity":
        return repr(Levenshtein.normalized_similarity(a, b))
    if f == "indel":
        return Indel.distance(a, b)
    if f == "ratio":
        return repr(float(fuzz.ratio(a, b)))
    if f == "rouge_n":
        return rouge(f"rouge{case['n']}", a, b)
    if f == "rouge_l":
        return rouge("rougeL", a, b)
    if f == "tokens":
        return tokenize.tokenize(a, None)
    if f == "bleu":
        return repr(float(sentence_bleu(a, case["refs"]).score))
    if f == "chrf":
        return repr(float(sentence_chrf(a, case["refs"]).score))
    if f == "tokens_13a":
        return Tokenizer13a()(a).split()
    raise ValueError(f"unknown case {f}")


json.dump([run(case) for case in json.load(sys.stdin)], sys.stdout)
