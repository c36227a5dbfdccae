"""The vocabulary is defined once and documented: every name has its entry."""

from __future__ import annotations

from typing import get_args

from repogate.decision import ADVISORY_CHECKS, LIFECYCLE_CHECKS, STAGES
from repogate.vocabulary import CHECKS, GATES, REPORTS, CheckName, GateId


def test_every_check_name_and_gate_id_is_documented() -> None:
    assert list(CHECKS) == list(get_args(CheckName))
    assert list(GATES) == list(get_args(GateId))
    assert all(doc.observes for doc in (*CHECKS.values(), *GATES.values()))
    assert list(REPORTS) == list(get_args(GateId))


def test_the_lifecycle_profile_and_the_advisory_checks_hold_every_check_once() -> None:
    assert sorted((*LIFECYCLE_CHECKS, *ADVISORY_CHECKS)) == sorted(get_args(CheckName))
    assert {n for names in STAGES.values() for n in names} <= set(get_args(CheckName))
