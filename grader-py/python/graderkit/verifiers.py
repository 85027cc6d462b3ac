"""Reward functions for verifiers' rubrics (verifiers 0.3.1, whose ``Rubric`` calls each reward
function per rollout with the arguments it names: ``completion``, ``answer``, ``prompt``,
``state``, ...; its error path logs an exception and scores 0).

``math_reward(completion, answer)`` is 1.0 when the completion's final answer is ``answer``'s,
0.0 when it is not or cannot be read; a reward that cannot be computed (a gold that cannot be
read whole, the deadline) raises :class:`NotComputed`, which the rubric logs as the error it is.
"""

from __future__ import annotations

from typing import Any

from graderkit._native import GraderError
from graderkit._rewards import MathConfig, completion_text, score_pairs

__all__ = ["MathReward", "NotComputed", "math_reward", "rubric"]


class NotComputed(GraderError):
    """A reward that could not be computed, for a reason outside the answer."""


class MathReward:
    """A per-rollout math reward for verifiers' ``Rubric``. Instances pickle."""

    def __init__(
        self, config: MathConfig | None = None, *, deadline: float | None = None
    ) -> None:
        self.config = config if config is not None else MathConfig(preset="math_verify")
        self.deadline = deadline
        self.__name__ = "math_reward"

    def __repr__(self) -> str:
        return f"MathReward(config={self.config!r}, deadline={self.deadline!r})"

    def __call__(self, completion: Any, answer: str, **kwargs: Any) -> float:
        outcome = score_pairs(
            [answer], [completion_text(completion, 0)], self.config, threads=1, deadline=self.deadline
        )[0]
        if outcome.reward is None:
            raise NotComputed(outcome.reason or "not computed")
        return outcome.reward


#: ``math_reward(completion, answer, **kwargs)``.
math_reward = MathReward()


def rubric(weight: float = 1.0, **kwargs: Any) -> Any:
    """A verifiers ``Rubric`` scoring :data:`math_reward` with ``weight`` (verifiers is imported
    here, not by graderkit); ``kwargs`` go to the ``Rubric``."""
    from verifiers import Rubric  # noqa: PLC0415 - verifiers is optional

    return Rubric(funcs=[math_reward], weights=[weight], **kwargs)
