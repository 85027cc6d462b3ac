"""Each reward function called exactly as its trainer calls it.

The calls are taken from the pinned versions' sources:
- TRL 1.16.0, ``GRPOTrainer._calculate_rewards`` (trl/trainer/grpo_trainer.py): keyword
  arguments ``prompts``, ``completions``, ``completion_ids``, the data set's columns,
  ``trainer_state``, ``log_extra``, ``log_metric``; a list of ``float | None`` back, ``None``
  turned into NaN; async callables gathered with ``asyncio.gather``.
- verl 0.9.1, ``NaiveRewardManager.__call__`` (verl/workers/reward_manager/naive.py):
  ``compute_score(data_source=, solution_str=, ground_truth=, extra_info=)``, a float or a dict
  whose ``score`` goes into a float tensor; ``BatchRewardManager.verify``
  (verl/workers/reward_manager/batch.py): ``compute_score(data_sources=, solution_strs=,
  ground_truths=, extra_infos=)``.
- OpenRLHF 0.11.2, ``SingleTurnAgentExecutor._fetch_rewards_via_func``
  (openrlhf/utils/agent.py): ``asyncio.to_thread(reward_func, queries, prompts, labels)`` on
  batches of one, reading ``rewards``, ``scores`` and ``extra_logs``.
- verifiers 0.3.1, ``Rubric._call_individual_reward_func``
  (verifiers/legacy/rubrics/rubric.py): ``func(**merged)`` where the function takes
  ``**kwargs``, its exception logged and scored 0.0.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import pickle
import sys

import pytest

from graderkit import openrlhf, trl, verifiers, verl
from graderkit._rewards import MathConfig


class Collector:
    """TRL's ``_log_completion_extra`` and ``_log_metric``, recording what they get."""

    def __init__(self) -> None:
        self.extra: dict[str, list] = {}
        self.metrics: dict[str, list[float]] = {}

    def log_extra(self, column: str, values: list) -> None:
        self.extra.setdefault(column, []).extend(values)

    def log_metric(self, name: str, value: float) -> None:
        self.metrics.setdefault(name, []).append(value)


def trl_call(func, prompts, completions, **columns):
    """What ``GRPOTrainer._calculate_rewards`` does with a reward function."""
    logs = Collector()
    reward_kwargs = dict(columns)
    reward_kwargs["trainer_state"] = object()
    reward_kwargs["log_extra"] = logs.log_extra
    reward_kwargs["log_metric"] = logs.log_metric
    ids = [[1, 2, 3] for _ in completions]
    if inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(func.__call__):

        async def gather():
            return await asyncio.gather(
                func(prompts=prompts, completions=completions, completion_ids=ids, **reward_kwargs)
            )

        output = asyncio.run(gather())[0]
    else:
        output = func(prompts=prompts, completions=completions, completion_ids=ids, **reward_kwargs)
    assert len(output) == len(prompts)
    return [r if r is not None else math.nan for r in output], logs


def test_trl_accuracy_reward_as_the_trainer_calls_it() -> None:
    solutions = [r"\frac{1}{3}", r"\frac{1}{3}", "the answer is 72", "42"]
    completions = [
        [{"role": "assistant", "content": r"My answer is \boxed{\frac{1}{3}}"}],
        [{"role": "assistant", "content": r"My answer is \boxed{\frac{1}{2}}"}],
        [{"role": "assistant", "content": r"\boxed{1}"}],
        [{"role": "assistant", "content": "The answer is 42"}],
    ]
    prompts = [[{"role": "user", "content": "q"}]] * 4
    rewards, logs = trl_call(trl.accuracy_reward, prompts, completions, solution=solutions)
    assert rewards[:2] == [1.0, 0.0]
    assert math.isnan(rewards[2])  # the gold cannot be read whole: not computed, skipped
    assert rewards[3] == 0.0  # TRL reads LaTeX only: a bare number is not an answer
    assert logs.metrics["graderkit/not_computed"] == [1.0]
    assert logs.extra["solution"] == solutions
    assert len(logs.extra["gold_parsed"]) == 4 and len(logs.extra["answer_parsed"]) == 4
    assert logs.extra["graderkit_reason"][2] != "" and logs.extra["graderkit_reason"][0] == ""


def test_trl_accuracy_reward_takes_plain_completions_and_the_async_form_is_gathered() -> None:
    solutions = ["$2$", "$2$"]
    completions = ["so \\boxed{2}", "so \\boxed{3}"]
    sync, _ = trl_call(trl.accuracy_reward, ["p", "p"], completions, solution=solutions)
    gathered, _ = trl_call(trl.async_accuracy_reward, ["p", "p"], completions, solution=solutions)
    assert sync == gathered == [1.0, 0.0]


