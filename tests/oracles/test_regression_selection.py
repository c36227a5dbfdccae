"""Selecting the base-passing tests a change can affect, falling back to all of them, and grading them.

Each fallback closes one way a selection could miss a regression: code that runs outside every
test's coverage context, files the tests read without importing, and files whose coverage the
base run never saw.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import pytest

from _test_runs import test_run as _run
from repogate.gates.regression import grade, narrowed, next_run, seen, start
from repogate.gates.verification import check_tests
from repogate.oracles.base_suite import BaseSuite
from repogate.oracles.junit import TestOutcome
from repogate.oracles.pytest_runner import TestRun
from repogate.oracles.selection import (
    CoverageMap,
    FileChange,
    Lookups,
    Selection,
    lookups,
    select,
)
from repogate.receipt import Observation

BASE = b'''"""fmt."""

LIMIT = 3


def label(name, optional=False):
    # brackets for optional names
    if optional:
        return "[" + name.upper() + "]"
    return name.upper()


def usage(prog, args):
    return " ".join([prog] + [label(n, o) for n, o in args])


class Box:
    def width(self):
        return LIMIT


class Wide(Box):
    pass
'''
PASSING = ("t/test_label.py::test_plain", "t/test_usage.py::test_usage[a]", "t/test_box.py::test_w")
COVERAGE = CoverageMap(
    tests={
        "t/test_label.py::test_plain": {"fmt.py": (8, 10), "t/test_label.py": (4,)},
        "t/test_usage.py::test_usage[a]": {"fmt.py": (8, 10, 14), "t/test_usage.py": (4,)},
        "t/test_box.py::test_w": {"fmt.py": (19,), "t/test_box.py": (3,)},
    },
    untested={"fmt.py": (1, 3, 6, 13, 17, 18, 22), "t/test_label.py": (1, 3)},
)


_unnamed: tuple[str, ...] = ()


def _select(
    after: bytes, path: str = "fmt.py", status: str = "M", named_at_base: set[str] | None = None
) -> Selection:
    """Select for one change; of ``named_at_base``, only the words :func:`lookups` asks about
    count (as the phase looks up only those)."""
    change = FileChange(path=path, status=status, before=BASE, after=after)
    asked = set(lookups([change], COVERAGE).new_names)
    return select([change], PASSING, COVERAGE, _unnamed, (named_at_base or set()) & asked)


def test_a_changed_function_selects_the_tests_that_ran_it() -> None:
    chosen = _select(BASE.replace(b'" ".join([prog]', b'" | ".join([prog]'))
    assert not chosen.whole
    assert chosen.tests == ("t/test_usage.py::test_usage[a]",)
    assert chosen.changed_units == ("fmt.py::usage",)
    chosen = _select(BASE.replace(b"return name.upper()\n", b"return name.lower()\n"))
    assert chosen.tests == ("t/test_label.py::test_plain", "t/test_usage.py::test_usage[a]")


def test_a_signature_change_selects_the_callers_of_the_function() -> None:
    chosen = _select(BASE.replace(b"optional=False):", b"optional=False, metavar=None):"))
    assert chosen.changed_units == ("fmt.py::label",)
    assert chosen.tests == ("t/test_label.py::test_plain", "t/test_usage.py::test_usage[a]")


def test_comments_and_formatting_select_nothing() -> None:
    chosen = _select(BASE.replace(b"# brackets for optional names", b"# square brackets"))
    assert not chosen.whole
    assert chosen.tests == ()


def test_a_new_name_selects_the_tests_that_ran_its_class_or_module() -> None:
    """A new name may be reached by a name built at run time (``getattr(self, "visit_" + kind)``,
    ``globals()["cmd_" + name]``): not inert. A new method selects the tests that ran its class,
    a new function the tests that ran its module."""
    chosen = _select(
        BASE.replace(
            b"        return LIMIT\n",
            b"        return LIMIT\n\n    def height(self):\n        return 1\n",
        )
    )
    assert not chosen.whole
    assert chosen.tests == ("t/test_box.py::test_w",)
    assert chosen.changed_units == ("fmt.py::Box.height (new, in class Box)",)
    chosen = _select(BASE + b"\n\ndef _helper(x):\n    return x * 2\n")
    assert not chosen.whole
    assert chosen.tests == tuple(sorted(PASSING))
    assert chosen.changed_units == ("fmt.py::_helper (new, in its module)",)


def test_a_new_name_the_base_names_anywhere_falls_back() -> None:
    """Red team (regression-evasion): ``show()`` found a new method with ``getattr(obj,
    "pretty")``; selection called it inert. A new name the base tree names (an identifier, a
    string, a configuration entry) may be looked up by it: the whole suite runs."""
    method = BASE.replace(
        b"        return LIMIT\n",
        b"        return LIMIT\n\n    def pretty(self):\n        return 1\n",
    )
    chosen = _select(method, named_at_base={"pretty"})
    assert chosen.whole
    assert chosen.reasons == (
        "fmt.py: new Box.pretty: the base names 'pretty' (it may be looked up by name: getattr, "
        "a dispatch table, a registry, an entry point)",
    )
    assert _select(BASE + b"\n\ndef handler():\n    return 1\n", named_at_base={"handler"}).whole


def test_the_words_to_look_up_are_the_new_inert_names_and_the_changed_documents() -> None:
    """:func:`select` consults only what :func:`lookups` listed: the names of new functions that
    could be inert (the base may name them) and changelog-like documents (a test may name them);
    nothing without coverage, where everything runs."""
    added = FileChange("fmt.py", "M", BASE, BASE + b"\n\ndef handler():\n    return 1\n")
    dunder = FileChange("fmt.py", "M", BASE, BASE + b"\n\ndef __dir__():\n    return []\n")
    data = FileChange("fmt/data.json", "M", b"1", b"2")
    news = FileChange("docs/NEWS.rst", "M", b"1", b"2")
    assert lookups([added, dunder, data, news], COVERAGE) == Lookups(
        documents=("NEWS.rst",), new_names=("handler",)
    )
    assert lookups([added, news], None) == Lookups(documents=(), new_names=())


def test_module_level_code_falls_back_to_the_whole_suite() -> None:
    """A constant runs at import, outside every test's context: coverage cannot say who reads it."""
    chosen = _select(BASE.replace(b"LIMIT = 3", b"LIMIT = 4"))
    assert chosen.whole
    assert chosen.tests == tuple(sorted(PASSING))
    assert chosen.reasons == ("module- or class-level code of fmt.py changed",)


