"""The date check where libfaketime cannot shift an interpreter's clock and keep it sleeping.

Debian's libfaketime 0.9.10 with ``FAKETIME_DONT_FAKE_MONOTONIC=1`` turns Python 3.11+'s
``time.sleep`` (``clock_nanosleep`` on ``CLOCK_MONOTONIC`` with ``TIMER_ABSTIME``) into
``OSError: [Errno 22]`` (wolfcw/libfaketime#426), and ``subprocess``'s timeouts with it: a graded
test that sleeps was rejected ``date_dependent`` though it does not read the date at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _task import make_task
from repogate.cli import main
from repogate.tasks import dates

pytestmark = pytest.mark.skipif(
    dates.libfaketime() is None, reason="needs libfaketime (apt-get install faketime)"
)

CODE = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = """import subprocess, sys, time

from calc import add


def test_waits_then_adds():
    time.sleep(0.01)
    assert add(2, 3) == 5


def test_a_child_within_its_timeout():
    subprocess.run([sys.executable, "-c", "pass"], timeout=30, check=True)
"""


@pytest.mark.slow
def test_a_graded_test_that_sleeps_is_not_read_as_date_dependent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.11: the FAIL_TO_PASS test sleeps, the PASS_TO_PASS one waits on a child with a
    timeout; neither reads the date, so the task is valid, both stay graded and none moved."""
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    contract, _base, _fix = make_task(
        tmp_path / "task",
        {"calc.py": CODE, "tests/test_calc.py": TEST.replace("test_waits", "old_waits")},
        {"calc.py": FIXED, "tests/test_calc.py": TEST},
        install=["uv pip install pytest"],
        fail_to_pass=["tests/test_calc.py::test_waits_then_adds"],
        pass_to_pass=["tests/test_calc.py::test_a_child_within_its_timeout"],
        environment='python = "3.11"',
    )
    code = main(["tasks", "check", str(contract), "--json"])
    (row,) = json.loads(capsys.readouterr().out)
    assert (code, row["valid"]) == (0, True), row
    validation = row["validation"]
    assert validation["pass_to_pass"] == ["tests/test_calc.py::test_a_child_within_its_timeout"]
    assert validation["date_check"] == (
        "reference run 3653 days ahead (libfaketime): 0 graded test(s) moved"
    )


SERVED = """import os, urllib.request

from calc import add


def test_served_sum():
    with urllib.request.urlopen(os.environ["SVC_URL"], timeout=10) as answer:
        assert answer.status == 200
    assert add(2, 3) == 5
"""
SERVICE = """
[[environment.services]]
name = "web"
start = "python -m http.server 8766 --bind 127.0.0.1"
ready = "python -c \\"import urllib.request as u; u.urlopen('http://127.0.0.1:8766/', timeout=2)\\""
ready_timeout_s = 30
env = { SVC_URL = "http://127.0.0.1:8766/" }
"""


@pytest.mark.slow
def test_a_declared_service_starts_under_the_shifted_clock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.11 and a service: its launcher polls and waits on its ready check with a timeout
    (both sleeps), so under the shifted clock it "did not start" and the task was rejected
    ``test_run_failed``; it starts, and the check runs."""
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    contract, _base, _fix = make_task(
        tmp_path / "task",
        {"calc.py": CODE, "tests/test_calc.py": "def test_nothing():\n    pass\n"},
        {"calc.py": FIXED, "tests/test_calc.py": SERVED},
        install=["uv pip install pytest"],
        fail_to_pass=["tests/test_calc.py::test_served_sum"],
        environment='python = "3.11"\n' + SERVICE,
    )
    code = main(["tasks", "check", str(contract), "--json"])
    (row,) = json.loads(capsys.readouterr().out)
    assert (code, row["valid"]) == (0, True), row
    assert row["validation"]["date_check"] == (
        "reference run 3653 days ahead (libfaketime): 0 graded test(s) moved"
    )