def test_trl_format_rewards_are_trl_s_and_open_r1_s() -> None:
    completions = [
        [{"content": "<think>\nThis is my reasoning.\n</think>\nThis is my answer."}],
        [{"content": "<think>\nThis is my reasoning.\nThis is my answer."}],
        [{"content": "<think>a</think><think>b</think>"}],
    ]
    assert trl.think_format_reward(completions) == [1.0, 0.0, 0.0]
    good = "<think>\nreason\n</think>\n<answer>\n42\n</answer>"
    assert trl.format_reward([good, good + "\nmore", "<think>\nx</think>\n<answer>\n1\n</answer>"]) == [
        1.0,
        1.0,
        0.0,
    ]


def test_trl_reward_without_its_column_says_which() -> None:
    with pytest.raises(TypeError, match="'solution'"):
        trl.accuracy_reward(completions=["x"], prompts=["p"], answer=["1"])


def test_a_gold_list_shorter_than_the_completions_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="one gold for each answer"):
        trl.accuracy_reward(completions=["a", "b"], solution=["1"])


def test_verl_compute_score_both_forms() -> None:
    one = verl.compute_score(
        data_source="lighteval/MATH", solution_str="so the answer is 1/2", ground_truth="\\frac{1}{2}", extra_info={}
    )
    assert one == {"score": 1.0, "acc": True, "valid": True, "reason": ""}
    batch = verl.compute_score(
        data_sources=["math", "math", "math"],
        solution_strs=["x = 3", "4", "5"],
        ground_truths=["3", "5", "???"],
        extra_infos=[{}, {}, {}],
    )
    assert [r["score"] for r in batch] == [1.0, 0.0, 0.0]
    assert [r["valid"] for r in batch] == [True, True, False]
    assert batch[2]["reason"]
    assert {tuple(sorted(r)) for r in batch} == {("acc", "reason", "score", "valid")}
    # The score goes into a float tensor.
    assert all(isinstance(r["score"], float) for r in batch)


def test_openrlhf_reward_func_in_a_thread_as_openrlhf_calls_it() -> None:
    assert "torch" not in sys.modules  # graderkit never imports it

    async def fetch():
        return await asyncio.gather(
            asyncio.to_thread(openrlhf.reward_func, ["Q: 1+1? A: \\boxed{2}"], ["Q: 1+1? A: "], ["2"]),
            asyncio.to_thread(openrlhf.reward_func, ["Q: A: 3"], ["Q: A: "], ["the answer is 72"]),
        )

    right, missing = asyncio.run(fetch())
    assert right["rewards"] == [1.0] and right["scores"] == [1.0]
    assert right["extra_logs"]["graderkit_valid"] == [1.0]
    assert missing["rewards"] == [0.0]
    assert missing["extra_logs"]["graderkit_valid"] == [0.0]


def test_verifiers_math_reward_through_the_rubric_s_call() -> None:
    merged = {"completion": [{"role": "assistant", "content": "\\boxed{7}"}], "answer": "7", "prompt": []}
    sig = inspect.signature(verifiers.math_reward)
    assert any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
    assert float(verifiers.math_reward(**merged)) == 1.0
    with pytest.raises(verifiers.NotComputed):
        verifiers.math_reward(completion="7", answer="the answer is 72")
    assert issubclass(verifiers.NotComputed, Exception)


@pytest.mark.parametrize(
    "func",
    [trl.accuracy_reward, trl.async_accuracy_reward, verl.compute_score, openrlhf.reward_func, verifiers.math_reward],
)
def test_reward_functions_pickle(func) -> None:
    back = pickle.loads(pickle.dumps(func))
    assert type(back) is type(func)
    assert back.__name__ == func.__name__
    assert back.config == func.config


def test_configurations_by_preset_and_semantics() -> None:
    exact = trl.AccuracyReward(MathConfig(preset="trl"))
    parity = trl.AccuracyReward(MathConfig(preset="trl", semantics="parity"))
    completions = ["\\boxed{\\frac{1}{2^{98}}}"]
    assert exact(completions, solution=["$\\frac{1}{2^{99}}$"]) == [0.0]
    assert parity(completions, solution=["$\\frac{1}{2^{99}}$"]) == [1.0]
    with pytest.raises(ValueError, match="preset"):
        trl.AccuracyReward(MathConfig(preset="nope"))(["1"], solution=["1"])


def test_chat_messages_may_be_objects_with_role_and_content() -> None:
    """verifiers 0.3.1 passes its own message objects (``AssistantMessage``), not dicts."""
    from dataclasses import dataclass

    @dataclass
    class Message:
        role: str
        content: object

    completion = [Message("user", "what is 6 x 7?"), Message("assistant", "\\boxed{42}")]
    assert verifiers.math_reward(completion, answer="$42$") == 1.0
    parts = [Message("assistant", [{"type": "text", "text": "\\boxed{42}"}])]
    assert verifiers.math_reward(parts, answer="$42$") == 1.0
    with pytest.raises(TypeError, match="completion 0"):
        verifiers.math_reward([object()], answer="$42$")
