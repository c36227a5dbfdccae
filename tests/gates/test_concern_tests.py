"""Review concerns as executable tests: a thread with a test is resolved only when it passes.

Threat closed: a reviewer's concern marked resolved while the code still has the problem; the
concern's test, run on the candidate, decides. A test that could not run is an evaluator error,
never a pass.
"""

from __future__ import annotations

import pytest

from repogate.gates.authority import Thread
from repogate.gates.concerns import concern_tests, threads_check

PINNED = Thread(concern="retries ignore the timeout", resolved=True, test="tests/t.py::test_to")
PLAIN = Thread(concern="rename the flag", resolved=True)


@pytest.mark.parametrize(
    ("outcome", "status", "detail"),
    [
        ("passed", "passed", "2 threads resolved, 1 by a passing test"),
        (
            "failed",
            "failed",
            "unresolved: retries ignore the timeout (its test tests/t.py::test_to failed on the candidate)",
        ),
        (
            "missing",
            "failed",
            "unresolved: retries ignore the timeout (its test tests/t.py::test_to missing on the candidate)",
        ),
    ],
)
def test_a_concern_with_a_test_is_resolved_only_when_its_test_passes(
    outcome: str, status: str, detail: str
) -> None:
    check = threads_check([PINNED, PLAIN], {"tests/t.py::test_to": outcome})
    assert (check.status, check.detail) == (status, detail)


def test_a_passing_test_does_not_resolve_a_concern_nobody_marked_resolved() -> None:
    open_thread = PINNED.model_copy(update={"resolved": False})
    check = threads_check([open_thread], {"tests/t.py::test_to": "passed"})
    assert check.status == "failed"
    assert check.detail == "unresolved: retries ignore the timeout (not marked resolved)"


def test_concern_tests_that_could_not_run_are_an_error_unless_another_concern_is_open() -> None:
    check = threads_check([PINNED, PLAIN], {}, run_error="no report")
    assert (check.status, check.detail) == ("error", "concern tests could not run: no report")
    assert check.kind == "other evaluator error"
    slow = threads_check([PINNED, PLAIN], {}, run_error="no report", run_error_kind="timeout")
    assert (slow.status, slow.kind) == ("error", "timeout")
    unresolved = PLAIN.model_copy(update={"resolved": False})
    assert threads_check([PINNED, unresolved], {}, run_error="no report").status == "failed"
    assert concern_tests([PINNED, PLAIN, PINNED]) == ["tests/t.py::test_to"]
