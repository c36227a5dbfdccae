"""Ids that embed run-varying values (marshmallow parametrizes with datetime.now())."""

from __future__ import annotations

from repogate.gates.sentinel._history import regressions
from repogate.oracles.junit import match_ids

TODAY = "tests/test_deser.py::test_invalid_datetime[11-29-2026 12:43:48]"
TOMORROW = "tests/test_deser.py::test_invalid_datetime[11-30-2026 09:01:02]"


def test_us_style_dates_match_across_days() -> None:
    assert match_ids([TODAY], [TOMORROW]) == {TODAY: TOMORROW}


def test_sentinel_does_not_call_a_renamed_volatile_id_a_regression() -> None:
    """A test whose id carries the clock is the same test in history and on the replayed state."""
    history = {TODAY: "passed", "tests/test_deser.py::test_plain": "passed"}
    replayed = {TOMORROW: "passed", "tests/test_deser.py::test_plain": "failed"}
    assert regressions(history, replayed, ["tests/test_deser.py"]) == (
        "tests/test_deser.py::test_plain",
    )
