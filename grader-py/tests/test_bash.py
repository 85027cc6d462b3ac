"""BashGrader from Python: the subscore in the wire format (compared with the HUD SDK's own
BashGrader), its limits and sandbox, the credentials it withholds, the GIL released while a
command runs (many threads at once), and forked workers (``os.fork`` and ``multiprocessing``'s
``fork`` start method).

Every wait is bounded: commands run with a timeout, forked children are waited for with a
deadline and killed past it."""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import graderkit
from conftest import run_in
from graderkit import BashGrader, Sandbox

MIB = 1 << 20


def grade(command: str, **options: Any) -> dict[str, Any]:
    options.setdefault("timeout", 60.0)
    options.setdefault("login_shell", False)
    return BashGrader(command, **options).grade()


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def wait_child(pid: int, seconds: float = 120.0) -> int:
    """The exit status of forked child `pid`, killing it past `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError(f"the forked child {pid} did not finish within {seconds} s")


HUD = r"""
import asyncio, json, sys
from hud.graders import BashGrader
async def main():
    out = []
    for case in json.load(sys.stdin):
        sub = await BashGrader.grade(1.0, command=case["command"], timeout_seconds=case["timeout"])
        out.append(json.loads(sub.model_dump_json()))
    print(json.dumps(out))
