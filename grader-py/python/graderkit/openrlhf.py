"""A reward function in OpenRLHF's shape (OpenRLHF 0.11.2's ``--reward.remote_url reward.py``).

OpenRLHF loads ``reward_func`` from the file and calls ``reward_func(queries, prompts, labels)``
in a thread (``SingleTurnAgentExecutor._fetch_rewards_via_func``), where each query is the
decoded prompt and response; it reads ``rewards``, ``scores`` and ``extra_logs`` from the
returned dict. graderkit never imports torch: the values are tensors only where torch is
already imported (as it is inside OpenRLHF), lists otherwise.

A reward that could not be computed (a gold that cannot be read whole, the deadline) is 0.0 with
0.0 in the mask ``extra_logs["graderkit_valid"]``, and its reason is logged.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from graderkit._rewards import MathRewardBase, report, score_pairs

__all__ = ["RewardFunc", "reward_func"]


def _response(query: str, prompt: str) -> str:
    """The response part of a query (the text after the prompt)."""
    if not isinstance(query, str) or not isinstance(prompt, str):
        raise TypeError("queries and prompts must be lists of str")
    if prompt and query.startswith(prompt):
        return query[len(prompt) :]
    if prompt and prompt in query:
        return query[query.rindex(prompt) + len(prompt) :]
    return query


def _values(values: list[float]) -> Any:
    torch = sys.modules.get("torch")
    if torch is not None:
        return torch.tensor(values, dtype=torch.float32)
    return values


class RewardFunc(MathRewardBase):
    """``reward_func(queries, prompts, labels)`` for math answers: ``labels`` are the golds.
    Instances pickle."""

    preset = "math_verify"
    name = "reward_func"

    def __call__(
        self, queries: Sequence[str], prompts: Sequence[str], labels: Sequence[str], **kwargs: Any
    ) -> dict[str, Any]:
        if len(queries) != len(prompts):
            raise ValueError(f"{len(queries)} queries for {len(prompts)} prompts")
        answers = [_response(q, p) for q, p in zip(queries, prompts)]
        outcomes = score_pairs(
            list(labels), answers, self.config, threads=self.threads, deadline=self.deadline
        )
        missing = report(outcomes, "reward_func")
        rewards = [o.reward if o.reward is not None else 0.0 for o in outcomes]
        valid = [0.0 if o.reward is None else 1.0 for o in outcomes]
        return {
            "rewards": _values(rewards),
            "scores": _values(rewards),
            "extra_logs": {
                "graderkit_valid": _values(valid),
                "graderkit_not_computed": _values([float(missing)] * len(outcomes)),
            },
        }


#: The reward function OpenRLHF loads from a ``.py`` file.
reward_func = RewardFunc()
