"""The differential check is advisory: reported beside the verdict, hard only when asked."""

from __future__ import annotations

import pytest

from repogate.decision import Evidence, decide, hard_checks
from repogate.receipt import Check, Receipt, Status
from repogate.state import CandidateState, patch_digest
from repogate.vocabulary import CheckName

NAME: CheckName = "behaviour_matches_reference"


def _evidence(status: Status, *, hard: bool, detail: str = "") -> Evidence:
    state = CandidateState(
        base_commit="a" * 40, candidate_commit="b" * 40, patch_digest=patch_digest(b"x")
    )
    receipts = (
        Receipt(
            gate="V",
            status="passed",
            checks=tuple(Check(name=n, status="passed") for n in hard_checks("hermetic")),
            state_id=state.state_id,
            started_at="2026-01-01T00:00:00Z",
        ),
        Receipt(
            gate="V-differential",
            status=status,
            checks=(Check(name=NAME, status=status, detail=detail),),
            state_id=state.state_id,
            started_at="2026-01-01T00:00:00Z",
        ),
    )
    return Evidence(
        task_id="t",
        profile="hermetic",
        state=state,
        submitted_patch_digest=state.patch_digest,
        receipts=receipts,
        also_hard=(NAME,) if hard else (),
    )


def test_a_difference_is_reported_but_never_changes_an_advisory_verdict() -> None:
    decision = decide(_evidence("failed", hard=False, detail="differs on f(x=-1)"))
    assert decision.accepted
    assert [(c.name, c.status, c.detail) for c in decision.advisory] == [
        (NAME, "failed", "differs on f(x=-1)")
    ]
    assert NAME not in {c.name for c in decision.checks}


def test_a_contract_that_makes_it_hard_rejects_on_a_difference() -> None:
    """oracles.differential = "hard": the check is one of the profile's hard checks."""
    decision = decide(_evidence("failed", hard=True, detail="differs on f(x=-1)"))
    assert not decision.accepted and decision.failed == (NAME,)
    assert decision.advisory == ()
    assert hard_checks("lifecycle", (NAME,))[-1] == NAME


@pytest.mark.parametrize(
    ("status", "hard", "shown"), [("skipped", False, "skipped"), ("passed", False, "passed")]
)
def test_not_applicable_stays_skipped_when_advisory(status: Status, hard: bool, shown: str) -> None:
    decision = decide(_evidence(status, hard=hard, detail="not applicable: no function"))
    assert decision.accepted and [c.status for c in decision.advisory] == [shown]


def test_an_errored_hard_check_is_the_evaluators_never_a_wrong_patch() -> None:
    decision = decide(_evidence("error", hard=True, detail="timed out: f"))
    assert decision.outcome == "error" and decision.errored == (NAME,) and decision.failed == ()
