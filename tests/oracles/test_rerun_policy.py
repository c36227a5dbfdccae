"""The rerun policy as data in, data out: which ids run again, which failures are confirmed where.

The runs themselves are gate V's (:func:`repogate.gates.verification.rerun_state`, exercised end
to end in ``tests/oracles/test_grading_outcomes.py``); these steps decide from outcomes alone.
"""

from __future__ import annotations

from _test_runs import test_run as _run
from repogate.gates.base_state import confirmed_verdict, to_rerun_at_base
from repogate.gates.verification import expected_at_base, failures_to_confirm
from repogate.oracles.junit import TestOutcome
from repogate.oracles.reruns import (
    Rerun,
    describe,
    first_outcomes,
    pending,
    pending_again,
    records,
    seen_again,
    seen_with_selection,
)


def test_an_id_is_run_again_until_it_flips_and_the_record_keeps_every_outcome() -> None:
    seen = first_outcomes({"t.py::a": "failed", "t.py::b": "failed"})
    assert pending(seen) == ["t.py::a", "t.py::b"]
    seen = seen_again(seen, {"t.py::a": "passed", "t.py::b": "failed"})
    assert pending(seen) == ["t.py::b"]  # a flipped: not run again
    seen = seen_again(seen, {"t.py::b": "failed", "t.py::a": "failed"})  # a's is not asked
    assert seen == {"t.py::a": ("failed", "passed"), "t.py::b": ("failed", "failed", "failed")}
    assert records(seen, "candidate") == (
        Rerun(test_id="t.py::a", state="candidate", outcomes=("failed", "passed"), flaky=True),
        Rerun(
            test_id="t.py::b",
            state="candidate",
            outcomes=("failed", "failed", "failed"),
            flaky=False,
        ),
    )


def test_an_id_a_rerun_does_not_report_is_missing_and_nothing_asks_for_no_record() -> None:
    seen = seen_again(first_outcomes({"t.py::a": "failed"}), {"t.py::other": "passed"})
    assert seen == {"t.py::a": ("failed", "missing")}
    assert records(first_outcomes({}), "base") == ()
    assert pending(first_outcomes({})) == []


def test_only_failing_pass_to_pass_ids_are_confirmed_and_none_once_fail_to_pass_failed() -> None:
    graded = (["t.py::f"], ["t.py::p1", "t.py::p2", "t.py::p3", "t.py::p4"])
    outcomes: dict[str, TestOutcome] = {
        "t.py::f": "passed",
        "t.py::p1": "failed",
        "t.py::p2": "passed",
        "t.py::p3": "xfailed",
        "t.py::p4": "failed",
    }
    # p3 XFAILed at the base too (unchanged); p4 is left out (flaky); the last usable run counts
    runs = [_run({"t.py::f": "failed"}), _run(outcomes), _run({}, "timed out")]
    assert failures_to_confirm(runs, graded, {"t.py::p4"}, {"t.py::p3"}) == {"t.py::p1": "failed"}
    assert failures_to_confirm(runs[:1], graded, set(), set()) == {}  # FAIL_TO_PASS failed
    assert failures_to_confirm(runs[2:], graded, set(), set()) == {}  # no usable run


def test_only_reproduced_failures_go_to_the_base_expected_as_the_base_had_them() -> None:
    on_candidate = (
        Rerun(test_id="t.py::a", state="candidate", outcomes=("failed", "failed"), flaky=False),
        Rerun(test_id="t.py::b", state="candidate", outcomes=("failed", "passed"), flaky=True),
        Rerun(test_id="t.py::c", state="candidate", outcomes=("failed",), flaky=False),
        Rerun(test_id="t.py::d", state="candidate", outcomes=("failed",), flaky=False),
    )
    assert expected_at_base(on_candidate, {"t.py::c"}, {"t.py::d"}) == {
        "t.py::a": "passed",
        "t.py::c": "xfailed",
        "t.py::d": "xpassed",
    }


def test_a_wrong_base_outcome_is_rerun_and_only_one_that_flips_is_left_out() -> None:
    outcomes: dict[str, TestOutcome] = {
        "t.py::f": "passed",
        "t.py::g": "failed",
        "t.py::p": "failed",
        "t.py::q": "passed",
    }
    graded = (["t.py::f", "t.py::g"], ["t.py::p", "t.py::q"])
    assert to_rerun_at_base(outcomes, set(), *graded) == {"t.py::f": "passed", "t.py::p": "failed"}
    assert to_rerun_at_base(outcomes, {"t.py::f", "t.py::p"}, *graded) == {}
    before = confirmed_verdict(outcomes, set(), *graded)
    assert (before.valid, before.not_failing, before.not_passing) == (
        False,
        ("t.py::f",),
        ("t.py::p",),
    )
    flipped = (
        Rerun(test_id="t.py::f", state="base", outcomes=("passed", "failed"), flaky=True),
        Rerun(test_id="t.py::p", state="base", outcomes=("failed", "passed"), flaky=True),
    )
    assert confirmed_verdict(outcomes, set(), *graded, flipped).valid
    reproduced = (flipped[0], flipped[1].model_copy(update={"flaky": False}))
    after = confirmed_verdict(outcomes, set(), *graded, reproduced)
    assert (after.valid, after.not_failing, after.not_passing) == (False, (), ("t.py::p",))


def test_a_flip_alone_is_flaky_only_once_it_flips_with_the_first_runs_selection() -> None:
    """Red team: an id failing in the graded run and passing alone was flaky; a flip alone is
    now confirmed with the first run's selection, and one that never flips there is
    order-dependent: not flaky, its first outcome stands, and the detail says it."""
    seen = first_outcomes({"t.py::a": "failed", "t.py::b": "failed", "t.py::c": "failed"})
    seen = seen_again(seen, {"t.py::a": "passed", "t.py::b": "passed", "t.py::c": "failed"})
    assert pending_again(seen, {}) == ["t.py::a", "t.py::b"]  # c reproduced alone: no more
    again = seen_with_selection(seen, {}, {"t.py::a": "failed", "t.py::b": "passed"})
    assert pending_again(seen, again) == ["t.py::a"]  # b flipped with the selection
    again = seen_with_selection(seen, again, {"t.py::a": "failed", "t.py::b": "failed"})
    assert again == {"t.py::a": ("failed", "failed"), "t.py::b": ("passed",)}
    found = records(seen, "candidate", again)
    assert [(r.test_id, r.flaky, r.order_dependent, r.again) for r in found] == [
        ("t.py::a", False, True, ("failed", "failed")),
        ("t.py::b", True, False, ("passed",)),
        ("t.py::c", False, False, ()),
    ]
    assert describe(found) == (
        "flips on reruns: t.py::b (candidate: failed, passed); t.py::a fails with the whole "
        "selection, passes alone (order-dependent on the candidate: failed, passed; with the "
        "selection: failed, failed)"
    )
    # no usable rerun with the selection: nothing concluded, the first outcome stands
    assert records(seen, "base", {})[0].model_dump() == {
        "test_id": "t.py::a",
        "state": "base",
        "outcomes": ("failed", "passed"),
        "flaky": False,
        "again": (),
        "order_dependent": False,
    }
