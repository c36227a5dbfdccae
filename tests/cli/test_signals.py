"""SIGINT or SIGTERM sent to the `repogate` process alone while a test runs.

A terminal's Ctrl-C reaches the whole foreground group; a scheduler's stop (systemd, Kubernetes,
a CI runner's timeout) or `kill PID` reaches the main process alone, often as SIGTERM. Either
must act at once for the whole tree of processes the run started (the sandboxed test run is in a
session of its own, so no signal reaches it unless repogate stops it), exit 130 as documented
(SIGTERM gave 143, with no line and the interrupted attempt left to chance), keep finished
attempts and print one line.

Each `repogate` here starts in a session of its own, so the signals these tests send never reach
the test runner.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _task import make_task
from repogate.cli import INTERRUPTED_MESSAGE, ExitCode
from repogate.store import Store

HANG_S = 1800
"""Waits are on events; this bound only turns a hang into a failure, and no load reaches it."""

MARK = "repogate-signal-test-blocks"

BLOCKING_TEST = f'''
import pathlib, time

def test_blocks():
    pathlib.Path("{MARK}").write_text("started")
    time.sleep(100000)
'''


def _blocking_task(root: Path) -> Path:
    """A task whose graded test, once started, runs for a day (until it is stopped)."""
    contract, _, _ = make_task(
        root,
        {"pkg.py": "X = 1\n", "tests/__init__.py": ""},
        {"pkg.py": "X = 2\n", "tests/test_block.py": BLOCKING_TEST},
        install=["uv pip install pytest"],
        fail_to_pass=["tests/test_block.py::test_blocks"],
        editable=["pkg.py"],
    )
    return contract


def _wait_until_the_test_runs(proc: subprocess.Popen[str], out: Path) -> None:
    """Wait for the event: the graded test's marker file appears (or the run ends early)."""
    deadline = time.monotonic() + HANG_S
    while not any((out / "work").glob(f"*/*/{MARK}")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the graded test never started"
        time.sleep(0.05)


def _processes_naming(text: str) -> list[int]:
    """Live processes (not zombies) whose command line names ``text``."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_to_the_main_process_alone_stops_the_whole_run(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals, workers: int
) -> None:
    """In the command's own process (1 worker) and through worker processes (2), which the
    head stops in turn."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _blocking_task(tmp_path)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "repogate.cli", "run", str(contract), "--agent", "null"]
    proc = subprocess.Popen(
        [*cmd, "--out", str(out), "--workers", str(workers)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group: nothing sent here reaches the test runner
    )
    _wait_until_the_test_runs(proc, out)
    tree = _processes_naming(str(out))
    assert len(tree) > 1, tree  # repogate and the test run it started (pytest, bwrap ...)
    os.kill(proc.pid, sig)  # the main process alone, as `kill PID` or a scheduler sends it
    _, err = proc.communicate(timeout=HANG_S)  # a test that runs for a day: only a stop ends it
    assert proc.returncode == ExitCode.INTERRUPTED, err
    lines = [line for line in err.splitlines() if not line.startswith(("warning:", "running "))]
    assert lines == [INTERRUPTED_MESSAGE], err
    assert _processes_naming(str(out)) == []  # the whole tree it started is gone
    with Store.open(out) as store:
        assert [r.status for r in store.attempts()] == ["running"]  # unfinished, redone on resume
