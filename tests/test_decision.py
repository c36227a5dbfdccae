from __future__ import annotations

import json
from pathlib import Path

import pytest

from repogate.cli import ExitCode, main
from repogate.decision import Decision, Evidence, decide, failed_before, hard_checks
from repogate.receipt import Check, Crash, Observation, Receipt, observe
from repogate.state import CandidateState, patch_digest
from repogate.vocabulary import CheckName, GateId

SEED_VERDICTS = {
    "payments-sdk-retry": (True, ()),
    "payments-sdk-retry-stale": (
        False,
        (
            "evidence_bound_to_patch",
            "patch_digest_verified",
            "generated_artifacts_fresh",
            "code_owner_approved",
            "review_threads_resolved",
            "post_merge_sentinel_passed",
            "release_receipt_present",
        ),
    ),
    "pure-parser-function": (True, ()),
}


@pytest.mark.parametrize("case", sorted(SEED_VERDICTS))
def test_seed_cases_give_seed_verdicts(
    root: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["decide", str(root / "examples" / "evidence" / f"{case}.json"), "--json"])
    decision = json.loads(capsys.readouterr().out)
    accepted, failed = SEED_VERDICTS[case]
    assert decision["accepted"] is accepted
    assert tuple(decision["failed"]) == failed
    assert decision["errored"] == []
    assert code == (ExitCode.OK if accepted else ExitCode.NOT_ACCEPTED)


def test_table_output_names_failed_checks(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["decide", str(root / "examples" / "evidence" / "payments-sdk-retry-stale.json")])
    out = capsys.readouterr().out
    assert "rejected" in out
    assert "evidence_bound_to_patch" in out


def _state(**kw: str) -> CandidateState:
    base = dict(base_commit="a" * 40, candidate_commit="b" * 40, patch_digest=patch_digest(b"x"))
    base.update(kw)
    return CandidateState(**base)


def _all_pass(state_id: str, names: tuple[str, ...]) -> Receipt:
    return Receipt(
        gate="V",
        status="passed",
        checks=tuple(Check(name=n, status="passed") for n in names),
        state_id=state_id,
        started_at="2026-01-01T00:00:00Z",
    )


def test_receipt_bound_to_other_state_fails_evidence_binding() -> None:
    """Evidence for an earlier candidate must not count for a later one."""
    state = _state()
    earlier = _state(candidate_commit="c" * 40)
    receipt = _all_pass(earlier.state_id, hard_checks("hermetic"))
    decision = decide(
        Evidence(
            task_id="t",
            profile="hermetic",
            state=state,
            submitted_patch_digest=state.patch_digest,
            receipts=(receipt,),
        )
    )
    assert not decision.accepted
    assert decision.failed == ("evidence_bound_to_patch",)


def test_soft_metrics_never_change_the_verdict() -> None:
    state = _state()
    names = tuple(n for n in hard_checks("hermetic") if n != "regression_tests_passed")
    cheap = Evidence.model_validate(
        {
            "task_id": "t",
            "profile": "hermetic",
            "state": state.model_dump(),
            "submitted_patch_digest": state.patch_digest,
            "receipts": [_all_pass(state.state_id, names).model_dump()],
            "soft": {"agent_cost_usd": 0.0, "review_minutes": 0.0},
        }
    )
    decision = decide(cheap)
    assert decision.failed == ("regression_tests_passed",)
    assert decision.checks[-2].detail == "no receipt reports this check"


def test_errored_check_is_kept_apart_from_failures() -> None:
    """An evaluator or environment fault is never scored as a wrong patch."""
    state = _state()
    ok = _all_pass(
        state.state_id, tuple(n for n in hard_checks("hermetic") if n != "environment_reproduced")
    )
    crashed = observe("E", state.state_id, lambda: (_ for _ in ()).throw(RuntimeError("uv died")))
    env = Receipt(
        gate="E",
        status="error",
        checks=(Check(name="environment_reproduced", status="error", detail="yanked package"),),
        state_id=state.state_id,
        started_at=crashed.started_at,
    )
    decision = decide(
        Evidence(
            task_id="t",
            profile="hermetic",
            state=state,
            submitted_patch_digest=state.patch_digest,
            receipts=(ok, env, crashed),
        )
    )
    assert decision.outcome == "error"
    assert decision.failed == ()
    assert decision.errored == ("environment_reproduced",)
    assert crashed.crash is not None and crashed.crash.type == "RuntimeError"


def test_empty_patch_is_not_a_new_state() -> None:
    state = _state(patch_digest=patch_digest(b""))
    decision = decide(
        Evidence(
            task_id="t",
            profile="hermetic",
            state=state,
            submitted_patch_digest=state.patch_digest,
            receipts=(_all_pass(state.state_id, hard_checks("hermetic")),),
        )
    )
    assert decision.failed == ("patch_is_a_new_state",)


def test_whitespace_only_change_changes_patch_digest() -> None:
    """Two Python programs differing only in indentation must not share a patch digest."""
    a = b"+if x:\n+    return 1\n+return 2\n"
    b = b"+if x:\n+    return 1\n+    return 2\n"
    assert patch_digest(a) != patch_digest(b)