asyncio.run(main())
"""


def test_the_subscore_is_the_hud_sdk_s() -> None:
    hud = os.environ.get("GRADERKIT_TEST_HUD_PYTHON")
    if not hud:
        pytest.fail("GRADERKIT_TEST_HUD_PYTHON is not set (run through cargo test)")
    cases = [
        {"command": "echo hello; echo oops >&2; exit 3", "timeout": 30},
        {"command": "printf 'a\\nb'", "timeout": 30},
        {"command": "kill -TERM $$", "timeout": 30},
        {"command": "printf '\\xff\\xfe ok'", "timeout": 30},
        {"command": "sleep 5", "timeout": 0.5},
    ]
    theirs = run_in(hud, HUD, cases)
    for case, sdk in zip(cases, theirs, strict=True):
        # The reference's defaults: a login shell, every variable inherited.
        ours = BashGrader(case["command"], timeout=case["timeout"], inherit_secrets=True).grade()
        assert (ours["name"], ours["value"], ours["weight"]) == (
            sdk["name"], sdk["value"], sdk["weight"]), case
        for key in ("exit_code", "stdout", "stderr", "timed_out", "timeout"):
            assert ours["info"].get(key) == sdk["info"].get(key), (case, key)
        assert ours["info"]["_parameters"]["command"] == sdk["info"]["_parameters"]["command"]
        assert ours["info"]["_parameters"]["timeout_seconds"] == (
            sdk["info"]["_parameters"]["timeout_seconds"])
        json.dumps(ours)  # plain JSON types only


def test_the_wire_format_and_a_name() -> None:
    sub = BashGrader("echo hi", timeout=30, login_shell=False).grade(0.5, name="tests")
    assert sub["name"] == "tests" and sub["value"] == 1.0 and sub["weight"] == 0.5
    info = sub["info"]
    assert info["exit_code"] == 0 and info["stdout"] == "hi\n" and info["stderr"] == ""
    assert info["_parameters"]["login_shell"] is False
    assert info["_parameters"]["timeout_seconds"] == 30
    assert set(info["limits"]) >= {"memory", "processes", "file_size", "open_files"}
    result = graderkit.combine([sub])
    assert result["reward"] == 1.0


def by_cgroup(sub: dict[str, Any], limit: str) -> bool:
    return str(sub["info"]["limits"][limit]).startswith("cgroup")


def test_a_memory_hog_scores_zero_and_names_the_limit() -> None:
    # Outer guard: a 3 GB address space for python, set by the command's own shell.
    sub = grade("ulimit -S -v 3000000; python3 -c '\nchunks = []\nwhile True: "
                "chunks.append(bytearray(64 << 20))'; exit 0", memory=256 * MIB, timeout=120)
    assert sub["value"] == 0.0, sub["info"]
    if by_cgroup(sub, "memory"):
        assert sub["info"]["limit_exceeded"] == "memory limit 256 MiB exceeded"
    else:
        assert sub["info"]["limits"]["memory"] == "rlimit"


def test_a_fork_bomb_stops_at_the_process_limit_and_leaves_nothing(tmp_path: Path) -> None:
    marker = f"graderkit-bomb-{os.getpid()}"
    # Outer guard: 8 levels deep, at most 256 leaves.
    command = (f"f() {{ if [ $1 -gt 0 ]; then f $(($1 - 1)) & f $(($1 - 1)); wait; "
               f"else sleep 30 # {marker}\nfi; }}; f 8")
    sub = grade(command, processes=32, timeout=4)
    assert sub["value"] == 0.0
    if by_cgroup(sub, "processes"):
        assert sub["info"]["limit_exceeded"] == "process limit 32 reached"
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and alive(int(p.name))
            and marker.encode() in _cmdline(p)]
    assert left == []


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


def test_cpu_time_file_size_and_open_files_are_bounded(tmp_path: Path) -> None:
    cpu = grade("while :; do :; done", cpu_time=1.0)
    assert cpu["value"] == 0.0
    assert "CPU time limit 1s exceeded" in cpu["info"]["limit_exceeded"]
    # Outer guard: a 64 MiB soft limit the shell sets where no lower hard limit is.
    big = grade("ulimit -S -f 65536 2>/dev/null; head -c 100G /dev/zero > big",
                file_size=MIB, cwd=tmp_path)
    assert big["value"] == 0.0
    assert big["info"]["limit_exceeded"] == "file size limit 1 MiB exceeded"
    assert (tmp_path / "big").stat().st_size == MIB
    files = grade("python3 -c 'files = [open(\"/dev/null\") for _ in range(100000)]'",
                  open_files=64)
    assert files["value"] == 0.0
    assert "Too many open files" in files["info"]["stderr"]
    assert files["info"]["_parameters"]["limits"]["open_files"] == 64


def test_a_timeout_scores_zero_and_stops_everything(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    sub = grade(f"setsid sleep 300 & echo $! > {pid_file}; sleep 300", timeout=1.0,
                memory=None, processes=None)
    assert sub["value"] == 0.0
    assert sub["info"]["timed_out"] is True and sub["info"]["exit_code"] is None
    assert not alive(int(pid_file.read_text()))


def test_output_is_kept_within_its_limit_and_a_launcher_runs_the_shell() -> None:
    # Outer guard: 64 MiB written, where 1 MiB is kept.
    loud = grade("head -c 64M /dev/zero | tr '\\0' x", output_limit=MIB)
    assert loud["value"] == 1.0
    stdout = loud["info"]["stdout"]
    dropped = loud["info"]["stdout_dropped_bytes"]
    assert dropped > 60 * MIB
    # The first and last halves of the budget, a marker line between them.
    marker = f"[... {dropped} bytes dropped ...]"
    assert marker in stdout and len(stdout.replace(marker, "").replace("\n", "")) == MIB
    launched = grade("echo $GRADERKIT_L", launcher=["env", "GRADERKIT_L=launched"])
    assert launched["info"]["stdout"] == "launched\n"
    assert launched["info"]["_parameters"]["launcher"] == "env"


def test_credentials_are_withheld_unless_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADERKIT_TEST_API_KEY", "s3cret")
    monkeypatch.setenv("GRADERKIT_TEST_PLAIN", "visible")
    command = 'echo "${GRADERKIT_TEST_API_KEY:-none} ${GRADERKIT_TEST_PLAIN:-none}"'
    default = grade(command)
    assert default["info"]["stdout"] == "none visible\n"
    assert default["info"]["env_withheld"] == ["GRADERKIT_TEST_API_KEY"]
    assert "s3cret" not in json.dumps(default)
    allowed = grade(command, pass_env=["GRADERKIT_TEST_API_KEY"])
    assert allowed["info"]["stdout"] == "s3cret visible\n"
    assert grade(command, inherit_secrets=True)["info"]["stdout"] == "s3cret visible\n"
    cleared = grade(command, env_clear=True, env={"GRADERKIT_TEST_PLAIN": "set"})
    assert cleared["info"]["stdout"] == "none set\n"
    assert cleared["info"]["_parameters"]["env"] == ["GRADERKIT_TEST_PLAIN"]


def test_an_agent_s_profile_passes_a_login_shell_check_only(tmp_path: Path) -> None:
    # An agent that can write to the home directory: its profile ends bash with code 0.
    (tmp_path / ".bash_profile").write_text("exit 0\n")
    env = {"HOME": str(tmp_path)}
    assert BashGrader("false", env=env, timeout=30).grade()["value"] == 1.0
    assert BashGrader("false", env=env, timeout=30, login_shell=False).grade()["value"] == 0.0


def test_the_sandbox_hides_the_host_and_its_network(searchable_tmp: Path) -> None:
    tmp_path = searchable_tmp / "case"
    tmp_path.mkdir()
    secret = tmp_path.parent / f"graderkit-secret-{os.getpid()}"
    secret.write_text("the answer key")
    work = tmp_path / "work"
    work.mkdir()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        command = (
            f"cat {secret} 2>/dev/null && echo READ; "
            f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo CONNECTED; "
            "echo written > here; echo done"
        )
        unsandboxed = grade(command, cwd=work, sandbox=False)
        assert "READ" in unsandboxed["info"]["stdout"]
        assert "CONNECTED" in unsandboxed["info"]["stdout"]
        system = "/usr/graderkit-sandbox-probe"
        escape = f"touch {system} 2>/dev/null && echo SYSTEM; echo tried"
        for sandbox in (True, Sandbox(), Sandbox(read_only=[str(tmp_path.parent / "x")])):
            sub = grade(command, cwd=work, sandbox=sandbox)
            assert sub["info"]["stdout"] == "done\n", sub["info"]
            assert sub["info"]["sandbox"] == "bwrap"
            assert (work / "here").read_text() == "written\n"
            assert grade(escape, cwd=work, sandbox=sandbox)["info"]["stdout"] == "tried\n"
            assert not Path(system).exists()
        network = grade(command, cwd=work, sandbox=Sandbox(network=True))
        assert "CONNECTED" in network["info"]["stdout"]
        assert network["info"]["_parameters"]["sandbox"]["network"] is True
    finally:
        server.close()
        secret.unlink()


def test_commands_run_at_once_from_many_threads(tmp_path: Path) -> None:
    # Each command waits until all have started: with the GIL held by one grade the others
    # could not start, and every command would time out.
    count = 8
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    results: list[dict[str, Any]] = []
    lock = threading.Lock()

    def run(n: int) -> None:
        command = (f"touch {barrier}/{n}; while [ $(ls {barrier} | wc -l) -lt {count} ]; "
                   "do sleep 0.01; done; echo $(ls " + str(barrier) + " | wc -l)")
        sub = grade(command, timeout=120)
        with lock:
            results.append(sub)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert len(results) == count
    assert all(sub["value"] == 1.0 for sub in results), [s["info"] for s in results]


def test_python_runs_while_a_command_runs(tmp_path: Path) -> None:
    # The command waits for a file this thread writes once it sees the command started: with
    # the GIL held by the grade, this thread could not run until the command timed out.
    started, flag = tmp_path / "started", tmp_path / "flag"
    done: list[dict[str, Any]] = []
    worker = threading.Thread(target=lambda: done.append(grade(
        f"touch {started}; while [ ! -e {flag} ]; do sleep 0.01; done; echo seen",
        timeout=120)))
    worker.start()
    while worker.is_alive() and not started.exists():
        time.sleep(0.01)
    flag.write_text("x")
    worker.join(180)
    assert done and done[0]["value"] == 1.0 and done[0]["info"]["stdout"] == "seen\n"


def _grade_in_child(command: str, out: Path) -> None:
    """A forked child's work: grade `command`, write the subscore, exit without cleanup."""
    code = 1
    try:
        out.write_text(json.dumps(grade(command, timeout=30, memory=None, processes=None)))
        code = 0
    finally:
        os._exit(code)


