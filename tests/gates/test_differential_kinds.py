"""The differential check's errors carry their kind from the outcomes, not from their words."""

from __future__ import annotations

from repogate.gates.differential import _fold, not_run
from repogate.oracles.differential import FunctionOutcome

SLOW = FunctionOutcome(function="m.f", outcome="timed out", reason="no answer in 2 s")
ODD = FunctionOutcome(function="m.g", outcome="not applicable", reason="timed out? no: unhashable")


def test_a_call_out_of_time_is_a_timeout() -> None:
    check = _fold([SLOW, ODD], hard=False)
    assert (check.status, check.kind) == ("error", "timeout")


def test_nothing_comparable_is_an_other_error_when_hard_and_skipped_when_advisory() -> None:
    hard = _fold([ODD], hard=True)
    assert (hard.status, hard.kind) == ("error", "other evaluator error")  # its words say nothing
    advisory = _fold([ODD], hard=False)
    assert (advisory.status, advisory.kind) == ("skipped", None)
    (unrun,) = not_run("no reference", hard=True).checks
    assert (unrun.status, unrun.kind, unrun.detail) == (
        "error",
        "other evaluator error",
        "not applicable: no reference",
    )
    assert not_run("no reference", hard=False).checks[0].status == "skipped"
