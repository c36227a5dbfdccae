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


def monotonic() -> float:
    """Return a monotonic reading in seconds, for durations only."""
    return time.monotonic()