def test_state_id_covers_every_identity() -> None:
    state = _state()
    for field in (
        "base_commit",
        "candidate_commit",
        "candidate_tree",
        "patch_digest",
        "environment_digest",
        "oracle_digest",
        "policy_digest",
    ):
        assert _state(**{field: "f" * 40}).state_id != state.state_id
    assert state.model_copy(update={"merge_tree": "e" * 40}).state_id != state.state_id


def test_observe_turns_observation_into_bound_receipt() -> None:
    receipt = observe(
        "V",
        "s1",
        lambda: Observation(checks=(Check(name="focused_tests_passed", status="failed"),)),
    )
    assert receipt.status == "failed"
    assert receipt.state_id == "s1"
    statement = receipt.to_in_toto(_state(candidate_tree="d" * 40))
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["subject"][0]["digest"] == {"gitTree": "d" * 40}
    assert statement["predicateType"].endswith("/V/v1")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON"),
        ('{"schema_version": 2}', "schema_version 2"),
        ('{"schema_version": 1, "task_id": "t"}', "key 'profile'"),
    ],
)
def test_bad_evidence_is_one_line_usage_error(
    tmp_path: Path, content: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "e.json"
    path.write_text(content)
    assert main(["decide", str(path)]) == ExitCode.USAGE
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: evidence file")
    assert message in err
    assert len(err.splitlines()) == 1


def _decide_with_a_crash(gate: GateId, passing: tuple[CheckName, ...]) -> Decision:
    """Decide from one receipt passing ``passing`` and ``gate`` crashed with "disk full"."""
    state = _state()
    ok = _all_pass(state.state_id, passing)
    crashed = observe(gate, state.state_id, lambda: (_ for _ in ()).throw(OSError("disk full")))
    return decide(
        Evidence(
            task_id="t",
            profile="hermetic",
            state=state,
            submitted_patch_digest=state.patch_digest,
            receipts=(ok, crashed),
        )
    )


def test_a_crashed_gate_makes_its_missing_checks_errors_not_failures() -> None:
    """An evaluator crash (git, disk, a bug) must never be charged to the agent as a wrong patch."""
    names = tuple(
        n
        for n in hard_checks("hermetic")
        if n not in ("focused_tests_passed", "regression_tests_passed")
    )
    decision = _decide_with_a_crash("V", names)
    assert decision.outcome == "error"
    assert decision.failed == ()
    assert decision.errored == ("focused_tests_passed", "regression_tests_passed")
    focused = {c.name: c for c in decision.checks}["focused_tests_passed"]
    assert "V crashed: OSError: disk full" in focused.detail


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("confparse/evil\nname.py (outside)", "confparse/evil\\nname.py (outside)"),
        ("a\rb\tc", "a\\rb\\tc"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("safe\u202eyp.txt", "safe\\u202eyp.txt"),
        ("line\u2028sep\x85nel\x7f", "line\\u2028sep\\x85nel\\x7f"),
        ("plain é ✓ 名前", "plain é ✓ 名前"),
    ],
)
def test_check_details_and_crash_messages_show_control_characters_escaped(
    raw: str, shown: str
) -> None:
    """Untrusted names (a file called ``evil\\nname.py``, terminal escapes, bidi overrides) reach
    check details and crash messages; they are kept on one visible line, escaped as Python
    escapes them, wherever they are shown (red team: a newline split a check's detail)."""
    assert Check(name="edits_permitted", status="failed", detail=raw).detail == shown
    assert Crash(type="OSError", message=raw).message == shown


@pytest.mark.parametrize("gate", ["V-regression", "V-commands"])
def test_a_crashed_gate_errors_its_check_even_when_another_gate_passed_it(gate: GateId) -> None:
    """A regression step or oracle command that crashed never ran: its check cannot pass.

    ``regression_tests_passed`` is reported by gate V and by the regression step and the extra
    commands; a crash of one of them used to leave V's pass standing, so the attempt was
    accepted on tests that never ran.
    """
    decision = _decide_with_a_crash(gate, hard_checks("hermetic"))
    assert decision.outcome == "error"
    assert decision.errored == ("regression_tests_passed",)
    (check,) = [c for c in decision.checks if c.name == "regression_tests_passed"]
    assert f"{gate} crashed: OSError: disk full" in check.detail


def _lifecycle(
    failing: tuple[CheckName, ...], sentinel: Check | None, errored: tuple[CheckName, ...] = ()
) -> Evidence:
    """A lifecycle attempt whose gates pass every hard check but ``failing`` (failed) and
    ``errored`` (error); gate S reports ``sentinel`` (None: S has not run yet)."""
    state = _state()
    rest = tuple(
        Check(
            name=n,
            status="failed" if n in failing else "error" if n in errored else "passed",
            kind="other evaluator error" if n in errored else None,
        )
        for n in hard_checks("lifecycle")
        if n != "post_merge_sentinel_passed"
    )
    receipts = [
        Receipt(gate="V", status="failed", checks=rest, state_id=state.state_id, started_at=NOON)
    ]
    if sentinel is not None:
        receipts.append(
            Receipt(
                gate="S",
                status=sentinel.status,
                checks=(sentinel,),
                state_id=state.state_id,
                started_at=NOON,
            )
        )
    return Evidence(
        task_id="t",
        profile="lifecycle",
        state=state,
        submitted_patch_digest=state.patch_digest,
        receipts=tuple(receipts),
    )


