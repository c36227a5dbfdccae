"""The JUnit reader against real reports of every pytest generation (3.x to 8.x).

The fixtures under ``junit_dialects/`` were written by real pytest runs
(``scripts/junit_dialects.py`` regenerates them; each file names the pytest that wrote it): the
report, and pytest's own verdict per node id from its ``pytest_report_teststatus`` hook. The reader
must agree with pytest itself, whatever dialect its JUnit writer speaks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repogate.oracles.junit import TestOutcome, parse_junit

FIXTURES = Path(__file__).parent / "junit_dialects"
VERSIONS = ("3.5.1", "4.6.11", "5.4.3", "6.2.5", "7.4.4", "8.3.4")


def _pytest_verdict(version: str) -> dict[str, TestOutcome]:
    """pytest's own categories, in the reader's terms: a non-strict XPASS is a pass (no plugin
    marked it), and pytest 3's ``Class::()::test`` node ids lose the instance part as pytest 4
    dropped it."""
    seen: dict[str, str] = json.loads((FIXTURES / f"pytest-{version}.json").read_text())
    rename = {"xpassed": "passed"}
    return {
        test_id.replace("::()::", "::"): rename.get(category, category)  # type: ignore[misc]
        for test_id, category in seen.items()
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_reader_agrees_with_pytest_itself(version: str) -> None:
    """An XFAIL must never be read as a failure, nor a strict XPASS as anything but one: a false
    rejection (pytest 3.5's typeless ``<skipped message="expected test failure">``) or a false
    pass."""
    got = parse_junit(FIXTURES / f"pytest-{version}.xml")
    assert got == _pytest_verdict(version)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_shape_is_covered_in_each_generation(version: str) -> None:
    outcomes = set(_pytest_verdict(version).values())
    assert outcomes == {"passed", "failed", "error", "skipped", "xfailed"}
    got = parse_junit(FIXTURES / f"pytest-{version}.xml")
    assert got["test_sample.py::test_xfail_mark"] == "xfailed"
    assert got["test_sample.py::test_xfail_call"] == "xfailed"
    assert got["test_sample.py::test_xpass_strict"] == "failed"
    assert got["test_sample.py::test_xfail_wrong_raises"] == "failed"
    assert got['test_sample.py::test_param[ create_app2("foo", "bar") ]'] == "passed"
    assert got["test_sample.py::test_param[x::y]"] == "passed"
    assert got["test_broken.py"] == "error"
