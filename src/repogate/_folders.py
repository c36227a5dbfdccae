"""Folders the user names (run, task-set and output folders) and the scratch folders left in them.

:func:`not_a_folder` says why a path the user gave as a folder, or as a file to make inside
folders, cannot be one (it, or a folder above it, is a file), in the words every one-line error
uses; :func:`remove_if_empty` drops a scratch folder (``work/``) once nothing is left in it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path


def file_in_the_way(path: Path) -> Path | None:
    """The file (or link) that ``path`` is, or lies below; None when it is, or can be, a folder.

    The nearest of ``path`` and its parents that exists decides: a folder (or nothing existing,
    on a relative path) means ``path`` is, or can be made, a folder.
    """
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return None
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return None


def not_a_folder(path: Path) -> str | None:
    """Why ``path`` cannot be a folder: ``is a file``, ``is below the file F``; None if it can."""
    found = file_in_the_way(path)
    if found is None:
        return None
    return "is a file" if found == path else f"is below the file {found}"


def remove_if_empty(*folders: Path) -> None:
    """Remove each of ``folders`` that exists and is empty, in order; leave any other alone."""
    for folder in folders:
        with contextlib.suppress(OSError):  # missing, not empty, or not ours to remove
            folder.rmdir()
