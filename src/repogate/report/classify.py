"""What one attempt counts as in a report: its outcome, error kind, and SWE-bench resolution.

- An attempt is *scored* when it was accepted or rejected. An evaluator or environment error
  (outcome ``error``) or a harness crash is kept apart, by kind, and never counted as the agent's
  failure. An attempt begun and not finished is *unfinished*: its outcome is its state,
  ``not started``, ``running`` or ``interrupted`` (:func:`repogate.vocabulary.attempt_state`, the
  words ``show`` uses too).
- *Resolved* is SWE-bench's notion: FAIL_TO_PASS and PASS_TO_PASS passed (the
  ``focused_tests_passed`` and ``regression_tests_passed`` checks), whatever the other gates say
  (SWE-bench ``harness/grading.py``, ``get_resolution_status``: FULL only when both pass).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from repogate.decision import SWEBENCH_CHECKS, Decision
from repogate.report.load import Attempt, cohort_of
from repogate.vocabulary import (
    CHECK_TABLE,
    REPORTS,
    UNFINISHED_STATES,
    CheckName,
    ErrorKind,
    attempt_state,
    first_kind,
)

INTEGRITY: tuple[CheckName, ...] = tuple(r.name for r in CHECK_TABLE if r.integrity)
"""Checks whose failure is an integrity violation (:attr:`repogate.vocabulary.CheckRow.integrity`)."""
TESTS: tuple[CheckName, ...] = SWEBENCH_CHECKS
SENTINEL_CHECK: CheckName = REPORTS["S"][0]
"""Gate S's one check, ``post_merge_sentinel_passed``."""
_INVALID = ("task invalid", "the hidden tests do not apply", "base-state test run unusable")


def outcome(attempt: Attempt) -> str:
    """``accepted``, ``rejected``, ``error`` (evaluator/environment), else the attempt's state.

    An undecided attempt's state is ``crashed``, ``not started``, ``running`` or ``interrupted``
    (:func:`repogate.vocabulary.attempt_state`).
    """
    if attempt.decision is not None:
        return attempt.decision.outcome
    return attempt_state(attempt.status, live=attempt.live)


def error_kind(attempt: Attempt) -> ErrorKind | None:
    """The kind of evaluator or environment fault that ended ``attempt``; None when it was scored.

    Read from the kinds of the decision's errored checks (:attr:`repogate.receipt.Check.kind`,
    set where each error happened); when several meet, the first of
    :data:`repogate.vocabulary.ERROR_PRECEDENCE` counts. An attempt with no decision is a
    harness crash. A decision stored before checks had kinds is read by :func:`_worded_kind`.
    """
    kind = outcome(attempt)
    if kind == "crashed":
        return "harness crash"
    if kind != "error" or attempt.decision is None:
        return None
    errored = [c for c in attempt.decision.checks if c.status == "error"]
    if errored and all(c.kind is None for c in errored):
        return _worded_kind({c.name: c.detail for c in errored})
    return first_kind(c.kind for c in errored) or "other evaluator error"


def _worded_kind(details: dict[str, str]) -> ErrorKind:
    """The error kind of a decision stored before checks had kinds, read from its wording.

    The one place the words of a check's detail decide anything, and only for such decisions
    (every errored check of a newer decision has a kind). In this order: the environment
    check's detail tells an environment that could not be built; ``timed out`` in any errored
    check a timeout (at the base or on the candidate); then a task invalid at its base; a gate
    that crashed a harness crash. The wording is the evaluator's as it was then.
    """
    env = details.get("environment_reproduced", "")
    if env.startswith("environment could not be built"):
        return "environment build"
    if any("timed out" in d for d in details.values()):
        return "timeout"  # also a base-state run that timed out: the budget, not the task
    if env.startswith(_INVALID):
        return "invalid task"
    if any(" crashed: " in d for d in details.values()):
        return "harness crash"
    return "other evaluator error"