def test_new_names_that_may_change_behaviour_fall_back() -> None:
    """An override in a subclass, a dunder, a rebinding or a decorated function changes existing
    behaviour without any changed line running in the base's tests."""
    overriding = BASE.replace(
        b"class Wide(Box):\n    pass", b"class Wide(Box):\n    def width(self):\n        return 9"
    )
    dunder = BASE.replace(
        b"        return LIMIT\n",
        b"        return LIMIT\n\n    def __eq__(self, o):\n        return True\n",
    )
    rebinding = BASE + b"\n\ndef LIMIT():\n    return 1\n"
    shadowing = BASE + b"\n\ndef len(x):\n    return 0\n"
    decorated = BASE + b"\n\n@register\ndef plugin():\n    return 1\n"
    removed = BASE.replace(b"def usage(prog, args):", b"def usage2(prog, args):")
    registered = BASE.replace(b"def usage(prog, args):", b"@command\ndef usage(prog, args):")
    for after in (overriding, dunder, rebinding, shadowing, decorated, removed, registered):
        chosen = _select(after)
        assert chosen.whole, after.decode()
        assert chosen.reasons


def test_a_function_run_at_import_falls_back() -> None:
    coverage = COVERAGE.model_copy(update={"untested": {"fmt.py": (1, 3, 6, 8, 13, 17)}})
    change = FileChange("fmt.py", "M", BASE, BASE.replace(b"name.upper() + ", b"name + "))
    chosen = select([change], PASSING, coverage, _unnamed, _unnamed)
    assert chosen.whole
    assert chosen.reasons == ("fmt.py::label runs outside every test (import or collection)",)