NOON = "2026-01-01T12:00:00Z"
NOT_RUN = Check(
    name="post_merge_sentinel_passed",
    status="skipped",
    detail="not run: already rejected by focused_tests_passed, edits_permitted",
)


def test_a_skipped_check_beside_a_failed_one_stays_skipped_and_is_not_named_failed() -> None:
    """The decision names the checks that stopped it; the sentinel left out reads ``skipped``."""
    decision = decide(_lifecycle(("edits_permitted", "focused_tests_passed"), NOT_RUN))
    assert decision.outcome == "rejected"
    assert decision.failed == ("edits_permitted", "focused_tests_passed")
    sentinel = {c.name: c for c in decision.checks}["post_merge_sentinel_passed"]
    assert (sentinel.status, sentinel.detail) == ("skipped", NOT_RUN.detail)
    assert decision.stages["sentinel passed"] == "skipped"
    assert decision.stages["focused tests passed"] == "failed"


def test_a_skipped_check_with_nothing_else_failed_is_a_failure_never_an_acceptance() -> None:
    """No evidence is not a pass: a skipped sentinel alone rejects the attempt."""
    decision = decide(_lifecycle((), NOT_RUN))
    assert decision.outcome == "rejected"
    assert decision.failed == ("post_merge_sentinel_passed",)
    assert decision.stages["sentinel passed"] == "failed"


def test_a_skipped_check_beside_an_error_is_a_failure_not_an_error() -> None:
    """An error is the evaluator's; a skipped check beside it is still no evidence of a pass."""
    decision = decide(_lifecycle((), NOT_RUN, errored=("regression_tests_passed",)))
    assert decision.outcome == "rejected"
    assert decision.failed == ("post_merge_sentinel_passed",)
    assert decision.errored == ("regression_tests_passed",)


def test_a_check_skipped_by_one_gate_and_failed_by_another_is_failed() -> None:
    """Only a check reported as nothing but ``skipped`` is kept so."""
    evidence = _lifecycle(("focused_tests_passed",), NOT_RUN)
    failed_too = NOT_RUN.model_copy(update={"status": "failed", "detail": "regressed"})
    again = evidence.receipts[-1].model_copy(update={"checks": (failed_too,), "status": "failed"})
    decision = decide(evidence.model_copy(update={"receipts": (*evidence.receipts, again)}))
    assert decision.failed == ("focused_tests_passed", "post_merge_sentinel_passed")


def test_a_hermetic_attempt_s_skipped_sentinel_stage_reads_skipped_when_rejected() -> None:
    """In the hermetic profile the sentinel is no hard check, yet its stage folds the same way."""
    lifecycle = _lifecycle(("focused_tests_passed",), NOT_RUN)
    rejected = decide(lifecycle.model_copy(update={"profile": "hermetic"}))
    assert rejected.failed == ("focused_tests_passed",)
    assert rejected.stages["sentinel passed"] == "skipped"


@pytest.mark.parametrize(
    ("failing", "errored", "expected"),
    [
        (
            ("edits_permitted", "focused_tests_passed"),
            (),
            ("edits_permitted", "focused_tests_passed"),
        ),
        ((), ("regression_tests_passed",), ()),  # an error is no rejection: the sentinel runs
        ((), (), ()),
    ],
)
def test_failed_before_a_gate_names_what_already_failed_leaving_out_what_it_reports(
    failing: tuple[CheckName, ...], errored: tuple[CheckName, ...], expected: tuple[str, ...]
) -> None:
    """Before gate S runs its check has no receipt: that is not taken as a failure."""
    assert failed_before(_lifecycle(failing, None, errored), "S") == expected


def test_failed_before_a_gate_counts_a_skipped_check_as_no_rejection() -> None:
    """A check only skipped so far (an advisory made hard, not applicable) rejects no one yet."""
    evidence = _lifecycle((), None)
    skipped = Receipt(
        gate="V-differential",
        status="skipped",
        checks=(Check(name="behaviour_matches_reference", status="skipped"),),
        state_id=evidence.state.state_id,
        started_at=NOON,
    )
    hard = evidence.model_copy(
        update={
            "receipts": (*evidence.receipts, skipped),
            "also_hard": ("behaviour_matches_reference",),
        }
    )
    assert failed_before(hard, "S") == ()
    # the same check failed by its gate rejects: the sentinel would change nothing
    failed = skipped.model_copy(
        update={"checks": (Check(name="behaviour_matches_reference", status="failed"),)}
    )
    refuted = hard.model_copy(update={"receipts": (*evidence.receipts, failed)})
    assert failed_before(refuted, "S") == ("behaviour_matches_reference",)
