"""Dataset ids as SWE-bench's own log parser made them: cut at a blank, path options shortened.

SWE-bench's published instances carry ids read off ``pytest -rA`` lines as the first run of
non-blank characters (``swebench/harness/log_parsers/python.py``), so a parameter holding a blank
is cut there (flask's ``tests/test_cli.py::test_locate_app[cliapp.factory-``). They are matched as
SWE-bench's grading matches them; one that matches nothing is named as cut, never a crash.
"""

from __future__ import annotations

from pathlib import Path

from repogate.oracles.grading import base_state_check, grade
from repogate.oracles.junit import TestOutcome, match_ids, parse_junit, swebench_forms
from repogate.tasks._outcomes import missing_detail, resolve_ids

REAL = Path(__file__).parent / "junit_dialects" / "pytest-8.3.4.xml"
FLASK_CUT = "tests/test_cli.py::test_locate_app[cliapp.factory-"
FLASK_FULL = 'tests/test_cli.py::test_locate_app[cliapp.factory- create_app2("foo", "bar") -spam]'


def test_a_cut_id_matches_the_real_report_of_its_test() -> None:
    """Real pytest output (8.3.4): a parameter starting with a blank is cut right at ``[``."""
    outcomes = parse_junit(REAL)
    cut = "test_sample.py::test_param["
    full = 'test_sample.py::test_param[ create_app2("foo", "bar") ]'
    assert match_ids([cut], outcomes) == {cut: full}
    graded = grade(outcomes, [cut], [])
    assert graded.focused_ok
    assert graded.results[0].matched_id == full


def test_the_flask_shape() -> None:
    assert swebench_forms(FLASK_FULL) == {FLASK_CUT}
    assert match_ids([FLASK_CUT], {FLASK_FULL: "passed"}) == {FLASK_CUT: FLASK_FULL}


def test_several_tests_of_one_cut_form_pass_only_when_all_pass() -> None:
    """A cut id may name several tests; SWE-bench's log lists each, so the worst decides."""
    outcomes: dict[str, TestOutcome] = {
        "t.py::test_x[a b]": "passed",
        "t.py::test_x[a c]": "failed",
    }
    assert match_ids(["t.py::test_x[a"], outcomes) == {"t.py::test_x[a": "t.py::test_x[a c]"}
    assert not grade(outcomes, ["t.py::test_x[a"], []).focused_ok
    assert grade({**outcomes, "t.py::test_x[a c]": "passed"}, ["t.py::test_x[a"], []).focused_ok
    # without outcomes nothing says which one stands for the others: no guess
    assert match_ids(["t.py::test_x[a"], list(outcomes)) == {"t.py::test_x[a": None}


def test_requests_and_pylint_path_options_are_shortened() -> None:
    """``parse_log_pytest_options`` (requests, pylint, pydicom) keeps a path option's last part."""
    full = "tests/test_x.py::test_file[/tmp/pytest-1/data/sample.py]"
    assert match_ids(["tests/test_x.py::test_file[/sample.py]"], [full]) == {
        "tests/test_x.py::test_file[/sample.py]": full
    }
    # a URL-ish option (``//``) or a glob is left alone, as there
    assert swebench_forms("t.py::test_u[//host/a]") == {"t.py::test_u[//host/a]"}
    assert swebench_forms("t.py::test_g[/a/*.py]") == {"t.py::test_g[/a/*.py]"}


def test_pytest3_instance_part_is_matched() -> None:
    assert match_ids(["t.py::TestA::()::test_b"], ["t.py::TestA::test_b"]) == {
        "t.py::TestA::()::test_b": "t.py::TestA::test_b"
    }


def test_a_whole_id_never_matches_a_longer_one() -> None:
    """Only an id with an unclosed ``[`` can be a cut one: ``test_x`` is not ``test_x[a b]``."""
    assert match_ids(["t.py::test_x"], {"t.py::test_x[a b]": "passed"}) == {"t.py::test_x": None}
    assert match_ids(["t.py::test_x[a"], {"t.py::test_x[ab]": "passed"}) == {"t.py::test_x[a": None}


def test_a_cut_id_matching_nothing_is_named_in_the_reason() -> None:
    check = base_state_check({"t.py::test_other": "failed"}, ["t.py::test_x[a"], [])
    assert not check.valid
    assert check.nonexistent == ("t.py::test_x[a",)
    assert check.reasons[-1] == (
        "1 of them cut at a blank as SWE-bench's log parser cuts ids, matching no test of that "
        "form: 't.py::test_x[a'"
    )
    assert missing_detail(["t.py::test_x[a", "t.py::test_y"]) == (
        "2 declared id(s) are not in the collected suite: 't.py::test_x[a', 't.py::test_y'; "
        "1 of them cut at a blank as SWE-bench's log parser cuts ids, and no reported id has "
        "that form: 't.py::test_x[a'"
    )
    assert "cut" not in missing_detail(["t.py::test_y"])


def test_many_declared_ids_not_collected_are_named_first_three_and_counted() -> None:
    """Task validation's ``ids_missing`` named one id (``e.g.``) of however many."""
    missing = [f"t.py::test_{i}[a" for i in range(5)] + ["t.py::test_z\n"]
    assert missing_detail(missing) == (
        "6 declared id(s) are not in the collected suite: 't.py::test_0[a', 't.py::test_1[a', "
        "'t.py::test_2[a' and 3 more; 5 of them cut at a blank as SWE-bench's log parser cuts "
        "ids, and no reported id has that form: 't.py::test_0[a', 't.py::test_1[a', "
        "'t.py::test_2[a' and 2 more"
    )


def test_validation_resolves_a_cut_id_to_its_worst_test() -> None:
    reported: dict[str, TestOutcome] = {
        "t.py::test_x[a b]": "passed",
        "t.py::test_x[a c]": "failed",
    }
    resolved, missing, ambiguous = resolve_ids(["t.py::test_x[a", "t.py::test_x[z"], reported)
    assert resolved == {"t.py::test_x[a": "t.py::test_x[a c]"}
    assert (missing, ambiguous) == (["t.py::test_x[z"], [])


def test_an_id_holding_another_machines_checkout_path_is_matched_by_its_file() -> None:
    """pylint-7080's PASS_TO_PASS names SWE-bench's temporary checkout; ours is elsewhere (and
    differs between repogate's own fresh trees): the directories vary, the file named does not."""
    theirs = (
        "tests/test_self.py::TestRunTC::test_stdin[/n/fs/p-swe-bench/temp/pylint/tmpr6zb6auz/"
        "pylint-dev__pylint__2.15/tests/mymodule.py-mymodule-/n/fs/p-swe-bench/temp/pylint/"
        "tmpr6zb6auz/pylint-dev__pylint__2.15/tests/mymodule.py]"
    )
    ours = (
        "tests/test_self.py::TestRunTC::test_stdin[/tmp/rg/base-hidden/tests/mymodule.py-mymodule-"
        "/tmp/rg/base-hidden/tests/mymodule.py]"
    )
    other = "tests/test_self.py::TestRunTC::test_stdin[mymodule.py-mymodule-mymodule.py]"
    assert match_ids([theirs], {ours: "passed", other: "passed"}) == {theirs: ours}
    # another file's test is not matched
    elsewhere = ours.replace("mymodule.py", "othermodule.py")
    assert match_ids([theirs], {elsewhere: "passed"}) == {theirs: None}
