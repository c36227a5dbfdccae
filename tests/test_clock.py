"""Times as a person reads them (``repogate.clock.readable``): UTC to the minute, whatever the
stored shape (an aware or naive datetime, ISO 8601 with ``Z`` or an offset, epoch seconds)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from repogate.clock import readable

SHOWN = "2026-12-02 19:40 UTC"


@pytest.mark.parametrize(
    "stored",
    [
        datetime(2026, 12, 2, 19, 40, 12, tzinfo=UTC),
        datetime(2026, 12, 2, 21, 40, 12, tzinfo=timezone(timedelta(hours=2))),
        datetime(2026, 12, 2, 19, 40, 59),  # naive: stored as UTC
        "2026-12-02T19:40:12.345678+00:00",  # what the store writes (isoformat)
        "2026-12-02T19:40:12Z",
        "2026-12-02T14:40:12-05:00",
        "2026-12-02T19:40:12",
        1796240412,
        1796240412.9,
        "1796240412",  # SOURCE_DATE_EPOCH's shape
    ],
)
def test_every_stored_shape_reads_as_utc_to_the_minute(stored: object) -> None:
    assert readable(stored) == SHOWN  # type: ignore[arg-type]


@pytest.mark.parametrize("stored", ["unknown", "", "yesterday"])
def test_a_value_that_is_no_time_is_shown_as_it_is(stored: str) -> None:
    assert readable(stored) == stored
