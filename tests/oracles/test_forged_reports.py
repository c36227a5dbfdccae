"""Reports logged from inside a running test, and sessions cut short, are never trusted.

Red team: the candidate's library code, called by the FAIL_TO_PASS test, finds the running
pytest item on the stack, logs a passing call report for it through pytest's own hook relay
(``item.ihook.pytest_runtest_logreport``; no pytest function or hook implementation replaced, so
the guard saw no change), then stops the session before pytest makes the real, failing report:
with ``pytest.exit(returncode=0)`` (after running the remaining tests itself), with
``KeyboardInterrupt`` (pytest exits 2, which was read as a finished run), or with a pytest
internal error after pointing the guard's "test under way" at a decoy id. Each was graded as
passing; ``repogate gate`` accepted such a pull request end to end.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from repogate.gates.verification import check_tests
from repogate.oracles.pytest_runner import run_tests
from repogate.sandbox import SandboxPolicy

PYTHON = Path(sys.executable)
COMMAND = "python -m pytest -p no:cacheprovider"
POLICY = SandboxPolicy(timeout_s=120)
TESTS = (
    "from pkg import f, g\n\n"
    "def test_a():\n    assert g() == 1\n\n"
    "def test_f():\n    assert f() == 2\n\n"
    "def test_z():\n    assert g() == 1\n"
)
F2P = ["tests/test_f.py::test_f"]
P2P = ["tests/test_f.py::test_a", "tests/test_f.py::test_z"]

FORGE = """
import sys

def _item():
    frame = sys._getframe()
    while frame is not None:
        it = frame.f_locals.get("item")
        if it is not None and hasattr(it, "nodeid") and hasattr(it, "ihook"):
            return it
        frame = frame.f_back
    return None

def _forge_pass():
    item = _item()
    from _pytest.reports import TestReport
    rep = TestReport(item.nodeid, item.location, {}, "passed", None, "call", [], 0.0)
    item.ihook.pytest_runtest_logreport(report=rep)
    return item

def g():
    return 1
"""
EXIT0 = (
    FORGE
    + """
def f():
    item = _forge_pass()
    session = item.session
    rest = session.items[session.items.index(item) + 1 :]
    for i, nxt in enumerate(rest):
        session._setupstate.teardown_exact(nxt)
        following = rest[i + 1] if i + 1 < len(rest) else None
        nxt.ihook.pytest_runtest_protocol(item=nxt, nextitem=following)
    import pytest
    pytest.exit("done", returncode=0)
"""
)
KEYBOARD = (
    FORGE
    + """
def f():
    _forge_pass()
    raise KeyboardInterrupt
"""
)
DECOY = (
    FORGE
    + """
class _Bomb:
    def __repr__(self):
        raise SystemExit("repr")

def _boom(bomb):
    raise ValueError("wrong")

def f():
    item = _forge_pass()
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid + "_decoy", location=item.location)
    _boom(_Bomb())
"""
)
EXIT_ONLY = (
    "def g():\n    return 1\n\ndef f():\n    import pytest\n    pytest.exit('bye', returncode=0)\n"
)


def _checkout(root: Path, library: str) -> Path:
    files = {
        "pkg/__init__.py": "from pkg.mod import f, g\n",
        "pkg/mod.py": library,
        "tests/test_f.py": TESTS,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("library", "said"),
    [
        (EXIT0, "logged from inside a running test"),
        (KEYBOARD, "logged from inside a running test"),
        (DECOY, "logged from inside a running test"),
        (EXIT_ONLY, "pytest's session was interrupted"),
    ],
    ids=[
        "forge-run-the-rest-exit-0",
        "forge-keyboard-interrupt",
        "forge-internal-error-decoy",
        "exit-0-alone",
    ],
)
def test_a_forged_or_cut_short_session_grades_nothing_as_passed(
    tmp_path: Path, library: str, said: str
) -> None:
    work = _checkout(tmp_path / "work", library)
    run = run_tests(PYTHON, work, COMMAND, [*F2P, *P2P], tmp_path / "r", POLICY)
    assert run.status == "error"
    assert said in run.reason, run.reason
    graded = check_tests([run], set(), F2P, P2P)
    seen = {c.name: c.status for c in graded.checks}
    assert seen["focused_tests_passed"] == "failed"
    assert seen["regression_tests_passed"] == "failed"
