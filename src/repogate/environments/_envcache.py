"""The fingerprint of a venv's files, kept with each environment-cache entry.

The fingerprint (path, size, mtime, mode of every entry) written with a finished build tells a
later attempt whether anything wrote into the venv since. A build holds the entry's lock
(:func:`repogate._locks.locked`) so two attempts never build one venv at once.
"""

from __future__ import annotations

import hashlib
import os
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
