"""Ctrl-C to the test runner ends the session, even while a test runs `repogate` in-process.

Issue 20, item 5: `main([...])` turns Ctrl-C into exit 130 as the command line must, so a Ctrl-C
to pytest while such a test ran came out as one failed test, and the session went on with the
next. The suite's own SIGINT handler (tests/conftest.py) stops the session after that test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HANG_S = 1800
"""Only turns a hang into a failure: every wait here is on an event."""


@pytest.mark.slow
def test_ctrl_c_to_the_runner_stops_the_session(root: Path, tmp_path: Path) -> None:
    base = tmp_path / "inner"
    inner = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--basetemp={base}",
        "tests/agents/test_example_agent.py",  # runs `repogate run` in the runner's process
        "tests/sandbox/test_descendants.py",  # would run next
    ]
    proc = subprocess.Popen(
        inner,
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # the SIGINT below reaches the inner runner alone, never this one
    )
    hang = time.monotonic() + HANG_S
    while not any(base.glob("*/run/attempts/*/agent")):  # the event: the in-process run is on
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < hang
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=HANG_S)
    assert "Interrupted: Ctrl-C reached the test runner" in out, out
    assert "passed" not in out.splitlines()[-1], out  # test_descendants.py never ran
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
