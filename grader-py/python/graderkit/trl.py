"""Reward functions in TRL's shape (TRL 1.16.0's ``GRPOTrainer(reward_funcs=...)``; open-r1
and slime use the same).

TRL calls each reward function once per batch as
``f(prompts=..., completions=..., completion_ids=..., **columns, trainer_state=...,
log_extra=..., log_metric=...)`` (``GRPOTrainer._calculate_rewards``), where ``completions`` are
strings or chat messages and the data set's columns (``solution``, say) come as keywords; it
expects ``list[float | None]``, one per completion, and turns ``None`` into NaN, which its
advantage computation skips. Callable objects with an ``async`` ``__call__`` are gathered.

``accuracy_reward`` reads the gold and the completion as TRL 1.16.0's own ``accuracy_reward``
does (``trl/rewards/accuracy_rewards.py``: the gold with math-verify's defaults, the completion
as LaTeX only, ``\\boxed{}`` first, units normalized, ``first_match``), with graderkit's exact
verdicts and no signal-based timeouts, so it works off the main thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from graderkit._rewards import MathConfig, completion_text, report, score_pairs

__all__ = [
    "AccuracyReward",
    "accuracy_reward",
    "async_accuracy_reward",
    "format_reward",
    "think_format_reward",
]


class AccuracyReward:
    """A math accuracy reward in TRL's shape: 1.0 when the completion's final answer is the
    gold's, 0.0 when it is not (or cannot be read), ``None`` when the reward could not be
    computed (a gold that cannot be read whole, the deadline) — TRL skips those.

    ``config`` says how golds and answers are read (TRL's ``accuracy_reward`` by default),
    ``column`` which data set column holds the gold, ``threads`` and ``deadline`` (seconds per
    batch) how the batch runs. Instances pickle, so they can be sent to worker processes.

    After each batch, the number of rewards not computed is logged as the metric
    ``graderkit/not_computed`` (through TRL's ``log_metric``) and the reasons with the
    ``graderkit`` logger; ``log_extra`` receives TRL's columns ``solution``, ``gold_parsed``
    and ``answer_parsed``, and ``graderkit_reason``.
    """

    def __init__(
        self,
        config: MathConfig | None = None,
        *,
        column: str = "solution",
        threads: int | None = None,
        deadline: float | None = None,
        name: str = "accuracy_reward",
    ) -> None:
        self.config = config if config is not None else MathConfig(preset="trl")
        self.column = column
        self.threads = threads
        self.deadline = deadline
        self.__name__ = name

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(config={self.config!r}, column={self.column!r}, "
            f"threads={self.threads!r}, deadline={self.deadline!r}, name={self.__name__!r})"
        )

    def _score(
        self,
        completions: Sequence[Any],
        kwargs: dict[str, Any],
        log_extra: Callable[[str, list], None] | None,
        log_metric: Callable[[str, float], None] | None,
    ) -> list[float | None]:
        if self.column not in kwargs:
            raise TypeError(
                f"{self.__name__} needs the data set column {self.column!r} "
                f"(got {', '.join(sorted(kwargs)) or 'no columns'})"
            )
        golds = kwargs[self.column]
        answers = [completion_text(c, i) for i, c in enumerate(completions)]
        outcomes = score_pairs(
            golds, answers, self.config, threads=self.threads, deadline=self.deadline
        )
        missing = report(outcomes, self.__name__)
        if log_metric is not None:
            log_metric("graderkit/not_computed", float(missing))
        if log_extra is not None:
            log_extra("solution", list(golds))
            log_extra("gold_parsed", [o.gold_parsed for o in outcomes])
            log_extra("answer_parsed", [o.answer_parsed for o in outcomes])
            log_extra("graderkit_reason", [o.reason or "" for o in outcomes])
        return [o.reward for o in outcomes]

    def __call__(
        self,
        completions: Sequence[Any],
        log_extra: Callable[[str, list], None] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        return self._score(completions, kwargs, log_extra, log_metric)


class AsyncAccuracyReward(AccuracyReward):
    """:class:`AccuracyReward` with an ``async`` ``__call__``, which TRL gathers with its other
    async reward functions; the batch runs on native threads off the event loop."""

    async def __call__(  # type: ignore[override]
        self,
        completions: Sequence[Any],
        log_extra: Callable[[str, list], None] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        return await asyncio.to_thread(self._score, completions, kwargs, log_extra, log_metric)


#: TRL's ``accuracy_reward``: the gold column ``solution``.
accuracy_reward = AccuracyReward()

#: The same, ``async``.
async_accuracy_reward = AsyncAccuracyReward(name="async_accuracy_reward")


def think_format_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """TRL 1.16.0's ``think_format_reward``: 1.0 when the completion starts with ``<think>``,
    holds no second ``<think>``, and closes it with ``</think>`` (its pattern
    ``^<think>(?!.*<think>)(.*?)</think>.*$``, matched with DOTALL at the start), else 0.0.
    Linear in the text's length."""
    out = []
    for index, completion in enumerate(completions):
        text = completion_text(completion, index)
        rest = text[7:]
        ok = text.startswith("<think>") and "<think>" not in rest and "</think>" in rest
        out.append(1.0 if ok else 0.0)
    return out


def format_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """open-r1's ``format_reward``: 1.0 when the completion matches
    ``^<think>\\n.*?\\n</think>\\n<answer>\\n.*?\\n</answer>$`` (DOTALL and MULTILINE, matched at
    the start), else 0.0. Decided with substring searches, linear in the text's length, where
    the pattern backtracks."""
    out = []
    for index, completion in enumerate(completions):
        out.append(1.0 if _open_r1_format(completion_text(completion, index)) else 0.0)
    return out


def _open_r1_format(text: str) -> bool:
    if not text.startswith("<think>\n"):
        return False
    middle = text.find("\n</think>\n<answer>\n", 8)
    if middle < 0:
        return False
    # The earliest separator leaves the most room for the answer; the closing tag may end the
    # text or a line (MULTILINE's `$`).
    start = middle + len("\n</think>\n<answer>\n")
    close = text.find("\n</answer>", start)
    while close >= 0:
        end = close + len("\n</answer>")
        if end == len(text) or text[end] == "\n":
            return True
        close = text.find("\n</answer>", close + 1)
    return False