def test_files_the_tests_may_read_or_install_fall_back() -> None:
    cases = {
        ("conftest.py", "M"): "conftest.py changed (it configures or installs the tests)",
        ("t/conftest.py", "M"): "t/conftest.py changed (it configures or installs the tests)",
        ("setup.py", "M"): "setup.py changed (it configures or installs the tests)",
        ("pyproject.toml", "M"): "non-Python file pyproject.toml changed (the tests may read it)",
        ("fmt/data.json", "M"): "non-Python file fmt/data.json changed (the tests may read it)",
        ("fmt/new.py", "A"): "fmt/new.py added",
        ("fmt/old.py", "D"): "fmt/old.py deleted",
        ("scripts/release.py", "M"): "scripts/release.py never ran under coverage at the base",
    }
    for (path, status), reason in cases.items():
        change = FileChange(path, status, b"x = 1\n", b"x = 2\n")
        chosen = select([change], PASSING, COVERAGE, _unnamed, _unnamed)
        assert chosen.whole, path
        assert chosen.reasons == (reason,)


def test_a_changelog_no_test_reads_is_inert_and_one_a_test_names_is_not() -> None:
    change = FileChange("CHANGES.rst", "M", b"1.0\n", b"1.1\n")
    assert not select([change], PASSING, COVERAGE, _unnamed, _unnamed).whole
    assert lookups([change], COVERAGE) == Lookups(documents=("CHANGES.rst",), new_names=())
    named = select([change], PASSING, COVERAGE, {"CHANGES.rst"}, _unnamed)
    assert named.whole
    collected = select(
        [change], (*PASSING, "CHANGES.rst::CHANGES.rst"), COVERAGE, _unnamed, _unnamed
    )
    assert collected.whole  # a doctest file is a test file


def test_no_coverage_falls_back_with_the_recorded_reason() -> None:
    change = FileChange("fmt.py", "M", BASE, BASE.replace(b" | ", b" "))
    chosen = select([change], PASSING, None, _unnamed, _unnamed, no_coverage_reason="offline")
    assert chosen.whole
    assert chosen.reasons == ("offline",)


def test_a_base_passing_test_without_coverage_is_always_selected() -> None:
    """A test that passed in the plain run but has no context (failed under coverage, or its id
    is spelled differently there) cannot be ruled out."""
    unseen = "t/test_other.py::test_x"
    change = FileChange("fmt.py", "M", BASE, BASE.replace(b"return LIMIT", b"return LIMIT + 0"))
    chosen = select([change], (*PASSING, unseen), COVERAGE, _unnamed, _unnamed)
    assert not chosen.whole
    assert chosen.tests == ("t/test_box.py::test_w", unseen)


# --- grading the selected run (gates/regression.py): data in, data out --------------------------

SUITE = BaseSuite(
    status="ok",
    passing=("t/a.py::test_1", "t/a.py::test_2", "t/b.py::test_3", "t/b.py::test_graded"),
    outcomes_digest=None,
    duration_s=1.0,
    coverage=None,
)
EVERYTHING = Selection(whole=True, reasons=("no coverage",), tests=SUITE.passing, changed_units=())


class _Replay:
    """Hands back the next prepared run and records what was asked (ids, label, filtered)."""

    def __init__(self, *runs: TestRun) -> None:
        self.runs = list(runs)
        self.asked: list[tuple[tuple[str, ...], str, bool]] = []


