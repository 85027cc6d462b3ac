"""Similarity, against rapidfuzz, rouge-score and sacrebleu themselves on generated texts."""

from __future__ import annotations

import random

import pytest
from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, Levenshtein
from rouge_score import rouge_scorer
from sacrebleu import sentence_bleu, sentence_chrf

import graderkit

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "Über", "naïve", "日本", "42", "3.14", ","]


def texts(seed: int, count: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        a = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))
        b = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))
        pairs.append((a, b))
    pairs += [("", ""), ("kitten", "sitting"), ("abc", "abc"), ("The cat sat on the mat.",) * 2]
    return pairs


@pytest.mark.parametrize("a,b", texts(1, 150))
def test_edit_distances_are_rapidfuzz_s(a: str, b: str) -> None:
    assert graderkit.levenshtein(a, b) == Levenshtein.distance(a, b)
    assert graderkit.levenshtein_similarity(a, b) == Levenshtein.normalized_similarity(a, b)
    assert graderkit.indel(a, b) == Indel.distance(a, b)
    assert graderkit.ratio(a, b) == pytest.approx(fuzz.ratio(a, b), abs=1e-9)


@pytest.mark.parametrize("a,b", texts(2, 100))
def test_rouge_is_rouge_score_s(a: str, b: str) -> None:
    for n in (1, 2):
        theirs = rouge_scorer.RougeScorer([f"rouge{n}"]).score(a, b)[f"rouge{n}"]
        ours = graderkit.rouge_n(a, b, n)
        assert tuple(ours) == pytest.approx(tuple(theirs), abs=1e-12)
        assert ours.fmeasure == pytest.approx(theirs.fmeasure, abs=1e-12)
    theirs = rouge_scorer.RougeScorer(["rougeL"]).score(a, b)["rougeL"]
    assert tuple(graderkit.rouge_l(a, b)) == pytest.approx(tuple(theirs), abs=1e-12)


@pytest.mark.parametrize("a,b", texts(3, 100))
def test_bleu_and_chrf_are_sacrebleu_s(a: str, b: str) -> None:
    assert graderkit.bleu(a, [b]) == pytest.approx(sentence_bleu(a, [b]).score, abs=1e-9)
    assert graderkit.chrf(a, [b]) == pytest.approx(sentence_chrf(a, [b]).score, abs=1e-9)


def test_no_reference_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no reference"):
        graderkit.bleu("x", [])
