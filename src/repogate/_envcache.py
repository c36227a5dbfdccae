"""The environment cache's mechanics: one lock per cache entry, and a fingerprint of a venv's files.

A build holds the entry's lock (``fcntl.flock`` on ``<key>.lock``) so two attempts never build one
venv at once; the fingerprint (path, size, mtime, mode of every entry) written with a finished
build tells a later attempt whether anything wrote into the venv since.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path


def fingerprint(venv: Path) -> str:
    """Return sha256 over (path, size, mtime, mode) of every entry under ``venv`` (no symlinks)."""
    rows: list[str] = []
    for folder, dirs, files in os.walk(venv):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            st = path.lstat()
            rows.append(f"{path.relative_to(venv)}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_mode}")
    rows.sort()
    return hashlib.sha256("\n".join(rows).encode("utf-8", "surrogateescape")).hexdigest()


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (made, with its folder, when absent) while inside."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