def _regressions(
    suite: BaseSuite,
    selection: Selection,
    already: Mapping[str, TestOutcome],
    exclude: Collection[str],
    replay: _Replay,
    *,
    base_runs: bool = False,
) -> Observation:
    """Make each run the step asks for from ``replay``, as the phase does with real runs."""
    step = start(suite, selection, already, exclude, base_runs=base_runs)
    while (ask := next_run(step)) is not None:
        replay.asked.append((ask.ids, ask.label, ask.filtered))
        step = seen(step, ask, replay.runs.pop(0))
    assert replay.runs == []  # every prepared run was asked for
    return grade(step)


def test_a_reproducible_failure_outside_the_declared_ids_fails_the_check() -> None:
    replay = _Replay(
        _run({"t/a.py::test_1": "passed", "t/a.py::test_2": "failed", "t/b.py::test_3": "passed"}),
        _run({"t/a.py::test_2": "failed"}),
        _run({"t/a.py::test_2": "failed"}),
    )
    seen = _regressions(
        SUITE, EVERYTHING, {"t/b.py::test_graded": "passed"}, {"t/b.py::test_graded"}, replay
    )
    assert seen.checks[0].status == "failed"
    assert seen.checks[0].detail.startswith(
        "1 test passed at the base, not on the candidate: 't/a.py::test_2' (failed) ["
    )
    assert "no coverage" in seen.checks[0].detail  # the fallback reason is shown
    assert replay.asked[0] == (
        ("t/a.py::test_1", "t/a.py::test_2", "t/b.py::test_3"),
        "selected",
        True,
    )
    assert [a[1] for a in replay.asked[1:]] == ["rerun0", "rerun1"]
    assert seen.details["failing"] == {"t/a.py::test_2": "failed"}


def test_a_failure_that_passes_on_a_rerun_with_the_same_selection_is_flaky_and_said() -> None:
    """Passing alone is not enough: the same selection runs again, and only a pass there is a
    flip under the same conditions; the exclusion is said in the check's detail."""
    whole: dict[str, TestOutcome] = {
        "t/a.py::test_1": "passed",
        "t/a.py::test_2": "failed",
        "t/b.py::test_3": "passed",
    }
    replay = _Replay(
        _run(whole),
        _run({"t/a.py::test_2": "passed"}),
        _run({"t/a.py::test_2": "failed"}),
        _run({**whole, "t/a.py::test_2": "passed"}),
    )
    seen = _regressions(SUITE, EVERYTHING, {}, {"t/b.py::test_graded"}, replay)
    assert seen.checks[0].status == "passed"
    assert seen.details["flaky_excluded"] == ["t/a.py::test_2"]
    assert seen.details["order_dependent_on_candidate"] == []
    selected = ("t/a.py::test_1", "t/a.py::test_2", "t/b.py::test_3")
    assert replay.asked[1:] == [
        (("t/a.py::test_2",), "rerun0", True),
        (("t/a.py::test_2",), "rerun1", True),
        (selected, "rerun-same-selected-0", True),  # the same ids as the run it failed in
    ]
    assert seen.checks[0].detail.endswith(
        "; left out as flaky (failed, then passed with the same selection): 't/a.py::test_2'"
    )


def test_a_failure_that_passes_only_alone_is_order_dependent_and_charged() -> None:
    """Red team: a test failing with the whole selection and passing alone was excused as flaky;
    it fails every rerun with its selection, so it is charged, said as order-dependent, and not
    run alone at the base (it passes alone on the candidate already)."""
    whole: dict[str, TestOutcome] = {
        "t/a.py::test_1": "passed",
        "t/a.py::test_2": "failed",
        "t/b.py::test_3": "passed",
    }
    alone = _run({"t/a.py::test_2": "passed"})
    at_base = _run({**whole, "t/a.py::test_2": "passed"})
    replay = _Replay(_run(whole), alone, alone, _run(whole), _run(whole), at_base)
    seen = _regressions(SUITE, EVERYTHING, {}, {"t/b.py::test_graded"}, replay, base_runs=True)
    assert seen.checks[0].status == "failed"
    assert [a[1] for a in replay.asked] == [
        "selected",
        "rerun0",
        "rerun1",
        "rerun-same-selected-0",
        "rerun-same-selected-1",
        "base-same-selected",  # the same selection at the base: it passes there
    ]
    assert replay.asked[-1][0] == replay.asked[0][0]
    assert seen.details["failing_with_selection_at_base"] == []
    assert seen.details["failing"] == {"t/a.py::test_2": "failed"}
    assert seen.details["flaky_excluded"] == []
    assert seen.details["order_dependent_on_candidate"] == ["t/a.py::test_2"]
    assert seen.details["failing_alone_at_base"] == []
    assert seen.checks[0].detail.startswith(
        "1 test fails with the whole selection, passes alone (order-dependent on the candidate): "
        "'t/a.py::test_2' (failed) ["
    )