TAG = "env | grep -o '^GRADER_BASH_[0-9_]*'"


def test_a_forked_child_grades_with_its_own_threads_and_tag(tmp_path: Path) -> None:
    # The parent has graded already: its starter threads, sweeper and tag exist, and the
    # child has none of those threads.
    parent_tag = grade(TAG)["info"]["stdout"]
    assert parent_tag.startswith(f"GRADER_BASH_{os.getpid()}_")
    pid_file = tmp_path / "orphan"
    # A process that leaves bash's process group: found by the child's own tag.
    command = f"setsid sleep 300 & echo $! > {pid_file}; {TAG}"
    pid = os.fork()
    if pid == 0:
        _grade_in_child(command, tmp_path / "sub.json")
    assert wait_child(pid) == 0
    sub = json.loads((tmp_path / "sub.json").read_text())
    assert sub["value"] == 1.0
    # Its own tag: the parent's would let each stop the other's commands.
    assert sub["info"]["stdout"].startswith(f"GRADER_BASH_{pid}_")
    assert not alive(int(pid_file.read_text()))
    # The parent still grades, with its own tag.
    assert grade(TAG)["info"]["stdout"] == parent_tag


def test_a_timeout_in_a_forked_child_stops_what_its_command_left(tmp_path: Path) -> None:
    assert grade("true")["value"] == 1.0
    pid_file = tmp_path / "orphan"
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            sub = grade(f"setsid sleep 300 & echo $! > {pid_file}; sleep 300", timeout=1.0,
                        memory=None, processes=None)
            code = 0 if sub["info"].get("timed_out") else 2
        finally:
            os._exit(code)
    assert wait_child(pid) == 0
    assert not alive(int(pid_file.read_text()))


