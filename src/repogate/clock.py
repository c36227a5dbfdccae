"""The one place repogate reads time, so receipts can be made deterministic in tests.

Set ``SOURCE_DATE_EPOCH`` (seconds since the Unix epoch, as reproducible-builds.org defines it) to
freeze the wall clock that stamps receipts; durations always come from a monotonic clock.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime


def now() -> datetime:
    """Return the current wall time in UTC, or ``SOURCE_DATE_EPOCH`` when it is set."""
    fixed = os.environ.get("SOURCE_DATE_EPOCH")
    if fixed is not None and fixed.strip().isdigit():
        return datetime.fromtimestamp(int(fixed), tz=UTC)
    return datetime.now(tz=UTC)


def readable(moment: datetime | str | float) -> str:
    """Return ``moment`` as a person reads it: UTC to the minute, ``2026-12-02 19:40 UTC``.

    Args:
        moment: an aware datetime (any offset), a naive one (taken as UTC, as the store writes
            UTC), ISO 8601 text (``Z`` or an offset; none is UTC) or seconds since the Unix
            epoch (a number or its digits, as ``SOURCE_DATE_EPOCH``).

    Returns:
        The UTC time to the minute; text that is no time (``unknown``) as it is.
    """
    when: datetime
    if isinstance(moment, datetime):
        when = moment
    elif isinstance(moment, int | float):
        when = datetime.fromtimestamp(moment, tz=UTC)
    elif moment.strip().isdigit():
        when = datetime.fromtimestamp(int(moment), tz=UTC)
    else:
        try:
            when = datetime.fromisoformat(moment.strip())
        except ValueError:
            return moment
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return when.strftime("%Y-%m-%d %H:%M UTC")


def monotonic() -> float:
    """Return a monotonic reading in seconds, for durations only."""
    return time.monotonic()
