"""Regressions outside the declared PASS_TO_PASS (issue 9, item 4), end to end.

SWE-bench-style PASS_TO_PASS lists only the tests of the test files the fix touches; a patch that
breaks a neighbouring file's tests must still fail ``regression_tests_passed``, because "preserve
previously passing behaviour" means every test that passed at the base. A contract may narrow the
set to the declared ids, and then the receipt and the decision say so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _lifecycle_git import commit, new_repo
from conftest import run_json, stored_attempts
from repogate.cli import ExitCode
from repogate.store import Store

pytestmark = pytest.mark.slow

BASE_CODE = """SEP = " "


def unit(name, short=False):
    if short:
        return name[0]
    return name


def describe(value, name):
    return str(value) + SEP + unit(name)
"""
FIXED_CODE = BASE_CODE.replace("short=False):", "short=False, plural=False):").replace(
    "    return name\n", "    return name + 's' if plural else name\n"
)
TESTS = {
    "tests/__init__.py": "",
    "tests/test_unit.py": (
        "from units import unit\n\n\ndef test_long():\n    assert unit('metre') == 'metre'\n\n\n"
        "def test_short():\n    assert unit('metre', short=True) == 'm'\n"
    ),
    "tests/test_describe.py": (
        "import pytest\n\nfrom units import describe\n\n\n"
        "@pytest.mark.parametrize('value, name, shown', [(1, 'metre', '1 metre'), "
        "(2, 'gram', '2 gram'), (3, 'second', '3 second')])\n"
        "def test_describe(value, name, shown):\n    assert describe(value, name) == shown\n"
    ),
}
HIDDEN = "\n\ndef test_plural():\n    assert unit('metre', plural=True) == 'metres'\n"


PYPROJECT = '[project]\nname = "units"\nversion = "1"\n'
DECLARED = ("tests/test_unit.py::test_long", "tests/test_unit.py::test_short")


def units_task(
    root: Path,
    files: dict[str, str],
    fixed: str,
    *,
    hidden: str = HIDDEN,
    permissions: str = 'editable = ["units/**"]\n',
    extra_oracles: str = "",
    pass_to_pass: tuple[str, ...] = DECLARED,
) -> Path:
    """Write the units task: a repository of ``files`` at the base, and its contract.

    The reference commit writes ``fixed`` to ``units/__init__.py`` and adds ``hidden`` to
    ``tests/test_unit.py`` (the hidden tests); ``permissions`` and ``extra_oracles`` are lines
    of those tables. Returns the contract's path.
    """
    repo, base = new_repo(root / "repo", files)
    fix = commit(
        repo,
        {"units/__init__.py": fixed, "tests/test_unit.py": TESTS["tests/test_unit.py"] + hidden},
    )
    declared = ", ".join(f'"{test}"' for test in pass_to_pass)
    contract = root / "contract.toml"
    contract.write_text(
        f'id = "units-plural"\nrepo = "repo"\nbase_commit = "{base}"\n\n'
        '[requirement]\nstatement = "unit() takes plural=True"\n\n'
        '[[requirement.criteria]]\nid = "R1"\nclaim = "plural adds an s"\n'
        'oracles = ["tests/test_unit.py::test_plural"]\n\n'
        '[environment]\ninstall = ["uv pip install pytest"]\n\n'
        f"[permissions]\n{permissions}time_budget_s = 60\n\n"
        f'[oracles]\n{extra_oracles}hidden_tests = {{ commit = "{fix}", paths = ["tests/"] }}\n'
        'fail_to_pass = ["tests/test_unit.py::test_plural"]\n'
        f"pass_to_pass = [{declared}]\n\n"
        f'[reference]\ncommit = "{fix}"\nexclude = ["tests/"]\n'
    )
    return contract


def scripted_row(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    contract: Path,
    edits: dict[str, str],
    name: str = "edits",
) -> dict[str, object]:
    """Run one scripted agent ``name`` writing ``edits`` (path -> text) on ``contract`` into
    ``root/run``; return its decision's JSON row."""
    agent = root / f"{name}.toml"
    agent.write_text(
        "\n".join(
            f"[[edit]]\npath = {json.dumps(path)}\nwrite = {json.dumps(text)}\n"
            for path, text in edits.items()
        )
    )
    status, rows = run_json(
        capsys, str(contract), "--agent", f"scripted:{agent}", "--out", str(root / "run")
    )
    assert status == ExitCode.OK
    (row,) = rows
    assert isinstance(row, dict)
    return row


def _task(
    root: Path,
    extra_oracles: str = "",
    base_code: str = BASE_CODE,
    more: dict[str, str] | None = None,
) -> Path:
    files = {"pyproject.toml": PYPROJECT, "units/__init__.py": base_code, **TESTS, **(more or {})}
    fixed = base_code.replace(BASE_CODE, FIXED_CODE)
    return units_task(root, files, fixed, extra_oracles=extra_oracles)