def test_a_graded_run_failure_passing_alone_is_confirmed_with_the_graded_files() -> None:
    """A test observed failing in the graded run is run again with the graded ids' files."""
    replay = _Replay(
        _run({"t/a.py::test_1": "passed", "t/b.py::test_3": "passed"}),
        _run({"t/a.py::test_2": "passed"}),
        _run({"t/a.py::test_2": "passed"}),
        _run({"t/a.py::test_2": "failed"}),
        _run({"t/a.py::test_2": "failed"}),
    )
    step = start(
        SUITE,
        EVERYTHING,
        {"t/a.py::test_2": "failed"},
        {"t/b.py::test_graded"},
        base_runs=False,
        graded=["t/b.py::test_graded"],
    )
    while (ask := next_run(step)) is not None:
        replay.asked.append((ask.ids, ask.label, ask.filtered))
        step = seen(step, ask, replay.runs.pop(0))
    assert replay.asked[3:] == [
        (("t/b.py::test_graded",), "rerun-same-graded-0", False),
        (("t/b.py::test_graded",), "rerun-same-graded-1", False),
    ]
    assert grade(step).details["order_dependent_on_candidate"] == ["t/a.py::test_2"]


def test_an_id_the_filter_lost_is_run_with_its_whole_file_and_missing_is_a_failure() -> None:
    replay = _Replay(
        _run({"t/a.py::test_1": "passed", "t/a.py::test_2": "passed"}),
        _run({"t/b.py::test_other": "passed"}),
        _run({}),
        _run({}),
    )
    seen = _regressions(SUITE, EVERYTHING, {}, {"t/b.py::test_graded"}, replay)
    assert replay.asked[1] == (("t/b.py::test_3",), "unfiltered", False)
    assert seen.checks[0].status == "failed"
    assert seen.details["failing"] == {"t/b.py::test_3": "missing"}


def test_no_usable_base_suite_is_an_evaluator_error_naming_the_way_out() -> None:
    broken = SUITE.model_copy(update={"status": "error", "reason": "no report", "passing": ()})
    seen = _regressions(broken, EVERYTHING, {}, (), _Replay())
    assert seen.checks[0].status == "error"
    assert 'oracles.regression = "declared"' in seen.checks[0].detail
    assert seen.checks[0].kind == "other evaluator error"


def test_a_base_suite_that_ran_out_of_time_is_a_timeout_whatever_its_reason_says() -> None:
    for reason in ("the test command timed out after 60 s", "budget spent"):
        broken = SUITE.model_copy(
            update={"status": "error", "reason": reason, "passing": (), "timed_out": True}
        )
        seen = _regressions(broken, EVERYTHING, {}, (), _Replay())
        assert (seen.checks[0].status, seen.checks[0].kind) == ("error", "timeout")


def test_the_narrowing_is_a_record_not_a_silent_default() -> None:
    seen = narrowed()
    assert seen.checks[0].status == "passed"
    assert "narrowed by the contract" in seen.checks[0].detail
    assert seen.details == {"scope": "declared", "narrowed_by": "contract"}