def _pool_grade(n: int) -> tuple[int, float, str]:
    sub = grade(f"echo {n}", timeout=30)
    return os.getpid(), sub["value"], sub["info"]["stdout"]


def test_a_fork_pool_grades(tmp_path: Path) -> None:
    assert grade("true")["value"] == 1.0
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        results = pool.map_async(_pool_grade, range(8)).get(timeout=120)
    assert [(value, out) for _, value, out in results] == [(1.0, f"{n}\n") for n in range(8)]
    assert os.getpid() not in {pid for pid, _, _ in results}


def _pickled_grade(grader: BashGrader) -> dict[str, Any]:
    return grader.grade()


def test_graders_pickle_into_a_pool_with_their_options(searchable_tmp: Path) -> None:
    tmp_path = searchable_tmp
    grader = BashGrader("echo $GRADERKIT_X; pwd", cwd=tmp_path, env={"GRADERKIT_X": "v"},
                        timeout=30, login_shell=False, memory=512 * MIB,
                        sandbox=Sandbox(network=False, read_only=["/opt"]))
    copy = pickle.loads(pickle.dumps(grader))
    assert repr(copy) == repr(grader)
    assert copy.grade()["info"]["stdout"] == f"v\n{tmp_path}\n"
    with multiprocessing.get_context("fork").Pool(1) as pool:
        sub = pool.apply_async(_pickled_grade, (grader,)).get(timeout=120)
    assert sub["info"]["stdout"] == f"v\n{tmp_path}\n"
    assert sub["info"]["_parameters"]["limits"]["memory_bytes"] == 512 * MIB


def test_the_repr_never_shows_environment_values() -> None:
    grader = BashGrader("pytest -q", env={"TOKEN": "s3cret"}, timeout=30, processes=64,
                        sandbox=True)
    shown = repr(grader)
    assert "TOKEN" in shown and "s3cret" not in shown
    assert shown.startswith("BashGrader('pytest -q'") and "processes=64" in shown
    assert "Sandbox(network=False" in shown
    assert repr(Sandbox(network=True)) == (
        "Sandbox(network=True, read_only=[], writable=[], or_unsandboxed=False)")
    assert pickle.loads(pickle.dumps(Sandbox(writable=["/tmp/x"]))) == Sandbox(writable=["/tmp/x"])


def test_programming_errors_raise_and_a_bad_cwd_is_the_grader_s_failure(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="command must be a str"):
        BashGrader(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout"):
        BashGrader("true", timeout=-1)
    with pytest.raises(ValueError, match="timeout"):
        BashGrader("true", timeout=float("nan"))
    with pytest.raises(ValueError, match="memory"):
        BashGrader("true", memory=-1)
    with pytest.raises(ValueError, match="inherit_secrets"):
        BashGrader("true", env_clear=True, inherit_secrets=True)
    with pytest.raises(TypeError, match="env"):
        BashGrader("true", env=["A=1"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sandbox"):
        BashGrader("true", sandbox="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="BashGrader"):
        BashGrader("true", env={"A=B": "1"}, timeout=30).grade()
    with pytest.raises(ValueError, match="weight"):
        BashGrader("true", timeout=30).grade(float("nan"))
    missing = tmp_path / "missing"
    with pytest.raises(graderkit.CommandError, match="missing") as error:
        BashGrader("true", cwd=missing, timeout=30).grade()
    assert isinstance(error.value, graderkit.GraderError)
    assert isinstance(error.value, Exception)


def test_a_sandboxed_cwd_the_host_user_cannot_reach_is_the_grader_s_failure(tmp_path: Path) -> None:
    # pytest's own temporary folder is 0700 root's: as root, the sandbox's host user cannot
    # pass it, and the grade says so rather than scoring 0.
    if os.geteuid() != 0:
        pytest.skip("the host user applies only to a grading process running as root")
    with pytest.raises(graderkit.CommandError, match="cannot be reached by the sandbox's user"):
        BashGrader("true", cwd=tmp_path, sandbox=True, login_shell=False).grade()
