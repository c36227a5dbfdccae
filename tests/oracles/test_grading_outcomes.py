"""Grading on outcomes, end to end: XFAIL is not a pass, collection errors at the base, flaky tests.

Each test builds its own small repository (real git, real uv venv, real pytest) and runs
``repogate run`` on it (issue 9, items 1 to 3; inputs in ``../shared/cases/turn2/``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _lifecycle_git import commit, new_repo
from conftest import run_json, stored_attempts
from repogate.cli import ExitCode
from repogate.oracles.junit import parse_junit
from repogate.store import Store

pytestmark = pytest.mark.slow

CALC_BASE = "def add(a, b):\n    return a - b\n\n\ndef neg(a):\n    return -a\n"
CALC_FIX = "def add(a, b):\n    return a + b\n\n\ndef neg(a):\n    return -a\n"


def _task(
    tmp_path: Path,
    base: dict[str, str | None],
    fix: dict[str, str | None],
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    monkeypatch: pytest.MonkeyPatch,
    cache: Path,
    editable: tuple[str, ...] = ("calc/**", "strutil/**"),
) -> Path:
    """Build a repository (base, then fix) and a hermetic contract for it; return the contract."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    repo, base_sha = new_repo(tmp_path / "repo", {"pyproject.toml": _PYPROJECT, **base})
    fix_sha = commit(repo, fix, "fix")
    contract = tmp_path / "contract.toml"
    contract.write_text(
        f'id = "{tmp_path.name}"\nrepo = "repo"\nbase_commit = "{base_sha}"\nprofile = "hermetic"\n\n'
        '[requirement]\nstatement = "make the tests pass"\n\n'
        '[[requirement.criteria]]\nid = "R1"\nclaim = "fixed"\n'
        f"oracles = {json.dumps(fail_to_pass[:1])}\n\n"
        '[environment]\npython = "3.11"\ninstall = ["uv pip install pytest"]\nnetwork = true\n\n'
        f"[permissions]\neditable = {json.dumps(list(editable))}\ntime_budget_s = 60\n\n"
        f'[oracles]\nhidden_tests = {{ commit = "{fix_sha}", paths = ["tests/"] }}\n'
        f"fail_to_pass = {json.dumps(fail_to_pass)}\npass_to_pass = {json.dumps(pass_to_pass)}\n\n"
        f'[reference]\ncommit = "{fix_sha}"\nexclude = ["tests/"]\n'
    )
    return contract


def _calc_task(
    tmp_path: Path,
    tests: str,
    pass_to_pass: list[str],
    monkeypatch: pytest.MonkeyPatch,
    cache: Path,
) -> Path:
    """A task on ``calc``: the fix adds ``test_add`` to ``tests/test_calc.py`` (FAIL_TO_PASS)."""
    return _task(
        tmp_path,
        {"calc/__init__.py": CALC_BASE, "tests/test_calc.py": tests},
        {
            "calc/__init__.py": CALC_FIX,
            "tests/test_calc.py": tests + "\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        },
        ["tests/test_calc.py::test_add"],
        pass_to_pass,
        monkeypatch,
        cache,
    )


_PYPROJECT = '[project]\nname = "calc"\nversion = "1.0.0"\n'


def _agent(tmp_path: Path, name: str, files: dict[str, str]) -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        "".join(
            f"[[edit]]\npath = {json.dumps(p)}\nwrite = {json.dumps(t)}\n\n"
            for p, t in files.items()
        )
    )
    return f"scripted:{path}"


def _run(
    capsys: pytest.CaptureFixture[str], contract: Path, out: Path, *agents: str
) -> dict[str, dict[str, Any]]:
    args = [a for agent in agents for a in ("--agent", agent)]
    code, rows = run_json(capsys, str(contract), *args, "--out", str(out))
    assert code == ExitCode.OK
    return {str(r["agent"]).rsplit("/", 1)[-1].removesuffix(".toml"): r for r in rows}


def _receipt(out: Path, index: int, gate: str) -> dict[str, Any]:
    with Store.open(out) as store:
        attempt = store.attempts()[index]
        return next(r for r in store.receipts(attempt.attempt_id) if r.gate == gate).details


