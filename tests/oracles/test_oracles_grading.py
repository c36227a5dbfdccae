from __future__ import annotations

from repogate.oracles.grading import base_state_check, confirm_in_reference, flaky, grade
from repogate.oracles.junit import TestOutcome

F2P = ["t.py::test_fixed"]
P2P = ["t.py::test_kept", "t.py::test_other[a b]"]


def _outcomes(**by_name: TestOutcome) -> dict[str, TestOutcome]:
    names = {"fixed": F2P[0], "kept": P2P[0], "other": P2P[1]}
    return {names[k]: v for k, v in by_name.items()}


def test_all_pass_is_focused_and_regression_ok() -> None:
    g = grade(_outcomes(fixed="passed", kept="passed", other="passed"), F2P, P2P)
    assert (g.focused_ok, g.regression_ok, g.invalid) == (True, True, ())
    assert [r.observed for r in g.results] == ["passed", "passed", "passed"]


def test_skipped_fail_to_pass_fails() -> None:
    """Threat: a patch that makes the focused test skip would pass SWE-bench's grading."""
    g = grade(_outcomes(fixed="skipped", kept="passed", other="passed"), F2P, P2P)
    assert g.focused_ok is False
    assert g.results[0].observed == "skipped"


def test_missing_fail_to_pass_fails_and_is_reported_invalid() -> None:
    g = grade(_outcomes(kept="passed", other="passed"), F2P, P2P)
    assert g.focused_ok is False
    assert g.results[0].observed == "missing"
    assert g.invalid == (F2P[0],)


def test_nonexistent_pass_to_pass_is_invalid() -> None:
    g = grade(_outcomes(fixed="passed", kept="passed"), F2P, P2P)
    assert g.regression_ok is False
    assert g.invalid == (P2P[1],)


def test_ids_in_a_file_that_failed_to_collect_are_missing_not_invalid() -> None:
    g = grade({"t.py": "error"}, F2P, P2P)
    assert g.focused_ok is False and g.regression_ok is False
    assert g.invalid == ()


def test_skipped_pass_to_pass_is_a_regression_unless_ignored() -> None:
    outcomes = _outcomes(fixed="passed", kept="skipped", other="passed")
    assert grade(outcomes, F2P, P2P).regression_ok is False
    assert grade(outcomes, F2P, P2P, skipped_regression="ignore").regression_ok is True


def test_failed_and_error_are_not_passes() -> None:
    g = grade(_outcomes(fixed="error", kept="failed", other="passed"), F2P, P2P)
    assert (g.focused_ok, g.regression_ok) == (False, False)


def test_empty_fail_to_pass_is_never_focused_ok() -> None:
    assert grade(_outcomes(kept="passed"), [], P2P[:1]).focused_ok is False


def test_excluded_ids_are_recorded_and_do_not_count() -> None:
    outcomes = _outcomes(fixed="passed", kept="failed", other="passed")
    g = grade(outcomes, F2P, P2P, exclude={P2P[0]})
    assert g.regression_ok is True
    assert g.excluded == (P2P[0],)
    assert grade(outcomes, F2P, P2P, exclude=set(F2P) | {P2P[0]}).focused_ok is False


def test_volatile_ids_are_matched_for_grading() -> None:
    g = grade(
        {"t.py::test_d[2024-01-01 00:00:01]": "passed"}, ["t.py::test_d[2019-02-02 01:01:01]"], []
    )
    assert g.focused_ok is True
    assert g.results[0].matched_id == "t.py::test_d[2024-01-01 00:00:01]"


def test_base_state_valid_when_f2p_fail_and_p2p_pass() -> None:
    check = base_state_check(_outcomes(fixed="failed", kept="passed", other="passed"), F2P, P2P)
    assert check.valid and check.reasons == ()
    assert base_state_check(_outcomes(fixed="error", kept="passed", other="passed"), F2P, P2P).valid


def test_base_state_invalid_cases() -> None:
    """Threat: a task whose oracle cannot tell a fix from no fix would blame or credit the agent."""
    passing_f2p = base_state_check(
        _outcomes(fixed="passed", kept="passed", other="passed"), F2P, P2P
    )
    assert not passing_f2p.valid and passing_f2p.not_failing == (F2P[0],)
    failing_p2p = base_state_check(
        _outcomes(fixed="failed", kept="failed", other="passed"), F2P, P2P
    )
    assert not failing_p2p.valid and failing_p2p.not_passing == (P2P[0],)
    nonexistent = base_state_check(_outcomes(fixed="failed", kept="passed"), F2P, P2P)
    assert not nonexistent.valid and nonexistent.nonexistent == (P2P[1],)
    assert not base_state_check(_outcomes(kept="passed"), [], P2P[:1]).valid


def test_flaky_finds_ids_that_flip_or_vanish() -> None:
    runs: list[dict[str, TestOutcome]] = [
        {"a": "passed", "b": "passed", "c": "failed", "t[2024-01-01]": "passed"},
        {"a": "passed", "b": "failed", "t[2024-01-02]": "passed"},
    ]
    assert flaky(runs) == {"b", "c"}
    assert flaky(runs[:1]) == set()