def resolved(decision: Decision | None) -> bool | None:
    """SWE-bench's resolved, as the decision records it, or None when it was not decided.

    :attr:`Decision.resolved` is FAIL_TO_PASS and the declared PASS_TO_PASS passed on the
    candidate; None stands for test checks that were never decided (an evaluator error before or
    during the graded run).
    """
    if decision is None:
        return None
    statuses = {c.name: c.status for c in decision.checks if c.name in TESTS}
    if (
        not decision.resolved
        and any(statuses.get(name) != "failed" for name in TESTS)
        and any(statuses.get(name) in (None, "error") for name in TESTS)
    ):
        return None
    return decision.resolved


@dataclass(frozen=True, slots=True)
class Fact:
    """What one attempt counts as, computed once and read by every section of the report.

    Attributes:
        attempt: the attempt itself.
        cohort: its value of the cohort key grouped by (``all`` when not grouping).
        outcome: see :func:`outcome`.
        scored: accepted or rejected (an evaluator error, a crash or an unfinished attempt is not).
        resolved: see :func:`resolved`.
        error_kind: see :func:`error_kind`.
        checks: hard check name to status (empty without a decision).
        stages: stage name to status (empty without a decision).
        integrity_failed: an integrity check failed.
    """

    attempt: Attempt
    cohort: str
    outcome: str
    scored: bool
    resolved: bool | None
    error_kind: ErrorKind | None
    checks: dict[str, str]
    stages: dict[str, str]
    integrity_failed: bool

    @property
    def accepted(self) -> bool:
        """The attempt was accepted."""
        return self.outcome == "accepted"

    @property
    def finished(self) -> bool:
        """Decided or crashed: not ``not started``, ``running`` or ``interrupted``."""
        return self.outcome not in UNFINISHED_STATES

    @property
    def sentinel(self) -> str:
        """The sentinel stage's status, ``skipped`` when it did not run."""
        return self.stages.get("sentinel passed", "skipped")

    @property
    def sentinel_not_run(self) -> bool:
        """Gate S was left out, the attempt being already rejected.

        ``repogate run --skip-sentinel-when-rejected`` reports its check ``skipped``; a profile
        without a sentinel reports no such check.
        """
        return self.checks.get(SENTINEL_CHECK) == "skipped"


def fact(attempt: Attempt, by: str | None) -> Fact:
    """Classify ``attempt`` once; ``by`` is the cohort key grouped by (None: ``all``)."""
    decision = attempt.decision
    kind = outcome(attempt)
    checks: dict[str, str] = {c.name: c.status for c in decision.checks} if decision else {}
    return Fact(
        attempt=attempt,
        cohort=cohort_of(attempt, by),
        outcome=kind,
        scored=kind in ("accepted", "rejected"),
        resolved=resolved(decision),
        error_kind=error_kind(attempt),
        checks=checks,
        stages=dict(decision.stages) if decision else {},
        integrity_failed=any(checks.get(name) == "failed" for name in INTEGRITY),
    )


def counts(
    facts: Iterable[Fact], hit: Callable[[Fact], bool], among: Callable[[Fact], bool]
) -> dict[str, tuple[int, int]]:
    """Per task id: (attempts that ``hit``, attempts) over the attempts ``among`` admits.

    A task with no attempt admitted is absent, never a task with 0 attempts.
    """
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for f in facts:
        if among(f):
            found[f.attempt.contract][0] += hit(f)
            found[f.attempt.contract][1] += 1
    return {task: (c[0], c[1]) for task, c in found.items()}


def per_task(facts: Iterable[Fact]) -> dict[str, tuple[int, int]]:
    """Per task id: (accepted, scored) over the scored attempts among ``facts``."""
    return counts(facts, lambda f: f.accepted, lambda f: f.scored)


def finished_tasks(facts: Iterable[Fact]) -> set[str]:
    """Task ids with a finished attempt (scored, an error or a crash) among ``facts``."""
    return {f.attempt.contract for f in facts if f.finished}
