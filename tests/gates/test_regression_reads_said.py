"""Red team rt32: the regression receipt says whether the base suite's reads were traced.

Without a read trace (a session of the base-suite record that gave a usable report carried none),
``suite_oracle_edits`` finds nothing: a candidate rewriting a data file only the base's passing
tests read passes unseen. That is now said in the receipt's details, not left silent.
"""

from __future__ import annotations

from repogate.gates.regression import grade, start
from repogate.oracles.base_suite import BaseSuite
from repogate.oracles.graded_reads import TracedReads
from repogate.oracles.selection import Selection

SELECTION = Selection(whole=True, reasons=("x changed",), tests=("t.py::a",), changed_units=())


def _suite(reads: TracedReads | None) -> BaseSuite:
    return BaseSuite(
        status="ok",
        passing=("t.py::a",),
        outcomes_digest=None,
        duration_s=0.0,
        coverage=None,
        reads=reads,
    )


def test_an_untraced_base_suite_is_said() -> None:
    observed = grade(start(_suite(None), SELECTION, {"t.py::a": "passed"}, ()))
    assert observed.checks[0].status == "passed"
    assert observed.details["base_suite_reads"] == (
        "not traced: data files only the base's passing tests read are not checked"
    )


def test_a_traced_base_suite_is_said() -> None:
    reads = TracedReads(test=("tests/data/x.json",), product=())
    observed = grade(start(_suite(reads), SELECTION, {"t.py::a": "passed"}, ()))
    assert observed.details["base_suite_reads"] == "traced"
