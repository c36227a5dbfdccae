"""The vocabulary is defined once and documented: every name has its entry, and every list of
checks the code uses is read from the one check table."""

from __future__ import annotations

from typing import get_args

from repogate.decision import (
    ADVISORY_CHECKS,
    HERMETIC_CHECKS,
    IDENTITY_CHECKS,
    LIFECYCLE_CHECKS,
    STAGES,
    SWEBENCH_CHECKS,
    hard_checks,
)
from repogate.pipeline import PHASES
from repogate.report.classify import INTEGRITY, TESTS
from repogate.report.model import ERROR_KINDS as REPORT_ERROR_KINDS
from repogate.vocabulary import (
    CHECK_TABLE,
    CHECKS,
    ERROR_KINDS,
    ERROR_PRECEDENCE,
    GATES,
    PROFILE_CHECKS,
    PROFILE_HISTORY,
    PROFILE_VERSIONS,
    PROFILES,
    REPORTS,
    STAGE_NAMES,
    CheckName,
    ErrorKind,
    GateId,
    PhaseName,
    Profile,
    StageName,
    first_kind,
    profile_digest,
)

PINNED: dict[Profile, dict[int, str]] = {
    "hermetic": {1: "d8a4c39cb3c5f70fd0b5e432d3a47412685adcf46e54e11edf758ab128e923f6"},
    "lifecycle": {1: "09b2d5a73d3eac6f17d4f8f1b409b546500f95c5859b04d05cbe05d770ad772b"},
}
"""Versions of each profile already recorded in decisions: their digests never change."""


def test_every_check_name_and_gate_id_is_documented() -> None:
    assert list(CHECKS) == list(get_args(CheckName))
    assert list(GATES) == list(get_args(GateId))
    assert all(doc.observes for doc in (*CHECKS.values(), *GATES.values()))
    assert list(REPORTS) == list(get_args(GateId))


def test_the_check_name_literal_is_the_tables_names() -> None:
    """A ``Literal`` cannot be built from the table: this holds the two equal, in order."""
    assert [row.name for row in CHECK_TABLE] == list(get_args(CheckName))
    assert len({row.name for row in CHECK_TABLE}) == len(CHECK_TABLE)


def test_the_lifecycle_profile_and_the_advisory_checks_hold_every_check_once() -> None:
    assert sorted((*LIFECYCLE_CHECKS, *ADVISORY_CHECKS)) == sorted(get_args(CheckName))
    assert {n for names in STAGES.values() for n in names} <= set(get_args(CheckName))


def test_the_lists_read_from_the_table_are_the_lists_as_they_were_written() -> None:
    """No behaviour change: every derived list, in the order failures are reported."""
    assert IDENTITY_CHECKS == (
        "base_commit_recorded",
        "patch_is_a_new_state",
        "evidence_bound_to_patch",
        "patch_digest_verified",
    )
    assert (
        *IDENTITY_CHECKS,
        "edits_permitted",
        "oracle_untouched",
        "harness_untampered",
        "requirements_recovered",
        "environment_reproduced",
        "focused_tests_passed",
        "regression_tests_passed",
        "dependency_policy_passed",
    ) == HERMETIC_CHECKS
    assert (
        *HERMETIC_CHECKS,
        "generated_artifacts_fresh",
        "code_owner_approved",
        "review_threads_resolved",
        "post_merge_sentinel_passed",
        "release_receipt_present",
    ) == LIFECYCLE_CHECKS
    assert ADVISORY_CHECKS == ("behaviour_matches_reference",)
    assert STAGES == {
        "environment reconstructed": ("environment_reproduced",),
        "requirement recovered": ("requirements_recovered",),
        "focused tests passed": ("focused_tests_passed",),
        "regression tests passed": ("regression_tests_passed",),
        "review accepted": ("code_owner_approved", "review_threads_resolved"),
        "sentinel passed": ("post_merge_sentinel_passed",),
    }
    assert SWEBENCH_CHECKS == TESTS == ("focused_tests_passed", "regression_tests_passed")
    assert set(INTEGRITY) == {
        "edits_permitted",
        "oracle_untouched",
        "harness_untampered",
        "evidence_bound_to_patch",
        "patch_digest_verified",
    }
    assert hard_checks("hermetic", ("behaviour_matches_reference",)) == (
        *HERMETIC_CHECKS,
        "behaviour_matches_reference",
    )


def test_every_stage_phase_and_error_kind_is_named_once() -> None:
    assert get_args(StageName) == STAGE_NAMES
    assert all(STAGES[stage] for stage in STAGE_NAMES)  # no stage without a check
    assert tuple(name for name, _phase in PHASES) == get_args(PhaseName)
    assert PROFILES == get_args(Profile) == tuple(PROFILE_VERSIONS) == tuple(PROFILE_CHECKS)
    assert tuple(ERROR_KINDS) == get_args(ErrorKind) == REPORT_ERROR_KINDS
    assert sorted(ERROR_PRECEDENCE) == sorted(get_args(ErrorKind))
    assert all(ERROR_KINDS.values())


def test_the_error_kind_that_counts_is_the_first_of_the_precedence() -> None:
    assert first_kind(["harness crash", None, "timeout", "invalid task"]) == "timeout"
    assert first_kind(["other evaluator error", "environment build"]) == "environment build"
    assert first_kind([None, None]) is None


def test_a_profiles_check_list_changes_only_with_its_version() -> None:
    """The bump rule: a profile's check list is its newest version's; a version once recorded
    never changes. Adding, removing or moving a check fails here until the next version, with
    the new list's digest, is added to ``PROFILE_HISTORY``."""
    for profile in PROFILES:
        history = PROFILE_HISTORY[profile]
        assert sorted(history) == list(range(1, len(history) + 1)), profile
        assert PROFILE_VERSIONS[profile] == max(history), profile
        assert profile_digest(PROFILE_CHECKS[profile]) == history[PROFILE_VERSIONS[profile]]
        assert len(set(history.values())) == len(history), profile  # each version a new list
        for version, digest in PINNED[profile].items():
            assert history[version] == digest, (profile, version)


def test_the_bump_rule_sees_a_check_added_removed_or_moved() -> None:
    hermetic = PROFILE_CHECKS["hermetic"]
    pinned = PINNED["hermetic"][1]
    assert profile_digest(hermetic) == pinned
    assert profile_digest((*hermetic, "generated_artifacts_fresh")) != pinned
    assert profile_digest(hermetic[:-1]) != pinned
    assert profile_digest((hermetic[1], hermetic[0], *hermetic[2:])) != pinned
