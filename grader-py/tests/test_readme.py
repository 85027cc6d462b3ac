"""The README's Python examples run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_each_python_example_runs(block: str) -> None:
    exec(compile(block, str(README), "exec"), {})  # noqa: S102 - the README's own code


def test_there_are_examples() -> None:
    assert len(BLOCKS) >= 5