def _agent(root: Path, name: str, code: str) -> str:
    path = root / f"{name}.toml"
    path.write_text(f"[[edit]]\npath = 'units/__init__.py'\nwrite = {json.dumps(code)}\n")
    return f"scripted:{path}"


BREAKS_DESCRIBE = FIXED_CODE.replace("str(value) + SEP + unit(name)", "str(value) + unit(name)")
BREAKS_SEP = FIXED_CODE.replace('SEP = " "', 'SEP = "-"')


def _verdicts(
    capsys: pytest.CaptureFixture[str], contract: Path, out: Path, agents: list[str]
) -> dict[str, dict[str, Any]]:
    """Run ``agents`` (specs) on ``contract`` into ``out``; each row by its agent's file name
    (``gold``, ``breaks-sep.toml``). The run must end with exit 0."""
    code, rows = run_json(
        capsys, str(contract), *(w for a in agents for w in ("--agent", a)), "--out", str(out)
    )
    assert code == ExitCode.OK
    return {str(r["agent"]).split(":")[-1].rsplit("/", 1)[-1]: r for r in rows}


def _regression_receipt(out: Path, agent: str) -> dict[str, Any]:
    with Store.open(out) as store:
        attempt = next(a for a in store.attempts() if agent in a.attempt_id)
        receipt = next(r for r in store.receipts(attempt.attempt_id) if r.gate == "V-regression")
    return {"check": receipt.checks[0].model_dump(), **receipt.details}


