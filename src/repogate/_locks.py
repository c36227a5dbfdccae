"""Cache entries shared by concurrent workers: one builder under a file lock, atomic writes.

Two workers (processes on one machine, or nodes sharing a cache folder) may want the same cache
entry at once: an environment, a base-state result, the sentinel's real-history results. The first
takes ``fcntl.flock`` on a lock file next to the entry and builds it; the other waits on the lock,
then finds the entry made and reads it. An entry is written to a temporary file and renamed into
place, so a reader never sees half of one, even after a kill -9 mid-write.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created with its folder) while the block runs.

    The lock is released when the block ends or the process dies, so a killed builder never
    leaves a stale lock behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` whole or not at all.

    Through a fresh temporary file in its folder and a rename: a reader never sees half of it,
    and a full disk or a kill -9 mid-write leaves the old file (or none), never a torn one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