def test_fail_to_pass_in_a_file_that_cannot_be_collected_at_the_base_fails_there() -> None:
    """A new test that imports the name the change adds cannot even be collected at the base.

    SWE-bench counts such a test as failed at the base (absent from the log); the task is valid,
    not "ids that do not exist". A PASS_TO_PASS test in that file did not pass.
    """
    at_base: dict[str, TestOutcome] = {"t.py": "error"}
    assert base_state_check(at_base, F2P, []).valid
    check = base_state_check(at_base, F2P, P2P)
    assert check.nonexistent == ()
    assert check.not_passing == tuple(P2P)
    truly_missing = base_state_check({"u.py::test_x": "passed"}, F2P, [])
    assert truly_missing.nonexistent == tuple(F2P)


def test_an_xpass_under_a_mark_the_hidden_tests_do_not_declare_is_not_a_pass() -> None:
    """Issue 9, rule 1: ``xpassed`` fails a FAIL_TO_PASS test; a PASS_TO_PASS test is unchanged
    only when it was ``xpassed`` at the base too (there every mark is the base's own)."""
    g = grade(_outcomes(fixed="xpassed", kept="xpassed", other="passed"), F2P, P2P)
    assert (g.focused_ok, g.regression_ok) == (False, False)
    assert [r.observed for r in g.results] == ["xpassed", "xpassed", "passed"]
    g = grade(
        _outcomes(fixed="passed", kept="xpassed", other="passed"),
        F2P,
        P2P,
        base_xpassed=[P2P[0]],
    )
    assert (g.focused_ok, g.regression_ok) == (True, True)
    # xpassed at the base and XFAIL now: the body no longer completes, a regression
    g = grade(
        _outcomes(fixed="passed", kept="xfailed", other="passed"), F2P, P2P, base_xpassed=[P2P[0]]
    )
    assert g.regression_ok is False
    check = base_state_check(_outcomes(fixed="xpassed", kept="xpassed", other="passed"), F2P, P2P)
    assert check.not_failing == (F2P[0],)  # its body completed at the base
    assert (check.not_passing, check.xpassed) == ((), (P2P[0],))


def test_a_missing_fail_to_pass_id_is_named_in_the_reason() -> None:
    """New user: ``task invalid: 1 expected test id(s) do not exist at the base`` did not say
    which; the id was in the E receipt only."""
    check = base_state_check(_outcomes(kept="passed", other="passed"), ["t.py::test_fixd"], P2P)
    assert check.reasons == ("1 expected test id(s) do not exist at the base: 't.py::test_fixd'",)


def test_a_missing_pass_to_pass_id_is_named_with_its_invisible_characters_escaped() -> None:
    typo = "t.py::test_kept\u202e\n"
    check = base_state_check(_outcomes(fixed="failed", kept="passed"), F2P, [typo])
    assert check.reasons == (
        "1 expected test id(s) do not exist at the base: 't.py::test_kept\\u202e\\n'",
    )


def test_many_missing_ids_are_named_first_few_and_counted() -> None:
    missing = [f"t.py::test_gone{i}" for i in range(7)]
    check = base_state_check(_outcomes(fixed="failed"), F2P, missing)
    assert check.reasons == (
        "7 expected test id(s) do not exist at the base: 't.py::test_gone0', "
        "'t.py::test_gone1', 't.py::test_gone2' and 4 more",
    )


def test_an_id_missing_in_the_reference_is_named_too() -> None:
    """An id of a file that does not import at the base, absent from the reference's run."""
    check = base_state_check({"t.py": "error"}, ["t.py::test_nwe"], [])
    confirmed = confirm_in_reference(check, {"t.py::test_new": "passed"})
    assert confirmed.reasons[-1] == (
        "1 expected test id(s) do not exist in the reference state (their file does not import "
        "at the base): 't.py::test_nwe'"
    )


def test_a_fail_to_pass_test_passing_at_the_base_is_named_with_its_outcome() -> None:
    """New user: ``task invalid: 1 FAIL_TO_PASS test(s) do not fail at the base`` did not say
    which; the id was in the E receipt only."""
    check = base_state_check(_outcomes(fixed="passed", kept="passed", other="passed"), F2P, P2P)
    assert check.reasons == (
        "1 FAIL_TO_PASS test(s) do not fail at the base: 't.py::test_fixed' (passed)",
    )


def test_pass_to_pass_tests_not_passing_at_the_base_are_named_each_with_its_outcome() -> None:
    """A skip, a failure, and an id whose file does not import are each named as observed."""
    at_base: dict[str, TestOutcome] = {
        F2P[0]: "failed",
        "t.py::test_kept": "skipped",
        "t.py::test_other[a b]": "failed",
        "u.py": "error",
    }
    check = base_state_check(at_base, F2P, [*P2P, "u.py::test_new"])
    assert check.reasons == (
        "3 PASS_TO_PASS test(s) do not pass at the base: 't.py::test_kept' (skipped), "
        "'t.py::test_other[a b]' (failed), 'u.py::test_new' (uncollected)",
    )


def test_many_wrong_ids_at_the_base_are_named_first_three_escaped_and_counted() -> None:
    """Seven FAIL_TO_PASS tests passing at the base, one id holding a newline."""
    ids = [f"t.py::test_{i}" for i in range(6)] + ["t.py::test_6\u202e\n"]
    check = base_state_check(dict.fromkeys(ids, "passed"), [ids[-1], *ids[:-1]], [])
    assert check.reasons == (
        "7 FAIL_TO_PASS test(s) do not fail at the base: 't.py::test_6\\u202e\\n' (passed), "
        "'t.py::test_0' (passed), 't.py::test_1' (passed) and 4 more",
    )
