"""Safe anywhere (SPEC D42): no signals, the GIL released, correct from threads, asyncio, forked
and spawned workers; a panic is an Exception; bad input raises, agents' answers score."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import graderkit
from graderkit import _native, trl, verify_many
from graderkit._rewards import MathConfig

PAIRS = [
    ("$\\frac{1}{2}$", "the answer is $0.5$"),
    ("$2^{10}$", "\\boxed{1024}"),
    ("$x^2 + 2x + 1$", "$(x+1)^2$"),
    ("$\\sqrt{2}$", "$1.41$"),
    ("$[0, 1)$", "\\boxed{[0,1)}"),
    ("$10000000001$", "$10000000000$"),
] * 20

HANG = r"\boxed{\dfrac{5^{\left(5^{\left(5^{\left(5^5\right)}\right)} - 4\right)} - 5}{16}}"


def native_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def serial() -> list[bool | None]:
    return verify_many([g for g, _ in PAIRS], [a for _, a in PAIRS], threads=1)


def test_threads_agree_with_one_thread() -> None:
    expected = serial()
    for threads in (2, 4, 8):
        assert verify_many([g for g, _ in PAIRS], [a for _, a in PAIRS], threads=threads) == expected
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda pair: graderkit.verify(graderkit.parse(pair[0]), graderkit.parse(pair[1])), PAIRS))
    assert results == expected


def test_the_gil_is_released_while_a_batch_runs() -> None:
    # A Python thread keeps counting while another thread's batch runs natively.
    counted = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            counted[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    before = counted[0]
    verify_many([g for g, _ in PAIRS] * 20, [a for _, a in PAIRS] * 20, threads=1)
    during = counted[0] - before
    stop.set()
    counter.join()
    assert during > 1000


def test_asyncio_gathers_async_rewards() -> None:
    async def main() -> list[list[float | None]]:
        return await asyncio.gather(
            *[trl.async_accuracy_reward(completions=["\\boxed{2}"], solution=["$2$"]) for _ in range(8)]
        )

    assert asyncio.run(main()) == [[1.0]] * 8


def test_a_forked_child_verifies() -> None:
    expected = serial()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.write(write, pickle.dumps(serial()))
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        got = pickle.loads(pipe.read())
    os.waitpid(pid, 0)
    assert got == expected


def _score(func, completions, solutions):
    return func(completions, solution=solutions)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_pickled_rewards_run_in_worker_processes(method: str) -> None:
    context = multiprocessing.get_context(method)
    with context.Pool(2) as pool:
        results = pool.starmap(
            _score, [(trl.accuracy_reward, ["\\boxed{3}", "\\boxed{4}"], ["$3$", "$3$"])] * 4
        )
    assert results == [[1.0, 0.0]] * 4


def test_a_panic_is_an_exception_of_the_package() -> None:
    with pytest.raises(Exception) as caught:
        _native._panic_for_tests()
    assert isinstance(caught.value, graderkit.PanicError)
    assert "panicked" in str(caught.value)


def test_math_verify_65_returns_on_a_worker_thread_within_its_deadline() -> None:
    before = native_threads()
    results: list[object] = []
    worker = threading.Thread(target=lambda: results.append(verify_many(["$1$"] * 4, [HANG] * 4, deadline=3.0)))
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive()
    assert results == [[False] * 4] or all(r in (False, None) for r in results[0])  # type: ignore[index]
    # `join` returns once the Python thread is done, a moment before its OS thread is gone
    # from /proc: wait for that (bounded), then no thread of the batch may be left.
    settle = time.monotonic() + 10
    while native_threads() > before and time.monotonic() < settle:
        time.sleep(0.02)
    assert native_threads() <= before


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="threads"):
        verify_many(["1"], ["1"], threads=0)
    for deadline in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="deadline"):
            verify_many(["1"], ["1"], deadline=deadline)
    with pytest.raises(ValueError, match="one gold for each answer"):
        verify_many(["1"], ["1", "2"])
    with pytest.raises(TypeError):
        verify_many(["1"], [None])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        verify_many("1", "1")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "answer",
    [
        "\\boxed{1}\ud800",  # a lone surrogate
        "\\boxed{1}" + " " * 1_100_000,  # past the 1 MB text limit
        HANG,
        "$" + "\\frac{1}{" * 10_000 + "2" + "}" * 10_000 + "$",
    ],
)
def test_unjudgeable_answers_score_zero_with_a_reason(answer: str) -> None:
    collected: dict[str, list] = {}
    rewards = trl.AccuracyReward(MathConfig(preset="math_verify"), deadline=30.0)(
        [answer], solution=["$1$"], log_extra=lambda c, v: collected.setdefault(c, []).extend(v)
    )
    assert rewards == [0.0]
    assert collected["graderkit_reason"][0] != ""