def test_no_change_selects_nothing_even_without_coverage() -> None:
    assert select([], (*PASSING, "t/test_other.py::test_x"), None, _unnamed, _unnamed).tests == ()


def test_a_tampered_regression_run_fails_harness_untampered_and_grades_nothing() -> None:
    """The guard saw library code change pytest during the regression run: no outcome of it is
    trusted, and the change is named under ``harness_untampered``."""
    change = "_pytest.python.Function.runtest was replaced by code from pkg/mod.py"
    tampered = _run({}, "the test runner was changed during the run").model_copy(
        update={"tampering": (change,)}
    )
    seen = _regressions(SUITE, EVERYTHING, {}, {"t/b.py::test_graded"}, _Replay(tampered))
    checks = {c.name: c for c in seen.checks}
    assert checks["regression_tests_passed"].status == "failed"
    assert checks["harness_untampered"].status == "failed"
    assert change in checks["harness_untampered"].detail


def test_a_failure_that_fails_alone_at_the_base_too_is_left_out_with_a_record() -> None:
    """An order-dependent test passed in the base's whole-suite run, not alone: a reproducible
    failure is run alone at the base, and one that fails there too is not charged."""
    failing = _run(
        {"t/a.py::test_1": "passed", "t/a.py::test_2": "failed", "t/b.py::test_3": "failed"}
    )
    again = _run({"t/a.py::test_2": "failed", "t/b.py::test_3": "failed"})
    at_base = _run({"t/a.py::test_2": "failed", "t/b.py::test_3": "passed"})
    replay = _Replay(failing, again, again, at_base)
    seen = _regressions(SUITE, EVERYTHING, {}, {"t/b.py::test_graded"}, replay, base_runs=True)
    assert replay.asked[-1] == (("t/a.py::test_2", "t/b.py::test_3"), "base-alone", True)
    assert seen.details["failing_alone_at_base"] == ["t/a.py::test_2"]
    assert seen.details["failing"] == {"t/b.py::test_3": "failed"}
    assert seen.checks[0].status == "failed"


def test_a_base_run_that_broke_charges_every_reproducible_failure() -> None:
    failing = _run(
        {"t/a.py::test_1": "passed", "t/a.py::test_2": "failed", "t/b.py::test_3": "passed"}
    )
    again = _run({"t/a.py::test_2": "failed"})
    broken = _run({}, "no report")
    replay = _Replay(failing, again, again, broken)
    seen = _regressions(SUITE, EVERYTHING, {}, {"t/b.py::test_graded"}, replay, base_runs=True)
    assert seen.details["failing_alone_at_base"] == []
    assert seen.details["failing"] == {"t/a.py::test_2": "failed"}


def test_many_regressions_are_named_first_three_with_outcomes_and_the_rest_counted() -> None:
    """The detail listed ten ids unquoted; it names three (quoted, invisible characters
    escaped), each with its outcome on the candidate, and counts the rest."""
    passing = ("t/a.py::test_0\u202e", *(f"t/a.py::test_{n}" for n in range(1, 6)))
    suite = SUITE.model_copy(update={"passing": passing})
    everything = EVERYTHING.model_copy(update={"tests": passing})
    broken: dict[str, TestOutcome] = {t: "failed" for t in passing}
    broken["t/a.py::test_1"] = "error"
    del broken["t/a.py::test_2"]  # its file collected; the id vanished: missing
    # selected, its files whole for the missing id (still missing), two reruns
    replay = _Replay(_run(broken), _run(broken), _run(broken), _run(broken))
    seen = _regressions(suite, everything, {}, (), replay)
    assert seen.checks[0].detail == (
        "6 tests passed at the base, not on the candidate: 't/a.py::test_0\\u202e' (failed), "
        "'t/a.py::test_1' (error), 't/a.py::test_2' (missing) and 3 more [all 6 base-passing "
        "tests beyond the graded ids (no coverage)]"
    )


