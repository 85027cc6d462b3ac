"""The Python code of docs/python.md runs: each block executes, except the TRL one, which needs
TRL and a model (it is compiled, and the names it imports from graderkit exist); each trainer
example is ten lines or fewer."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)


def needs_a_trainer(block: str) -> bool:
    return "from trl import" in block


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_each_block_runs(block: str) -> None:
    code = compile(block, str(PAGE), "exec")
    if needs_a_trainer(block):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("graderkit"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name), (node.module, alias.name)
        return
    exec(code, {})  # noqa: S102 - the page's own code


def test_the_trainer_examples_are_ten_lines_or_fewer() -> None:
    trainers = [b for b in BLOCKS if re.search(r"graderkit\.(trl|verl|openrlhf|verifiers)", b)]
    assert len(trainers) >= 4
    for block in trainers:
        lines = [line for line in block.splitlines() if line.strip()]
        assert len(lines) <= 10, block
