"""Shared by the suite: the environment the Rust test harness gives it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