def test_pass_to_pass_failures_say_they_passed_at_the_base_and_name_three() -> None:
    """Gate V's declared PASS_TO_PASS detail said ``id (failed)`` only, ten of them, not that
    they passed at the base; FAIL_TO_PASS is named the same way."""
    p2p = [f"t/p.py::test_{n}" for n in range(5)]
    outcomes: dict[str, TestOutcome] = {t: "failed" for t in p2p}
    outcomes["t/p.py::test_0"] = "skipped"
    outcomes["t/f.py::test_f"] = "xfailed"
    checks = {
        c.name: c for c in check_tests([_run(outcomes)], set(), ["t/f.py::test_f"], p2p).checks
    }
    assert checks["regression_tests_passed"].detail == (
        "5 PASS_TO_PASS test(s) passed at the base, not on the candidate: 't/p.py::test_0' "
        "(skipped), 't/p.py::test_1' (failed), 't/p.py::test_2' (failed) and 2 more; not rerun: "
        "FAIL_TO_PASS failed, so the reruns could not change the verdict"
    )
    assert checks["focused_tests_passed"].detail == (
        "1 FAIL_TO_PASS test(s) do not pass on the candidate: 't/f.py::test_f' (xfailed)"
    )


def test_an_order_dependent_failure_the_base_shares_with_the_same_selection_is_left_out() -> None:
    """As a test failing alone at the base too is not charged, one failing with the same
    selection at the base too is left out, with a record and said in the detail."""
    whole: dict[str, TestOutcome] = {
        "t/a.py::test_1": "passed",
        "t/a.py::test_2": "failed",
        "t/b.py::test_3": "passed",
    }
    alone = _run({"t/a.py::test_2": "passed"})
    replay = _Replay(_run(whole), alone, alone, _run(whole), _run(whole), _run(whole))
    seen = _regressions(SUITE, EVERYTHING, {}, {"t/b.py::test_graded"}, replay, base_runs=True)
    assert seen.checks[0].status == "passed"
    assert seen.details["failing"] == {}
    assert seen.details["failing_with_selection_at_base"] == ["t/a.py::test_2"]
    assert seen.checks[0].detail.endswith(
        "; left out: fail with the same selection at the base too: 't/a.py::test_2'"
    )


def test_a_test_that_started_a_child_process_is_selected_by_any_change() -> None:
    """Red team red37: the child runs code no context records (a CLI run with ``subprocess``),
    so a change to a function only it ran selected nothing and a broken ``main()`` passed."""
    spawning = COVERAGE.model_copy(update={"spawning": ("t/test_box.py::test_w",)})
    after = BASE.replace(b"return name.upper()\n", b"return name\n")
    changed = [FileChange(path="fmt.py", status="M", before=BASE, after=after)]
    result = select(changed, PASSING, spawning, (), ())
    assert not result.whole
    assert "t/test_box.py::test_w" in result.tests  # it never ran label() in process
    assert select(changed, PASSING, COVERAGE, (), ()).tests == tuple(sorted(PASSING[:2]))


@pytest.mark.parametrize(
    ("update", "reason"),
    [
        (
            {"lingering": ("t/test_usage.py::test_usage[a]",)},
            "a child process the base's tests started was still running after "
            "t/test_usage.py::test_usage[a] (a server or worker later tests may use: what runs "
            "in it is in no test's coverage)",
        ),
        (
            {"spawned_outside": True},
            "the base's tests started a child process outside every test (import or "
            "collection): what runs in it is in no test's coverage",
        ),
    ],
)
def test_a_child_process_no_one_test_owns_falls_back(
    update: dict[str, object], reason: str
) -> None:
    after = BASE.replace(b"return name.upper()\n", b"return name\n")
    changed = [FileChange(path="fmt.py", status="M", before=BASE, after=after)]
    result = select(changed, PASSING, COVERAGE.model_copy(update=update), (), ())
    assert result.whole
    assert result.reasons == (reason,)
