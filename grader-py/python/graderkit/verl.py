"""Reward functions in verl's shape (verl 0.9.1's ``custom_reward_function``).

verl's reward managers call ``compute_score(data_source=..., solution_str=...,
ground_truth=..., extra_info=...)`` once per response (``NaiveRewardManager``) and the batch
form ``compute_score(data_sources=..., solution_strs=..., ground_truths=..., extra_infos=...)``
once per batch (``BatchRewardManager``); a dict's ``score`` is written into the reward tensor
and its other keys are collected per response into ``reward_extra_info``.

Every result here is a dict with the same keys, so those columns line up: ``score`` (a float,
0.0 where not computed), ``acc`` (the verdict), ``valid`` (``False`` where the reward could not
be computed: a gold that cannot be read whole, the deadline) and ``reason``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graderkit._rewards import MathRewardBase, Outcome, report, score_pairs

__all__ = ["ComputeScore", "compute_score", "compute_score_batch"]


def _row(outcome: Outcome) -> dict[str, Any]:
    valid = outcome.reward is not None
    score = outcome.reward if valid else 0.0
    return {
        "score": float(score),
        "acc": bool(valid and score >= 1.0),
        "valid": valid,
        "reason": outcome.reason or "",
    }


class ComputeScore(MathRewardBase):
    """verl's ``compute_score`` for math answers, in both forms: called with ``data_source=``
    it scores one response, with ``data_sources=`` a batch. ``config`` is verl's math-verify
    configuration by default (the gold read as ``\\boxed{gold}``, the response as plain
    expressions and LaTeX). Instances pickle."""

    preset = "verl"
    name = "compute_score"

    def __call__(
        self,
        data_source: str | None = None,
        solution_str: str | None = None,
        ground_truth: str | None = None,
        extra_info: dict[str, Any] | None = None,
        *,
        data_sources: Sequence[str] | None = None,
        solution_strs: Sequence[str] | None = None,
        ground_truths: Sequence[str] | None = None,
        extra_infos: Sequence[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any] | list[dict[str, Any]]:
        if solution_strs is not None or ground_truths is not None:
            if solution_strs is None or ground_truths is None:
                raise TypeError("the batch form needs both solution_strs and ground_truths")
            outcomes = score_pairs(
                list(ground_truths),
                list(solution_strs),
                self.config,
                threads=self.threads,
                deadline=self.deadline,
            )
            report(outcomes, "compute_score")
            return [_row(o) for o in outcomes]
        if solution_str is None or ground_truth is None:
            raise TypeError("compute_score needs solution_str and ground_truth")
        outcomes = score_pairs(
            [ground_truth], [solution_str], self.config, threads=1, deadline=self.deadline
        )
        report(outcomes, "compute_score")
        return _row(outcomes[0])


#: One response: ``compute_score(data_source, solution_str, ground_truth, extra_info=None)``.
compute_score = ComputeScore()

#: The batch form, for ``reward_manager=batch``.
compute_score_batch = compute_score