def test_breaking_a_neighbouring_files_tests_is_a_regression(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A patch must not pass by breaking tests the task set did not declare: every test that
    passed at the base is in the regression set, whether coverage selects it or the whole suite
    runs because the change is at module level."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path)
    out = tmp_path / "run"
    verdict = _verdicts(
        capsys,
        contract,
        out,
        [
            "gold",
            _agent(tmp_path, "breaks-describe", BREAKS_DESCRIBE),
            _agent(tmp_path, "breaks-sep", BREAKS_SEP),
        ],
    )
    assert verdict["gold"]["outcome"] == "accepted", verdict["gold"]["failed"]
    for name in ("breaks-describe.toml", "breaks-sep.toml"):
        assert verdict[name]["outcome"] == "rejected"
        assert verdict[name]["failed"] == ["regression_tests_passed"]
        assert verdict[name]["resolved"] is True  # SWE-bench's verdict, kept beside ours
    decisions = {a.attempt_id: a.decision for a in stored_attempts(out)}
    # SWE-bench would call both breakers resolved: the declared ids all pass.
    assert all(d is not None and d.resolved for d in decisions.values())

    selected = _regression_receipt(out, "breaks-describe")
    assert selected["selection"] == {
        "whole": False,
        "reasons": [],
        "changed_units": ["units/__init__.py::unit", "units/__init__.py::describe"],
    }
    assert selected["failing"] == {
        "tests/test_describe.py::test_describe[1-metre-1 metre]": "failed",
        "tests/test_describe.py::test_describe[2-gram-2 gram]": "failed",
        "tests/test_describe.py::test_describe[3-second-3 second]": "failed",
    }
    assert selected["check"]["detail"].startswith(
        "3 tests passed at the base, not on the candidate: "
        "'tests/test_describe.py::test_describe[1-metre-1 metre]' (failed), "
        "'tests/test_describe.py::test_describe[2-gram-2 gram]' (failed), "
        "'tests/test_describe.py::test_describe[3-second-3 second]' (failed) ["
    )
    assert selected["coverage"] is True
    assert selected["base_suite_cached"] is True  # the gold attempt recorded the base first

    whole = _regression_receipt(out, "breaks-sep")
    assert whole["selection"]["whole"] is True
    assert whole["selection"]["reasons"] == [
        "module- or class-level code of units/__init__.py changed"
    ]
    assert len(whole["failing"]) == 3

    gold = _regression_receipt(out, "gold")
    assert gold["check"]["status"] == "passed"
    assert gold["base_passing"] == 5  # 2 declared + 3 in the neighbouring file


def test_a_contract_may_narrow_the_regression_set_and_it_is_recorded(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SWE-bench compatibility is a choice written in the contract, never a silent default."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path, 'regression = "declared"\n')
    out = tmp_path / "run"
    code, rows = run_json(
        capsys,
        str(contract),
        *("--agent", _agent(tmp_path, "breaks-describe", BREAKS_DESCRIBE)),
        *("--out", str(out)),
    )
    assert code == ExitCode.OK
    assert rows[0]["outcome"] == "accepted"
    record = _regression_receipt(out, "breaks-describe")
    assert record["scope"] == "declared"
    assert record["narrowed_by"] == "contract"
    decision = stored_attempts(out)[0].decision
    assert decision is not None and decision.resolved
    check = next(c for c in decision.checks if c.name == "regression_tests_passed")
    assert (
        'narrowed by the contract to the declared PASS_TO_PASS (oracles.regression = "declared")'
        in check.detail
    )


SHOWN_CODE = (
    BASE_CODE
    + """

class Reading:
    def __init__(self, value, name):
        self.value = value
        self.name = name


def shown(reading):
    custom = getattr(reading, "pretty", None)
    return custom() if custom else str(reading.value) + " " + reading.name
"""
)
SHOWN_TESTS = {
    "tests/test_shown.py": (
        "from units import Reading, shown\n\n\n"
        "def test_shown():\n    assert shown(Reading(2, 'gram')) == '2 gram'\n"
    )
}


def test_a_new_method_looked_up_by_name_is_not_inert(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Red team (regression-evasion): the fix plus a new method ``Reading.pretty``, which the
    base's ``shown()`` finds with ``getattr(reading, "pretty")``, broke the base-passing
    ``test_shown``; selection called the new method inert, ran no test and accepted the patch. A
    new name the base tree names anywhere (here as a string) runs the whole suite; one it does
    not name selects the tests that ran its class."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path, base_code=SHOWN_CODE, more=SHOWN_TESTS)
    fixed = SHOWN_CODE.replace(BASE_CODE, FIXED_CODE)
    method = "        self.name = name\n"
    looked_up = fixed.replace(
        method, method + "\n    def pretty(self):\n        return f'{self.name}: {self.value}'\n"
    )
    unnamed = fixed.replace(method, method + "\n    def plain(self):\n        return 1\n")
    out = tmp_path / "run"
    verdict = _verdicts(
        capsys,
        contract,
        out,
        [_agent(tmp_path, "looked-up", looked_up), _agent(tmp_path, "unnamed", unnamed)],
    )
    assert verdict["looked-up.toml"]["failed"] == ["regression_tests_passed"], verdict
    receipt = _regression_receipt(out, "looked-up")
    assert receipt["selection"]["whole"] is True
    assert receipt["selection"]["reasons"] == [
        "units/__init__.py: new Reading.pretty: the base names 'pretty' (it may be looked up by "
        "name: getattr, a dispatch table, a registry, an entry point)"
    ]
    assert receipt["failing"] == {"tests/test_shown.py::test_shown": "failed"}
    assert verdict["unnamed.toml"]["outcome"] == "accepted", verdict
    receipt = _regression_receipt(out, "unnamed")
    assert receipt["selection"]["whole"] is False
    assert receipt["selection"]["changed_units"] == [
        "units/__init__.py::unit",
        "units/__init__.py::Reading.plain (new, in class Reading)",
    ]
    # the 3 test_describe cases ran unit(); test_shown ran Reading.__init__, so its class
    assert receipt["selected"] == 4


ORDER_DEPENDENT = {  # test_second passes only after test_first ran in the same session
    "tests/test_order.py": (
        "from units import unit\n\nSEEN = []\n\n\ndef test_first():\n    SEEN.append(1)\n\n\n"
        "def test_second_after_the_first():\n    assert SEEN and unit('gram') == 'gram'\n"
    )
}


def test_a_base_passing_test_that_fails_alone_at_the_base_is_not_charged(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An order-dependent test passes in the base's whole-suite run and fails when coverage
    selects it alone; charging that to the candidate rejected a correct patch (real case:
    pylint-dev__pylint-6506, whose own reference failed two such tests). A failure that
    reproduces on the candidate is run the same way at the base, and one that fails there too
    is left out with a record; a real regression (passing alone at the base) is still charged."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path, more=ORDER_DEPENDENT)
    out = tmp_path / "run"
    verdict = _verdicts(
        capsys, contract, out, ["gold", _agent(tmp_path, "breaks-describe", BREAKS_DESCRIBE)]
    )
    assert verdict["gold"]["outcome"] == "accepted", verdict["gold"]["failed"]
    gold = _regression_receipt(out, "gold")
    assert gold["check"]["status"] == "passed"
    assert gold["failing_alone_at_base"] == ["tests/test_order.py::test_second_after_the_first"]
    assert verdict["breaks-describe.toml"]["failed"] == ["regression_tests_passed"]
    broken = _regression_receipt(out, "breaks-describe")  # it changes unit() too: both selected
    assert "tests/test_describe.py::test_describe[2-gram-2 gram]" in broken["failing"]
    assert "tests/test_order.py::test_second_after_the_first" not in broken["failing"]
    assert broken["failing_alone_at_base"] == ["tests/test_order.py::test_second_after_the_first"]


CONTEXT_TESTS = {
    "tests/test_state.py": (  # sorted after test_describe.py: runs after it in the whole suite
        "from units import unit\n\n\ndef test_a_short():\n    assert unit('second', short=True)"
        " == 's'\n\n\ndef test_b_gram():\n    assert unit('gram') == 'gram'\n"
    ),
    "tests/test_zz.py": "def test_zz():\n    assert True\n",
    # fails in the candidate's first regression run only (its tree is named "-selected-"), passes
    # in every rerun, alone or with the same selection: a stand-in for a random failure (the
    # sandbox gives each run fresh files, so no counter can outlive a run)
    "tests/test_flaky.py": (
        "import pathlib\n\nfrom units import unit\n\n"
        "WHERE = str(pathlib.Path(__file__).resolve())\n"
        "FIRST = '-selected-' in WHERE and '-rerun' not in WHERE\n\n\n"
        "def test_flaky():\n    assert unit('metre') == 'metre' and not FIRST\n"
    ),
}
# wrong only when another test module is loaded in the same session (the red team's add())
ZZ_LOADED = FIXED_CODE.replace(
    'SEP = " "',
    'import sys\n\nSEP = " "',
).replace(
    "    if short:\n",
    "    if name == 'gram' and any(m.endswith('test_zz') for m in sys.modules):\n"
    "        return 'g'\n    if short:\n",
)
# wrong only after an earlier test of the same file called unit(short=True): module-level state
POLLUTED = FIXED_CODE.replace('SEP = " "', 'SEP = " "\n_SHORT = []').replace(
    "    if short:\n",
    "    if name == 'gram' and _SHORT:\n        return 'g'\n    if short:\n"
    "        _SHORT.append(name)\n",
)


def test_a_failure_only_in_its_selection_is_charged_and_only_a_same_selection_flip_is_flaky(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Red team (flaky-excuse): a candidate whose ``unit('gram')`` is wrong only when
    ``test_zz`` is loaded failed ``test_describe[2-gram-2 gram]`` in the whole-suite regression
    run, passed when rerun alone, and was excluded as flaky: ACCEPTED, the detail silent. A test
    that passes alone is now run again with the selection it failed in; failing there again it
    is charged as order-dependent on the candidate. So is a test failing only after an earlier
    test of its file polluted the candidate's module state. A test that flips under the same
    selection is still flaky, left out, and the detail says so."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path, more=CONTEXT_TESTS)
    out = tmp_path / "run"
    verdict = _verdicts(
        capsys,
        contract,
        out,
        ["gold", _agent(tmp_path, "zz-loaded", ZZ_LOADED), _agent(tmp_path, "polluted", POLLUTED)],
    )

    zz = _regression_receipt(out, "zz-loaded")
    assert verdict["zz-loaded.toml"]["failed"] == ["regression_tests_passed"], zz
    gram = "tests/test_describe.py::test_describe[2-gram-2 gram]"
    assert zz["failing"] == {gram: "failed", "tests/test_state.py::test_b_gram": "failed"}
    assert zz["order_dependent_on_candidate"] == [gram, "tests/test_state.py::test_b_gram"]
    flaky = "'tests/test_flaky.py::test_flaky'"
    assert zz["flaky_excluded"] == ["tests/test_flaky.py::test_flaky"]  # it flips for everyone
    assert zz["check"]["detail"].endswith(
        f"; left out as flaky (failed, then passed with the same selection): {flaky}"
    )
    assert zz["check"]["detail"].startswith(
        f"2 tests fail with the whole selection, pass alone (order-dependent on the candidate): "
        f"{gram!r} (failed), 'tests/test_state.py::test_b_gram' (failed) ["
    )
    # selected, twice alone, twice with the same selection, that selection once at the base
    assert [r["status"] for r in zz["runs"]] == ["ok"] * 6
    assert zz["failing_alone_at_base"] == zz["failing_with_selection_at_base"] == []

    polluted = _regression_receipt(out, "polluted")
    assert verdict["polluted.toml"]["failed"] == ["regression_tests_passed"], polluted
    assert polluted["failing"] == {"tests/test_state.py::test_b_gram": "failed"}
    assert polluted["order_dependent_on_candidate"] == ["tests/test_state.py::test_b_gram"]

    gold = _regression_receipt(out, "gold")
    assert verdict["gold"]["outcome"] == "accepted", (verdict["gold"], gold)
    assert gold["flaky_excluded"] == ["tests/test_flaky.py::test_flaky"]
    assert gold["order_dependent_on_candidate"] == []
    assert gold["check"]["detail"].endswith(
        "; left out as flaky (failed, then passed with the same selection): "
        "'tests/test_flaky.py::test_flaky'"
    )
