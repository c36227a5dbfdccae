"""Red team red37: whether a changed changelog-like document is named by Python was read from the
tree the graded run's test-time code had written.

A changed ``CHANGES.rst`` that no Python file names is inert for regression selection (no test
selected by it). The check read the graded run's tree, which the candidate's code can rewrite
while the tests run: its fixed ``unit()`` dropped the name from the module that reads the file
(or deleted that module), the edited changelog then selected no test, and the base-passing test
of what the module reads from it was never run: ACCEPTED though it fails on the candidate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_regression_set import BASE_CODE, FIXED_CODE, HIDDEN, TESTS, _regression_receipt

from _lifecycle_git import commit, new_repo
from conftest import run_json
from repogate.cli import ExitCode

pytestmark = pytest.mark.slow

LATEST = """

def latest():
    import pathlib

    here = pathlib.Path(__file__).resolve().parent.parent
    return (here / "CHANGES.rst").read_text().split()[0]
"""
LATEST_TEST = "from units import latest\n\n\ndef test_latest():\n    assert latest() == '1.0'\n"


def _task(root: Path) -> Path:
    repo, base = new_repo(
        root / "repo",
        {
            "pyproject.toml": '[project]\nname = "units"\nversion = "1"\n',
            "units/__init__.py": BASE_CODE + LATEST,
            "CHANGES.rst": "1.0\n\nFirst release.\n",
            "NEWS.rst": "Nothing yet.\n",
            "tests/test_latest.py": LATEST_TEST,
            **TESTS,
        },
    )
    fix = commit(
        repo,
        {
            "units/__init__.py": FIXED_CODE + LATEST,
            "tests/test_unit.py": TESTS["tests/test_unit.py"] + HIDDEN,
        },
    )
    contract = root / "contract.toml"
    contract.write_text(
        f'id = "units-plural"\nrepo = "repo"\nbase_commit = "{base}"\n\n'
        '[requirement]\nstatement = "unit() takes plural=True"\n\n'
        '[[requirement.criteria]]\nid = "R1"\nclaim = "plural adds an s"\n'
        'oracles = ["tests/test_unit.py::test_plural"]\n\n'
        '[environment]\ninstall = ["uv pip install pytest"]\n\n'
        '[permissions]\neditable = ["units/**", "CHANGES.rst", "NEWS.rst"]\ntime_budget_s = 60\n\n'
        f'[oracles]\nhidden_tests = {{ commit = "{fix}", paths = ["tests/"] }}\n'
        'fail_to_pass = ["tests/test_unit.py::test_plural"]\n'
        'pass_to_pass = ["tests/test_unit.py::test_long", "tests/test_unit.py::test_short"]\n\n'
        f'[reference]\ncommit = "{fix}"\nexclude = ["tests/"]\n'
    )
    return contract


# Run by the fixed unit() during the graded run, in the graded tree: the name leaves the tree.
REWRITE = """    import pathlib

    me = pathlib.Path(__file__)
    me.write_text(me.read_text().replace("CHANGES" + ".rst", "CHANGES" "" + "' '.rst"))
"""
DELETE = """    import pathlib

    pathlib.Path(__file__).unlink(missing_ok=True)
"""


@pytest.mark.parametrize(
    "hide", ["", REWRITE, DELETE], ids=["leaves-it", "rewrites-the-module", "deletes-it"]
)
def test_a_document_named_in_the_committed_tree_selects_the_whole_suite(
    tmp_path: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    hide: str,
) -> None:
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path)
    code = (FIXED_CODE + LATEST).replace(
        "def unit(name, short=False, plural=False):\n",
        "def unit(name, short=False, plural=False):\n" + hide,
    )
    assert code.count("def unit(name, short=False, plural=False):\n" + hide) == 1
    agent = tmp_path / "bumps.toml"
    agent.write_text(
        f"[[edit]]\npath = 'units/__init__.py'\nwrite = {json.dumps(code)}\n\n"
        "[[edit]]\npath = 'CHANGES.rst'\nwrite = '2.0\\n\\nPlural units.\\n\\n1.0\\n'\n"
    )
    out = tmp_path / "run"
    status, rows = run_json(
        capsys, str(contract), "--agent", f"scripted:{agent}", "--out", str(out)
    )
    assert status == ExitCode.OK
    assert rows[0]["failed"] == ["regression_tests_passed"], rows
    receipt = _regression_receipt(out, "bumps")
    assert receipt["failing"] == {"tests/test_latest.py::test_latest": "failed"}
    assert receipt["selection"]["whole"] is True


def test_a_document_nothing_names_stays_inert(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The names are still looked up (in a clean tree): a changelog no Python file names selects
    nothing, and the fix with it is accepted."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path)
    agent = tmp_path / "news.toml"
    agent.write_text(
        f"[[edit]]\npath = 'units/__init__.py'\nwrite = {json.dumps(FIXED_CODE + LATEST)}\n\n"
        "[[edit]]\npath = 'NEWS.rst'\nwrite = 'Plural units.\\n'\n"
    )
    out = tmp_path / "run"
    status, rows = run_json(
        capsys, str(contract), "--agent", f"scripted:{agent}", "--out", str(out)
    )
    assert status == ExitCode.OK
    assert rows[0]["outcome"] == "accepted", rows
    receipt = _regression_receipt(out, "news")
    assert receipt["selection"] == {
        "whole": False,
        "reasons": [],
        "changed_units": ["units/__init__.py::unit"],
    }
