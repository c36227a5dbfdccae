"""pytest stopped by an internal error while one test ran: that test is an error, not a forgery.

Real input: SWE-bench Lite pytest-dev__pytest-7168. At its base, pytest's own ``saferepr``
raises while it writes the failure of ``testing/io/test_saferepr.py::test_broken_getattribute``,
and the session ends with ``INTERNALERROR`` (exit 3). The JUnit report then lists that test
without a failure (only its setup was reported), so the report counted 11 passed tests against
the 10 calls the harness's guard saw pass, and the base run was refused as "the test runner was
changed during the run". The guard now records the test under way when pytest's internal error
struck; that test is ``error`` (the tests after it did not run) and the run's other outcomes
stand. An internal error outside any test still voids the run.

The three shapes here are a project's own hook failing while pytest makes one test's report (at
its call, and at its teardown after the call passed) and a hook failing at the end of the
session, outside any test; the 7168 shape itself needs pytest 5.4 as the runner under test.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from repogate.gates.verification import check_tests
from repogate.oracles.junit import INTERNAL_ERROR_ID
from repogate.oracles.pytest_runner import run_tests
from repogate.sandbox import SandboxPolicy

PYTHON = Path(sys.executable)
COMMAND = "python -m pytest -p no:cacheprovider"
POLICY = SandboxPolicy(timeout_s=120)
TESTS = "def test_a():\n    pass\n\ndef test_b():\n    pass\n\ndef test_c():\n    pass\n"
IDS = [f"tests/test_abc.py::test_{n}" for n in "abc"]


def _hook(when: str) -> str:
    """A project conftest whose report hook fails for test_b at phase ``when``."""
    return textwrap.dedent(
        f"""
        def pytest_runtest_makereport(item, call):
            if item.name == "test_b" and call.when == {when!r}:
                raise RuntimeError("the project's report hook failed")
        """
    )


def _checkout(root: Path, conftest: str) -> Path:
    for rel, text in {"tests/test_abc.py": TESTS, "tests/conftest.py": conftest}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("when", ["call", "teardown"])
def test_the_test_under_way_at_an_internal_error_is_an_error(tmp_path: Path, when: str) -> None:
    work = _checkout(tmp_path / "work", _hook(when))
    run = run_tests(PYTHON, work, COMMAND, IDS, tmp_path / "r", POLICY)
    assert run.execution.returncode == 3
    assert run.tampering == ()
    assert (run.status, run.reason) == ("ok", "")
    assert run.outcomes == {IDS[0]: "passed", IDS[1]: "error"}
    assert run.internal_error == (
        "pytest stopped with an internal error during tests/test_abc.py::test_b (counted as "
        "error); the tests after it did not run"
    )
    # graded: test_b is a failure, and so is test_c, which never ran
    graded = check_tests([run], set(), [IDS[1]], [IDS[0], IDS[2]])
    assert [(c.name, c.status) for c in graded.checks] == [
        ("focused_tests_passed", "failed"),
        ("regression_tests_passed", "failed"),
        ("harness_untampered", "passed"),
    ]


def test_an_internal_error_outside_any_test_voids_the_run(tmp_path: Path) -> None:
    conftest = textwrap.dedent(
        """
        import pytest

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtestloop(session):
            yield
            raise RuntimeError("the project's session hook failed")
        """
    )
    work = _checkout(tmp_path / "work", conftest)
    run = run_tests(PYTHON, work, COMMAND, IDS, tmp_path / "r", POLICY)
    assert run.execution.returncode == 3
    assert run.status == "error"
    assert run.reason.startswith("pytest internal error (exit 3)")
    assert run.internal_error == ""
    # read, but not trusted (status error); junitxml's own entry for the internal error stays
    assert run.outcomes == {**dict.fromkeys(IDS, "passed"), INTERNAL_ERROR_ID: "error"}
