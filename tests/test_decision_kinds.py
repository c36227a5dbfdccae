"""A decision is an immutable record: its profile's version, and every errored check's kind, set
where the error happened (never read from the wording of a message)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from repogate.decision import Decision, Evidence, SoftMetrics, decide, hard_checks
from repogate.receipt import Check, Crash, Receipt
from repogate.state import CandidateState, patch_digest
from repogate.vocabulary import PROFILE_VERSIONS, CheckName, GateId

STARTED = datetime(2026, 1, 1, tzinfo=UTC)


def _state() -> CandidateState:
    return CandidateState(
        base_commit="a" * 40, candidate_commit="b" * 40, patch_digest=patch_digest(b"x")
    )


def _receipt(
    gate: GateId, state: CandidateState, *checks: Check, crash: Crash | None = None
) -> Receipt:
    return Receipt(
        gate=gate,
        status="error" if crash else "passed",
        checks=checks,
        state_id=state.state_id,
        started_at=STARTED,
        crash=crash,
    )


def _decide(*receipts: Receipt, profile: str = "hermetic") -> Decision:
    state = _state()
    names = [c.name for r in receipts for c in r.checks] + [r.gate for r in receipts if r.crash]
    others = tuple(
        Check(name=n, status="passed")
        for n in hard_checks("hermetic")
        if n not in names and n not in ("regression_tests_passed", "focused_tests_passed")
    )
    everything = (
        _receipt("I", state, *others),
        *(r.model_copy(update={"state_id": state.state_id}) for r in receipts),
    )
    return decide(
        Evidence.model_validate(
            {
                "task_id": "t",
                "profile": profile,
                "state": state,
                "submitted_patch_digest": state.patch_digest,
                "receipts": everything,
            }
        )
    )


def _check(decision: Decision, name: CheckName) -> Check:
    return next(c for c in decision.checks if c.name == name)


def _passing_tests(state: CandidateState) -> Receipt:
    return _receipt(
        "V",
        state,
        Check(name="focused_tests_passed", status="passed"),
        Check(name="regression_tests_passed", status="passed"),
    )


def test_decisions_and_evidence_cannot_be_changed_after_they_are_made() -> None:
    state = _state()
    decision = _decide(_passing_tests(state))
    with pytest.raises(ValidationError):
        decision.accepted = False  # type: ignore[misc]
    evidence = Evidence(task_id="t", profile="hermetic", state=state, submitted_patch_digest="")
    with pytest.raises(ValidationError):
        evidence.task_id = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):  # a misspelt key is refused, never dropped
        Decision.model_validate({**decision.model_dump(), "acepted": True})


def test_a_decision_records_its_profiles_version() -> None:
    state = _state()
    assert _decide(_passing_tests(state)).profile_version == PROFILE_VERSIONS["hermetic"] == 1
    lifecycle = _decide(_passing_tests(state), profile="lifecycle")
    assert lifecycle.profile_version == PROFILE_VERSIONS["lifecycle"]


def test_a_decision_stored_before_versions_and_kinds_loads_with_none() -> None:
    decision = _decide(_receipt("V", _state(), Check.error("focused_tests_passed", "x", "timeout")))
    stored = decision.model_dump(mode="json")
    del stored["profile_version"]
    for check in stored["checks"]:
        del check["kind"]
    old = Decision.model_validate(stored)
    assert old.profile_version is None
    assert {c.kind for c in old.checks} == {None}
    assert old.errored == decision.errored == ("focused_tests_passed",)


def test_a_kind_belongs_to_an_error_only() -> None:
    with pytest.raises(ValidationError, match="an error kind on a failed check"):
        Check(name="edits_permitted", status="failed", kind="timeout")
    assert Check.error("edits_permitted", "why", "timeout").status == "error"


def test_every_errored_check_of_a_decision_has_a_kind() -> None:
    """A gate's error given no kind is an other evaluator error; an attempt with no candidate
    errors its identity checks as one."""
    state = _state()
    bare = _receipt("V", state, Check(name="focused_tests_passed", status="error", detail="?"))
    decision = _decide(bare)
    assert _check(decision, "focused_tests_passed").kind == "other evaluator error"
    no_candidate = decide(
        Evidence(
            task_id="t",
            profile="hermetic",
            state=CandidateState(base_commit="a" * 40, candidate_commit="", patch_digest=""),
            submitted_patch_digest="",
            stopped_at="environment",
        )
    )
    errored = [c for c in no_candidate.checks if c.status == "error"]
    assert errored and all(c.kind is not None for c in errored)
    assert _check(no_candidate, "patch_is_a_new_state").kind == "other evaluator error"


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (RuntimeError("uv died"), "harness crash"),
        (RuntimeError("the index timed out"), "harness crash"),  # words are not a kind
        (subprocess.TimeoutExpired(["git", "fetch"], 5), "timeout"),
        (TimeoutError("read"), "timeout"),
    ],
)
def test_a_crashed_gate_errors_its_checks_by_the_exceptions_type(
    exc: BaseException, kind: str
) -> None:
    state = _state()
    crashed = _receipt("V", state, crash=Crash.of(exc))
    decision = _decide(crashed)
    assert decision.outcome == "error"
    assert {c.kind for c in decision.checks if c.status == "error"} == {kind}


def test_several_errors_on_one_check_fold_to_the_kind_that_counts() -> None:
    state = _state()
    crash = _receipt("V-regression", state, crash=Crash(type="KeyError", message="k"))
    slow = _receipt(
        "V-commands", state, Check.error("regression_tests_passed", "command:x", "timeout")
    )
    decision = _decide(_passing_tests(state), crash, slow)
    regression = _check(decision, "regression_tests_passed")
    assert (regression.status, regression.kind) == ("error", "timeout")
    assert _check(decision, "focused_tests_passed").status == "passed"


def test_soft_metrics_are_a_frozen_record_too() -> None:
    soft = SoftMetrics()
    with pytest.raises(ValidationError):
        soft.tokens = 3  # type: ignore[misc]


def test_resolved_reads_the_typed_tree_of_gate_vs_receipt() -> None:
    """SWE-bench's resolved reads gate V's run of the candidate (its ``tree``), not the merged
    tree's; a receipt written before the field is read by its ``details`` label alone."""
    state = _state()
    candidate = _passing_tests(state).model_copy(update={"tree": "candidate"})
    merged = _passing_tests(state).model_copy(update={"tree": "merged"})
    old = _passing_tests(state).model_copy(update={"details": {"tree": "candidate"}})
    untyped = _passing_tests(state).model_copy(update={"details": {"tree": 3}})
    assert _decide(candidate).resolved is True
    assert _decide(merged).resolved is False
    assert _decide(old).resolved is True
    assert (old.graded_tree, untyped.graded_tree, merged.graded_tree) == (
        "candidate",
        None,
        "merged",
    )
