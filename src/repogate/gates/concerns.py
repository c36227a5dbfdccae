"""Review concerns as executable tests: ``review_threads_resolved`` with a test behind a thread.

A review thread may name a test (``test``: a pytest id present in the candidate, e.g. one a
reviewer or a benchmark wrote to pin the concern down, as c-CRAB turns review comments into
tests). Such a concern counts as resolved only when the reviewers marked it resolved *and* its
test passes on the candidate's graded tree; a mark alone does not resolve it. A concern test that
could not be run (no report, an environment fault) makes the check ``error``, never a pass or the
agent's failure. Threads without a test are resolved when marked so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from repogate._counted import counted
from repogate.receipt import Check
from repogate.vocabulary import CheckName, ErrorKind

if TYPE_CHECKING:
    from repogate.gates.authority import Thread

__all__ = ["THREADS", "concern_tests", "threads_check"]

THREADS: CheckName = "review_threads_resolved"


def concern_tests(threads: Sequence[Thread]) -> list[str]:
    """Return the test ids the threads name, sorted, each once."""
    return sorted({t.test for t in threads if t.test})


def _why_open(thread: Thread, outcomes: Mapping[str, str]) -> str | None:
    if thread.test is None:
        return None if thread.resolved else thread.concern
    outcome = outcomes.get(thread.test, "not run")
    if thread.resolved and outcome == "passed":
        return None
    said = [] if thread.resolved else ["not marked resolved"]
    if outcome != "passed":
        said.append(f"its test {thread.test} {outcome} on the candidate")
    return f"{thread.concern} ({'; '.join(said)})"


def threads_check(
    threads: Sequence[Thread],
    outcomes: Mapping[str, str],
    run_error: str | None = None,
    run_error_kind: ErrorKind = "other evaluator error",
) -> Check:
    """Decide ``review_threads_resolved``.

    Args:
        threads: the review threads.
        outcomes: each concern test's outcome on the candidate (``passed``, ``failed``,
            ``missing``...), from :func:`repogate.oracles.grading.observe_ids`.
        run_error: why the concern tests could not be run, when they could not.
        run_error_kind: the kind of that error (``timeout`` when the run reached its budget).

    Returns:
        ``failed`` naming every open concern; ``error`` when a concern test could not be run and
        no concern is open for another reason; else ``passed``.
    """
    tested = [t for t in threads if t.test]
    if run_error is not None and tested:
        untested = [t for t in threads if not t.test and not t.resolved]
        if not untested:
            detail = f"concern tests could not run: {run_error}"
            return Check.error(THREADS, detail, run_error_kind)
    open_threads = [why for t in threads if (why := _why_open(t, outcomes)) is not None]
    if open_threads:
        return Check(name=THREADS, status="failed", detail="unresolved: " + "; ".join(open_threads))
    if not threads:
        return Check(name=THREADS, status="passed", detail="no review threads")
    tests = f", {len(tested)} by a passing test" if tested else ""
    return Check(
        name=THREADS, status="passed", detail=f"{counted(len(threads), 'thread')} resolved{tests}"
    )
