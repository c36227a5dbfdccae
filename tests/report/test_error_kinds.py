"""The report counts an evaluator error by the kind set where it happened: rewording a message
never moves an attempt from one kind to another. Decisions stored before kinds are read by their
wording, as they always were."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from repogate.decision import HERMETIC_CHECKS, Decision, SoftMetrics
from repogate.receipt import Check
from repogate.report.classify import error_kind
from repogate.report.load import Attempt
from repogate.vocabulary import CheckName, ErrorKind


def _attempt(*errored: Check) -> Attempt:
    names = {c.name for c in errored}
    checks = (
        *(Check(name=n, status="passed") for n in HERMETIC_CHECKS if n not in names),
        *errored,
    )
    decision = Decision(
        task_id="t",
        profile="hermetic",
        state_id="s",
        accepted=False,
        outcome="error",
        failed=(),
        errored=tuple(c.name for c in errored),
        checks=checks,
        stages={},
        soft=SoftMetrics(),
    )
    return Attempt(
        run=Path("run"),
        attempt_id="a",
        contract="t",
        agent="gold",
        spec="gold",
        epoch=0,
        status="done",
        decision=decision,
        crash=None,
    )


def _error(name: CheckName, detail: str, kind: ErrorKind | None) -> Check:
    return Check(name=name, status="error", detail=detail, kind=kind)


ENV: CheckName = "environment_reproduced"
TESTS: CheckName = "regression_tests_passed"


@pytest.mark.parametrize(
    ("checks", "kind"),
    [
        ((_error(ENV, "environment could not be built: uv exited 2", "environment build"),), "environment build"),
        ((_error(ENV, "the recipe failed to install: uv exited 2", "environment build"),), "environment build"),
        ((_error(ENV, "task invalid: x is missing", "invalid task"),), "invalid task"),
        ((_error(ENV, "the base misbehaves: x is missing", "invalid task"),), "invalid task"),
        ((_error(TESTS, "command:lint timed out", "timeout"),), "timeout"),
        ((_error(TESTS, "command:lint ran out of its budget", "timeout"),), "timeout"),
        ((_error(TESTS, "not observed; V crashed: KeyError: x", "harness crash"),), "harness crash"),
        ((_error(TESTS, "not observed; V raised KeyError", "harness crash"),), "harness crash"),
        # words that once decided a kind decide nothing when a kind was recorded
        ((_error(TESTS, "lock manager uv timed out? no: not installed", "other evaluator error"),), "other evaluator error"),
        ((_error(ENV, "environment could not be built? the base was invalid", "invalid task"),), "invalid task"),
        # several kinds: the first of the precedence counts, whatever the order of the checks
        ((_error(TESTS, "a", "harness crash"), _error(ENV, "b", "invalid task")), "invalid task"),
        ((_error(ENV, "a", "invalid task"), _error(TESTS, "b", "timeout")), "timeout"),
    ],
)  # fmt: skip
def test_an_error_is_counted_by_its_kind_whatever_its_words(
    checks: tuple[Check, ...], kind: ErrorKind
) -> None:
    assert error_kind(_attempt(*checks)) == kind


@pytest.mark.parametrize(
    ("checks", "kind"),
    [
        ((_error(ENV, "environment could not be built: uv exited 2", None),), "environment build"),
        ((_error(ENV, "base-state test run unusable: the test command timed out after 2 s", None),), "timeout"),
        ((_error(ENV, "task invalid: x is missing", None),), "invalid task"),
        ((_error(ENV, "the hidden tests do not apply at the base: x", None),), "invalid task"),
        ((_error(TESTS, "not observed; V crashed: KeyError: x", None),), "harness crash"),
        ((_error(TESTS, "lock manager uv is not installed", None),), "other evaluator error"),
    ],
)  # fmt: skip
def test_a_decision_stored_before_kinds_is_read_by_its_wording(
    checks: tuple[Check, ...], kind: ErrorKind
) -> None:
    assert error_kind(_attempt(*checks)) == kind


def test_a_scored_attempt_has_no_error_kind() -> None:
    attempt = _attempt()
    assert attempt.decision is not None
    accepted = attempt.decision.model_copy(update={"outcome": "accepted", "accepted": True})
    assert error_kind(replace(attempt, decision=accepted)) is None
