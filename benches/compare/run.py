#!/usr/bin/env python3
"""Side-by-side benchmark: this project against the Python reference, in one run.

Usage (from the repository root):  python3 benches/compare/run.py [--quick]

1. Creates a virtual environment under target/compare/ with the reference (hud-python==0.5.39,
   the `hud.native` module) on first use.
2. Runs the reference's workloads (benches/compare/reference.py) and this project's
   (the criterion bench `tests/benches/compare.rs`), both as medians per iteration.
3. Runs the one-shot probes in both: a `sleep 30 & sleep 30` command with a 1 s timeout (time
   to return, and how many of its processes are still alive afterwards), and the peak RSS of a
   grade whose command prints 200 MB (`/usr/bin/time -v`).
4. Prints one Markdown table with the ratios.

Both sides run their commands with the same empty HOME (`target/compare/home`): `bash -lc`
reads the login profile, which on some machines takes longer than everything a grader does,
and would otherwise be most of what the bash workloads measure.

Only the standard library is used, so it runs with any python3.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
VENV = TARGET / "compare" / "venv-hud-python-0.5.39"
REFERENCE = "hud-python==0.5.39"
PYTHON = VENV / "bin" / "python"
HOME = TARGET / "compare" / "home"


def measured_env() -> dict:
    """The environment both sides are measured in: an empty HOME, cargo and rustup kept."""
    env = dict(os.environ)
    real_home = Path(env.get("HOME", str(Path.home())))
    env.setdefault("CARGO_HOME", str(real_home / ".cargo"))
    env.setdefault("RUSTUP_HOME", str(real_home / ".rustup"))
    HOME.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(HOME)
    return env

# (label, criterion directory under target/criterion, reference.py key)
WORKLOADS = [
    ("from_subscores, N = 10", "from_subscores/10", "from_subscores/10"),
    ("from_subscores, N = 1 000", "from_subscores/1000", "from_subscores/1000"),
    ("from_subscores, N = 100 000", "from_subscores/100000", "from_subscores/100000"),
    ("one grade of a 3-parameter grader", "grade/3-params", "grade/3-params"),
    ("50 sequential BashGraders of `true`", "bash/50-sequential-true", "bash/50-sequential-true"),
    (
        "100 concurrent BashGraders of `sleep 0.2`",
        "bash/100-concurrent-sleep-200ms",
        "bash/100-concurrent-sleep-0.2",
    ),
]

# One BashGrader in the reference, for the probes.
PY_PROBE = """
import asyncio, json, sys, time, warnings
warnings.filterwarnings("ignore")
from hud.native.graders import BashGrader
command, timeout = sys.argv[1], float(sys.argv[2])
start = time.perf_counter()
sub = asyncio.run(BashGrader.grade(weight=1.0, command=command, timeout_seconds=timeout))
print(json.dumps({"seconds": time.perf_counter() - start, "value": sub.value}))
"""


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, text=True, **kwargs)


def ensure_venv() -> None:
    marker = VENV / "installed"
    if marker.exists() and marker.read_text().strip() == REFERENCE:
        return
    print(f"creating {VENV} with {REFERENCE} ...", file=sys.stderr)
    run([sys.executable, "-m", "venv", "--clear", str(VENV)])
    run([str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", REFERENCE])
    marker.write_text(REFERENCE + "\n")


def reference_medians(quick: bool) -> dict:
    args = [str(PYTHON), str(ROOT / "benches" / "compare" / "reference.py")]
    if quick:
        args.append("--quick")
    out = run(args, capture_output=True, env=measured_env()).stdout
    return {key: value["median_s"] for key, value in json.loads(out).items()}


def rust_medians(quick: bool) -> dict:
    env = measured_env()
    if quick:
        env["GRADER_COMPARE_QUICK"] = "1"
    run(
        ["cargo", "bench", "-q", "-p", "grader-tests", "--bench", "compare", "--", "--noplot"],
        cwd=ROOT,
        env=env,
        stdout=sys.stderr,
    )
    medians = {}
    for _, directory, _ in WORKLOADS:
        estimates = TARGET / "criterion" / directory / "new" / "estimates.json"
        if estimates.exists():
            medians[directory] = json.loads(estimates.read_text())["median"]["point_estimate"] / 1e9
    return medians


def alive(marker: str) -> int:
    """How many processes have `marker` in their command line (then kills them)."""
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    if found:
        subprocess.run(["pkill", "-KILL", "-f", marker])
    return len(found)


def timeout_probe(cmd_prefix: list[str], marker: str) -> tuple[float, int]:
    command = f"sleep {marker} & sleep {marker}"
    start = time.perf_counter()
    run(cmd_prefix + [command, "1"], capture_output=True, env=measured_env())
    elapsed = time.perf_counter() - start
    time.sleep(0.5)
    return elapsed, alive(f"sleep {marker}")


def peak_rss_mib(cmd_prefix: list[str]) -> float:
    command = "yes 0123456789abcdef0123456789abcdef | head -c 200000000"
    result = subprocess.run(
        ["/usr/bin/time", "-v"] + cmd_prefix + [command, "600"],
        capture_output=True,
        text=True,
        check=True,
        env=measured_env(),
    )
    kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr).group(1))
    return kib / 1024


def fmt_ratio(theirs: float | None, ours: float | None) -> str:
    """The reference's measure divided by ours: above 1, we take less."""
    if not theirs or not ours:
        return "n/a"
    ratio = theirs / ours
    return f"{ratio:.0f}" if ratio >= 100 else f"{ratio:.2g}" if ratio >= 10 else f"{ratio:.2f}"


def fmt_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.3g} s"


def main() -> None:
    quick = "--quick" in sys.argv
    ensure_venv()
    run(["cargo", "build", "-q", "--release", "-p", "grader-tests", "--bin", "grade-probe"], cwd=ROOT)
    probe = [str(TARGET / "release" / "grade-probe")]
    py_probe = [str(PYTHON), "-c", PY_PROBE]

    rust = rust_medians(quick)
    reference = reference_medians(quick)

    rows = []
    for label, directory, key in WORKLOADS:
        ours, theirs = rust.get(directory), reference.get(key)
        ratio = fmt_ratio(theirs, ours)
        rows.append((label, fmt_seconds(theirs), fmt_seconds(ours), ratio))

    token = str(int(time.time() * 1000) % 100000)
    py_t, py_left = timeout_probe(py_probe, f"30.{token}1")
    rs_t, rs_left = timeout_probe(probe, f"30.{token}2")
    rows.append(
        ("`sleep 30 & sleep 30`, 1 s timeout: time to return", f"{py_t:.2f} s", f"{rs_t:.2f} s", fmt_ratio(py_t, rs_t))
    )
    rows.append(("… processes still running afterwards", str(py_left), str(rs_left), "n/a"))
    py_rss, rs_rss = peak_rss_mib(py_probe), peak_rss_mib(probe)
    rows.append(
        ("peak RSS, command printing 200 MB", f"{py_rss:.0f} MiB", f"{rs_rss:.0f} MiB", fmt_ratio(py_rss, rs_rss))
    )

    print(
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores,"
        f" Python {platform.python_version()}, HOME empty{' (quick run)' if quick else ''}.\n"
    )
    print("| workload | reference (hud-python 0.5.39) | grader | reference ÷ grader |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
