"""Shared by the suite: the environment the Rust test harness gives it."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest


def run_in(python: str, script: str, payload: object) -> object:
    """Runs ``script`` with another environment's interpreter, feeding it ``payload`` as JSON on
    stdin; returns what it prints as JSON."""
    done = subprocess.run(
        [python, "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"{python} failed:\n{done.stderr}")
    return json.loads(done.stdout)


@pytest.fixture(scope="session")
def verifiers_site() -> Path:
    """The site-packages of the environment holding verifiers 0.3.1 (without dependencies)."""
    site = os.environ.get("GRADERKIT_TEST_VERIFIERS_SITE")
    if not site:
        pytest.fail("GRADERKIT_TEST_VERIFIERS_SITE is not set (run through cargo test)")
    return Path(site)


@pytest.fixture(scope="session")
def python() -> str:
    return sys.executable


@pytest.fixture(scope="session")
def verifiers(verifiers_site: Path) -> types.SimpleNamespace:
    """verifiers 0.3.1's own parser classes, their modules loaded alone from the installed
    package (as scripts/format_cases.py loads them: the rest of the package needs model
    clients the parsers never use), with ``Messages`` standing in as ``typing.Any``."""
    logging.getLogger("verifiers").setLevel(logging.ERROR)  # the parsers warn on purpose
    root = verifiers_site / "verifiers"
    # The stand-in packages are in sys.modules only while the modules load, so that nothing
    # else in the process (a test importing the real verifiers) sees them.
    saved = {name: module for name, module in sys.modules.items()
             if name == "verifiers" or name.startswith("verifiers.")}
    try:
        for name, path in [
            ("verifiers", root),
            ("verifiers.legacy", root / "legacy"),
            ("verifiers.legacy.parsers", root / "legacy" / "parsers"),
        ]:
            package = types.ModuleType(name)
            package.__path__ = [str(path)]
            sys.modules[name] = package
        stand_in = types.ModuleType("verifiers.legacy.types")
        stand_in.Messages = typing.Any  # type: ignore[attr-defined]
        sys.modules["verifiers.legacy.types"] = stand_in
        loaded = {}
        for module in ["parser", "xml_parser", "think_parser", "maybe_think_parser"]:
            name = f"verifiers.legacy.parsers.{module}"
            spec = importlib.util.spec_from_file_location(
                name, root / "legacy" / "parsers" / f"{module}.py"
            )
            assert spec is not None and spec.loader is not None
            loaded[module] = importlib.util.module_from_spec(spec)
            sys.modules[name] = loaded[module]
            spec.loader.exec_module(loaded[module])
    finally:
        for name in [n for n in sys.modules if n == "verifiers" or n.startswith("verifiers.")]:
            del sys.modules[name]
        sys.modules.update(saved)
    return types.SimpleNamespace(
        Parser=loaded["parser"].Parser,
        XMLParser=loaded["xml_parser"].XMLParser,
        ThinkParser=loaded["think_parser"].ThinkParser,
        MaybeThinkParser=loaded["maybe_think_parser"].MaybeThinkParser,
    )


@pytest.fixture
def searchable_tmp(tmp_path: Path):
    """A fresh directory that every user may search down to, for sandboxed commands: run as
    root, the sandbox binds its directories as an unprivileged host user, which cannot pass
    pytest's own ``0700`` temporary folder."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="graderkit-test-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
