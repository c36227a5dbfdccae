"""Red team red37: whether a changed changelog-like document is named by Python was read from the
tree the graded run's test-time code had written.

A changed ``CHANGES.rst`` that no Python file names is inert for regression selection (no test
selected by it). The check read the graded run's tree, which the candidate's code can rewrite
while the tests run: its fixed ``unit()`` dropped the name from the module that reads the file
(or deleted that module), the edited changelog then selected no test, and the base-passing test
of what the module reads from it was never run: ACCEPTED though it fails on the candidate.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_regression_set import (
    BASE_CODE,
    FIXED_CODE,
    PYPROJECT,
    TESTS,
    _regression_receipt,
    scripted_row,
    units_task,
)

pytestmark = pytest.mark.slow

LATEST = """

def latest():
    import pathlib

    here = pathlib.Path(__file__).resolve().parent.parent
    return (here / "CHANGES.rst").read_text().split()[0]
"""
LATEST_TEST = "from units import latest\n\n\ndef test_latest():\n    assert latest() == '1.0'\n"


def _task(root: Path) -> Path:
    files = {
        "pyproject.toml": PYPROJECT,
        "units/__init__.py": BASE_CODE + LATEST,
        "CHANGES.rst": "1.0\n\nFirst release.\n",
        "NEWS.rst": "Nothing yet.\n",
        "tests/test_latest.py": LATEST_TEST,
        **TESTS,
    }
    editable = 'editable = ["units/**", "CHANGES.rst", "NEWS.rst"]\n'
    return units_task(root, files, FIXED_CODE + LATEST, permissions=editable)


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
    edits = {"units/__init__.py": code, "CHANGES.rst": "2.0\n\nPlural units.\n\n1.0\n"}
    row = scripted_row(capsys, tmp_path, contract, edits, "bumps")
    assert row["failed"] == ["regression_tests_passed"], row
    receipt = _regression_receipt(tmp_path / "run", "bumps")
    assert receipt["failing"] == {"tests/test_latest.py::test_latest": "failed"}
    assert receipt["selection"]["whole"] is True


def test_a_document_nothing_names_stays_inert(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The names are still looked up (in a clean tree): a changelog no Python file names selects
    nothing, and the fix with it is accepted."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path)
    edits = {"units/__init__.py": FIXED_CODE + LATEST, "NEWS.rst": "Plural units.\n"}
    row = scripted_row(capsys, tmp_path, contract, edits, "news")
    assert row["outcome"] == "accepted", row
    receipt = _regression_receipt(tmp_path / "run", "news")
    assert receipt["selection"] == {
        "whole": False,
        "reasons": [],
        "changed_units": ["units/__init__.py::unit"],
    }