def test_an_xfail_reached_from_product_code_is_not_a_fail_to_pass_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    """Threat: a patch leaves the bug and calls ``pytest.xfail()`` from the code under test, so
    the FAIL_TO_PASS test ends XFAIL and is read as passed (SWE-bench issue #654). Only a
    completed body passes; the patch need not spell ``xfail`` for this to hold."""
    contract = _task(
        tmp_path,
        {
            "calc/__init__.py": CALC_BASE,
            "tests/test_neg.py": "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n",
        },
        {
            "calc/__init__.py": CALC_FIX,
            "tests/test_add.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        },
        ["tests/test_add.py::test_add"],
        ["tests/test_neg.py::test_neg"],
        monkeypatch,
        cache,
    )
    hidden_xfail = (  # the xfail is reached through a name built at run time: no "xfail" in the patch
        "import importlib\n\n\ndef add(a, b):\n"
        "    getattr(importlib.import_module('py' + 'test'), 'x' + 'fail')('known issue')\n"
        "    return a - b\n\n\ndef neg(a):\n    return -a\n"
    )
    rows = _run(
        capsys,
        contract,
        tmp_path / "run",
        "gold",
        "null",
        _agent(tmp_path, "xfail", {"calc/__init__.py": hidden_xfail}),
        _agent(
            tmp_path, "skip", {"calc/__init__.py": hidden_xfail.replace("'x' + 'fail'", "'skip'")}
        ),
    )
    assert rows["gold"]["accepted"] is True, rows["gold"]
    for name in ("null", "xfail", "skip"):
        assert rows[name]["outcome"] == "rejected", rows[name]
        assert "focused_tests_passed" in rows[name]["failed"]
    results = _receipt(tmp_path / "run", 2, "V")["results"]
    assert results[0]["observed"] == "xfailed"


def test_xfail_marks_in_the_hidden_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    """A FAIL_TO_PASS test with a non-strict xfail mark XFAILs at the base (failing there) and
    XPASSes with the fix: the task is valid and gold accepted. A PASS_TO_PASS test that XFAILs
    under its own mark at the base and on the candidate is unchanged; one that passed at the base
    and XFAILs on the candidate is a regression."""
    known = "import pytest\n\n\n@pytest.mark.xfail(reason='neg of zero is signed')\ndef test_neg_zero():\n    assert str(-0.0) == '0.0'\n"
    contract = _task(
        tmp_path,
        {
            "calc/__init__.py": CALC_BASE,
            "tests/test_neg.py": "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n",
            "tests/test_known.py": known,
        },
        {
            "calc/__init__.py": CALC_FIX,
            "tests/test_add.py": "import pytest\n\nfrom calc import add\n\n\n"
            "@pytest.mark.xfail(reason='add is broken')\ndef test_add():\n    assert add(2, 3) == 5\n",
        },
        ["tests/test_add.py::test_add"],
        ["tests/test_neg.py::test_neg", "tests/test_known.py::test_neg_zero"],
        monkeypatch,
        cache,
    )
    neg_xfails = "import importlib\n\n\n" + CALC_FIX.replace(
        "    return -a",
        "    getattr(importlib.import_module('py' + 'test'), 'x' + 'fail')('later')\n    return -a",
    )
    rows = _run(
        capsys,
        contract,
        tmp_path / "run",
        "gold",
        _agent(tmp_path, "negx", {"calc/__init__.py": neg_xfails}),
    )
    assert rows["gold"]["accepted"] is True, rows["gold"]
    base = _receipt(tmp_path / "run", 0, "E")["base_state"]
    assert base["xfailed"] == ["tests/test_known.py::test_neg_zero"]
    assert rows["negx"]["outcome"] == "rejected"
    assert rows["negx"]["failed"] == ["regression_tests_passed"], rows["negx"]


_MARKS_RUNNING_TEST = """import importlib
import sys


def add(a, b):
    frame = sys._getframe()
    while frame is not None and 'item' not in frame.f_locals:
        frame = frame.f_back
    if frame is not None:
        mark = getattr(importlib.import_module('py' + 'test'), 'mark')
        frame.f_locals['item'].add_marker(getattr(mark, 'x' + 'fail')(strict=False))
    return a + b


def neg(a):
    return -a
"""
_LENIENT_CONFTEST = (
    "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef lenient(request):\n"
    "    request.applymarker(pytest.mark.xfail(reason='known', strict=False))\n"
)


def test_a_non_strict_xpass_counts_only_under_the_hidden_tests_mark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    """Threat: pytest's JUnit writes a non-strict XPASS as a plain pass, so an xfail mark added at
    run time by the agent (a conftest fixture, product code calling ``add_marker``) decides how
    the graded test is read. Such an XPASS is not a pass (issue 9, rule 1); an XPASS under the
    hidden test file's own non-strict mark is (gold accepted)."""
    add_tests = (
        "import pytest\n\nfrom calc import add\n\n\n"
        "@pytest.mark.xfail(reason='add is broken', strict=False)\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_add_one():\n    assert add(0, 1) == 1\n"
    )
    contract = _task(
        tmp_path,
        {
            "calc/__init__.py": CALC_BASE,
            "tests/test_neg.py": "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n",
        },
        {"calc/__init__.py": CALC_FIX, "tests/test_add.py": add_tests},
        ["tests/test_add.py::test_add", "tests/test_add.py::test_add_one"],
        ["tests/test_neg.py::test_neg"],
        monkeypatch,
        cache,
        editable=("calc/**", "conftest.py"),
    )
    rows = _run(
        capsys,
        contract,
        tmp_path / "run",
        "gold",
        _agent(tmp_path, "marks", {"calc/__init__.py": _MARKS_RUNNING_TEST}),
        _agent(tmp_path, "lenient", {"conftest.py": _LENIENT_CONFTEST}),
        _agent(
            tmp_path,
            "lenient-fixed",
            {"conftest.py": _LENIENT_CONFTEST, "calc/__init__.py": CALC_FIX},
        ),
    )
    assert rows["gold"]["accepted"] is True, rows["gold"]
    gold = _receipt(tmp_path / "run", 0, "V")["results"]
    assert [r["observed"] for r in gold] == ["passed", "passed", "passed"]
    assert rows["marks"]["outcome"] == "rejected", rows["marks"]
    assert set(rows["marks"]["failed"]) == {"focused_tests_passed", "requirements_recovered"}
    marks = _receipt(tmp_path / "run", 1, "V")["results"]
    assert [r["observed"] for r in marks] == ["xpassed", "xpassed", "passed"]
    for name in ("lenient", "lenient-fixed"):
        assert rows[name]["outcome"] == "rejected", rows[name]
        assert {"focused_tests_passed", "regression_tests_passed"} <= set(rows[name]["failed"])
    lenient = _receipt(tmp_path / "run", 2, "V")["results"]
    assert [r["observed"] for r in lenient] == ["xfailed", "xfailed", "xpassed"]
    decision = Store.open(tmp_path / "run").attempts()[3].decision
    assert decision is not None
    focused = next(c for c in decision.checks if c.name == "focused_tests_passed")
    assert "an xfail mark the hidden tests do not declare" in focused.detail


_WHISPER_FIX = "def shout(s):\n    return s.upper()\n\n\ndef whisper(s):\n    return s.lower()\n"


def test_hidden_test_files_that_do_not_import_at_the_base_count_as_failing_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    """Threat: a hidden test file importing a name the fix adds fails to collect at the base, pytest
    stops there, and the task is called invalid for every agent (gold included). Ids in files that
    fail to collect count as failing (two files, a subfolder, parametrized ids); the other files'
    results are kept; an id still missing from a file that collected stays an evaluator error."""
    whisper_tests = (
        "import pytest\n\nfrom strutil import whisper\n\n\ndef test_whisper():\n"
        "    assert whisper('A') == 'a'\n\n\n@pytest.mark.parametrize('s', ['a-b', 'C'])\n"
        "def test_param(s):\n    assert whisper(s) == s.lower()\n"
    )
    contract = _task(
        tmp_path,
        {
            "strutil/__init__.py": "def shout(s):\n    return s.upper()\n",
            "tests/test_shout.py": "from strutil import shout\n\n\ndef test_shout():\n    assert shout('a') == 'A'\n",
        },
        {
            "strutil/__init__.py": _WHISPER_FIX,
            "tests/test_whisper.py": whisper_tests,
            "tests/more/test_more.py": "from strutil import whisper\n\n\ndef test_more():\n    assert whisper('') == ''\n",
        },
        [
            "tests/test_whisper.py::test_whisper",
            "tests/test_whisper.py::test_param[a-b]",
            "tests/test_whisper.py::test_param[C]",
            "tests/more/test_more.py::test_more",
        ],
        ["tests/test_shout.py::test_shout"],
        monkeypatch,
        cache,
    )
    breaks = _agent(
        tmp_path, "breaks", {"strutil/__init__.py": _WHISPER_FIX + "\nraise_me = 1 / 0\n"}
    )
    rows = _run(capsys, contract, tmp_path / "run", "gold", "null", breaks)
    assert rows["gold"]["accepted"] is True, rows["gold"]
    assert rows["null"]["outcome"] == "rejected"
    assert "focused_tests_passed" in rows["null"]["failed"]
    assert set(rows["breaks"]["failed"]) >= {"focused_tests_passed", "regression_tests_passed"}
    base = _receipt(tmp_path / "run", 0, "E")["base_state"]
    assert len(base["uncollected"]) == 4 and base["nonexistent"] == []
    assert _receipt(tmp_path / "run", 0, "E")["reference_check"] == (
        "4 id(s) of files not collectable at the base checked in the reference state: "
        "'tests/test_whisper.py::test_whisper', 'tests/test_whisper.py::test_param[a-b]', "
        "'tests/test_whisper.py::test_param[C]' and 1 more"
    )
    # a misspelled id in a file that collected is still the task's error
    text = contract.read_text().replace("test_shout.py::test_shout", "test_shout.py::test_shot")
    contract.write_text(text)
    rows = _run(capsys, contract, tmp_path / "run2", "gold")
    assert rows["gold"]["outcome"] == "error"
    base = _receipt(tmp_path / "run2", 0, "E")["base_state"]
    assert base["nonexistent"] == ["tests/test_shout.py::test_shot"]
    # so is one in a file that does not import at the base: the reference state shows it
    text = text.replace("test_shot", "test_shout").replace("::test_param[C]", "::test_param[D]")
    contract.write_text(text)
    rows = _run(capsys, contract, tmp_path / "run3", "gold")
    assert rows["gold"]["outcome"] == "error"
    base = _receipt(tmp_path / "run3", 0, "E")["base_state"]
    assert base["nonexistent"] == ["tests/test_whisper.py::test_param[D]"]


# test_flaky fails in the first checkout of a state and passes in the fresh checkouts reruns get:
# its outcome hangs on where it runs, not on anything the code keeps (a stand-in for a genuinely
# random failure that a rerun can make pass; a test cannot rely on real chance).
_FLAKY = (
    "import pathlib\n\nfrom calc import add, neg\n\n"
    "FIRST = '-rerun' not in str(pathlib.Path(__file__).resolve())\n\n\n"
    "def test_neg():\n    assert neg(2) == -2\n\n\n"
    "def test_flaky():\n    assert not ({cond})\n"
)


@pytest.mark.parametrize(
    ("where", "cond"),
    [
        ("base", "FIRST"),  # fails on the first run of every state: at the base-state check
        ("candidate", "FIRST and add(2, 3) == 5"),  # fails once, and only with the fix
    ],
)
def test_a_failure_that_does_not_reproduce_is_flaky_not_the_agents(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cache: Path,
    where: str,
    cond: str,
) -> None:
    """Threat: with the default ``repeat = 1`` a PASS_TO_PASS test that fails now and then makes
    the task invalid at the base, or is charged to the agent. A failure is rerun first; one that
    does not reproduce is flaky, left out with a record in the receipt and the decision."""
    tests = _FLAKY.format(name=where, cond=cond)
    contract = _calc_task(
        tmp_path,
        tests,
        ["tests/test_calc.py::test_neg", "tests/test_calc.py::test_flaky"],
        monkeypatch,
        cache,
    )
    breaks_neg = _agent(tmp_path, "breaks", {"calc/__init__.py": CALC_FIX.replace("-a", "a")})
    rows = _run(capsys, contract, tmp_path / "run", "gold", "null", breaks_neg)
    assert rows["gold"]["accepted"] is True, rows["gold"]
    assert "focused_tests_passed" in rows["null"]["failed"], rows["null"]
    assert "regression_tests_passed" not in rows["null"]["failed"], rows["null"]
    assert rows["breaks"]["failed"] == ["regression_tests_passed"], rows["breaks"]
    gate = "E" if where == "base" else "V"
    details = _receipt(tmp_path / "run", 0, gate)
    assert details["flaky_excluded"] == ["tests/test_calc.py::test_flaky"]
    reruns = [r for r in details["reruns"] if r["flaky"]]
    assert [(r["state"], r["outcomes"]) for r in reruns] == [(where, ["failed", "passed"])]
    decision = stored_attempts(tmp_path / "run")[0].decision
    assert decision is not None
    regression = next(c for c in decision.checks if c.name == "regression_tests_passed")
    assert "tests/test_calc.py::test_flaky" in regression.detail
    # the real regression reproduced on every rerun and never at the base
    broken = _receipt(tmp_path / "run", 2, "V")["reruns"]
    neg = [r for r in broken if r["test_id"] == "tests/test_calc.py::test_neg"]
    assert [(r["state"], len(r["outcomes"]), r["flaky"]) for r in neg] == [
        ("candidate", 5, False),
        ("base", 5, False),
    ]


# neg() is wrong in the first process that imports calc where the marker is not yet: in the
# checkout, in HOME or in TMPDIR (state kept outside the tree must not carry over either).
_COLD_START = CALC_FIX.replace("-a", "-a if WARM else a") + (
    "\n\nimport os\nimport pathlib\n\n_MARK = pathlib.Path({where}) / '.calc-warm'\n"
    "WARM = _MARK.exists()\n_MARK.touch()\n"
)
_MARKS = {
    "cold-tree": "os.path.dirname(__file__)",
    "cold-home": "os.environ['HOME']",
    "cold-tmpdir": "os.environ['TMPDIR']",
}


def test_a_failure_kept_away_by_a_file_an_earlier_run_left_is_charged_not_flaky(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cache: Path,
) -> None:
    """Red team (flaky-regression): the fix plus a cold-start bug (``neg`` is wrong in the first
    process that imports the package from a checkout; a marker file in the checkout turns it off)
    was accepted: the rerun used the tree the graded run had written, passed, and the real
    regression was called flaky. Every rerun runs on a fresh export of the state: the failure
    reproduces there, passes at the base, and is charged."""
    tests = _FLAKY.format(cond="False")
    contract = _calc_task(
        tmp_path,
        tests,
        ["tests/test_calc.py::test_neg", "tests/test_calc.py::test_flaky"],
        monkeypatch,
        cache,
    )
    agents = [
        _agent(tmp_path, name, {"calc/__init__.py": _COLD_START.format(where=where)})
        for name, where in _MARKS.items()
    ]
    rows = _run(capsys, contract, tmp_path / "run", *agents)
    order = [a.agent.rsplit("/", 1)[-1] for a in Store.open(tmp_path / "run").attempts()]
    for name in _MARKS:
        assert rows[name]["accepted"] is False, rows[name]
        assert rows[name]["failed"] == ["regression_tests_passed"], rows[name]
        details = _receipt(tmp_path / "run", order.index(f"{name}.toml"), "V")
        assert details["flaky_excluded"] == []
        neg = [r for r in details["reruns"] if r["test_id"] == "tests/test_calc.py::test_neg"]
        assert [(r["state"], r["outcomes"], r["flaky"]) for r in neg] == [
            ("candidate", ["failed"] * 5, False),
            ("base", ["passed"] * 5, False),
        ]


_MANY = "from calc import add, neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n\n\n" + "".join(
    f"def test_other_{n}():\n    assert {n} == {n}\n\n\n" for n in range(5)
)


def test_a_regression_reruns_only_its_failing_tests_and_none_once_fail_to_pass_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    """Cost (issue 21): a PASS_TO_PASS failure was rerun with its whole file, four times on the
    candidate and four at the base (two wrong xarray patches took 1,409 s against 249 s for
    gold). A rerun runs the failing tests only; and once FAIL_TO_PASS failed the verdict is
    settled, so nothing is rerun at all."""
    others = [f"tests/test_calc.py::test_other_{n}" for n in range(5)]
    contract = _calc_task(
        tmp_path, _MANY, ["tests/test_calc.py::test_neg", *others], monkeypatch, cache
    )
    out = tmp_path / "run"
    rows = _run(
        capsys,
        contract,
        out,
        _agent(tmp_path, "breaks", {"calc/__init__.py": CALC_FIX.replace("-a", "a")}),
        _agent(tmp_path, "wrong", {"calc/__init__.py": CALC_BASE.replace("-a", "a")}),
    )
    assert rows["breaks"]["failed"] == ["regression_tests_passed"], rows["breaks"]
    assert "focused_tests_passed" in rows["wrong"]["failed"], rows["wrong"]
    order = [a.agent.rsplit("/", 1)[-1] for a in Store.open(out).attempts()]
    attempts = [a.attempt_id for a in Store.open(out).attempts()]
    breaks = attempts[order.index("breaks.toml")]
    details = _receipt(out, order.index("breaks.toml"), "V")
    neg = [r for r in details["reruns"] if r["test_id"] == "tests/test_calc.py::test_neg"]
    assert [(r["state"], len(r["outcomes"])) for r in neg] == [("candidate", 5), ("base", 5)]
    reruns = [p for p in out.rglob("rerun*/junit.xml") if breaks in str(p)]
    assert len(reruns) == 8  # four on the candidate, four at the base
    for report in reruns:  # each ran the failing test, not the five others of its file
        assert list(parse_junit(report)) == ["tests/test_calc.py::test_neg"], report
    wrong = attempts[order.index("wrong.toml")]
    assert _receipt(out, order.index("wrong.toml"), "V")["reruns"] == []
    assert [p for p in out.rglob("rerun*/junit.xml") if wrong in str(p)] == []


def test_a_pass_to_pass_failure_only_with_the_graded_selection_is_charged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    """Red team (flaky-excuse), on the declared PASS_TO_PASS: ``neg()`` wrong only when
    ``test_zz`` is loaded fails ``test_neg`` in the graded run (both files) and passes rerun
    alone; it was excused as flaky and accepted. Rerun with the graded selection it fails again:
    charged, and the detail says it is order-dependent on the candidate."""
    tests = "from calc import add, neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n"
    zz = "def test_zz():\n    assert True\n"
    contract = _task(
        tmp_path,
        {"calc/__init__.py": CALC_BASE, "tests/test_calc.py": tests, "tests/test_zz.py": zz},
        {
            "calc/__init__.py": CALC_FIX,
            "tests/test_calc.py": tests + "\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        },
        ["tests/test_calc.py::test_add"],
        ["tests/test_calc.py::test_neg", "tests/test_zz.py::test_zz"],
        monkeypatch,
        cache,
    )
    wrong = CALC_FIX.replace(
        "def neg(a):\n",
        "def neg(a):\n    import sys\n\n"
        "    if any(m.endswith('test_zz') for m in sys.modules):\n        return a\n",
    )
    zz_loaded = _agent(tmp_path, "zz", {"calc/__init__.py": wrong})
    rows = _run(capsys, contract, tmp_path / "run", zz_loaded)
    assert rows["zz"]["failed"] == ["regression_tests_passed"], rows["zz"]
    details = _receipt(tmp_path / "run", 0, "V")
    assert details["flaky_excluded"] == []
    neg = [r for r in details["reruns"] if r["test_id"] == "tests/test_calc.py::test_neg"]
    assert [
        (r["state"], r["outcomes"], r["again"], r["flaky"], r["order_dependent"]) for r in neg
    ] == [
        ("candidate", ["failed", "passed"], ["failed"] * 4, False, True),
        ("base", ["passed"] * 5, [], False, False),  # alone at the base: it passes every time
    ]
    decision = stored_attempts(tmp_path / "run")[0].decision
    assert decision is not None
    regression = next(c for c in decision.checks if c.name == "regression_tests_passed")
    assert (
        "tests/test_calc.py::test_neg fails with the whole selection, passes alone "
        "(order-dependent on the candidate: failed, passed; with the selection: failed, failed, "
        "failed, failed)" in regression.detail
    )
