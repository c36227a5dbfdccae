"""A verdict whose evidence is weaker than usual says so: the runner under test (issue 21)."""

from __future__ import annotations

from repogate.decision import Evidence, decide, hard_checks
from repogate.receipt import Check, Observation, observe
from repogate.state import CandidateState, patch_digest
from repogate.vocabulary import RUNNER_UNDER_TEST_ASSURANCE


def _evidence(assurance: str) -> Evidence:
    diff = b"diff --git a/x b/x\n"
    state = CandidateState(
        base_commit="a" * 40, candidate_commit="b" * 40, patch_digest=patch_digest(diff)
    )
    checks = tuple(Check(name=n, status="passed") for n in hard_checks("hermetic"))
    receipt = observe("E", state.state_id, lambda: Observation(checks=checks))
    return Evidence(
        task_id="t",
        profile="hermetic",
        state=state,
        submitted_patch_digest=state.patch_digest,
        receipts=(receipt,),
        assurance=assurance,
    )


def test_an_accepted_verdict_by_the_runner_under_test_says_its_weaker_assurance() -> None:
    """Isolation and assurance never weaken silently: the decision carries the statement."""
    decision = decide(_evidence(RUNNER_UNDER_TEST_ASSURANCE))
    assert decision.accepted
    assert decision.assurance.startswith("the runner under test produced the verdicts")
    assert "tamper evidence for the runner is lost" in decision.assurance


def test_an_ordinary_verdict_says_nothing_of_assurance() -> None:
    assert decide(_evidence("")).assurance == ""
