"""Reading the user's input files with one-line errors: the shared edge of every loader.

Each loader (contract, evidence, reviews, predictions, scripted agents) reads a file and validates
it with pydantic; these helpers turn the two foreign failures (``OSError``, ``ValidationError``)
into the message our errors carry, so every loader says it the same way. :func:`storage_problem`
tells a write the disk refused (full, read-only) from any other failure.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from repogate.errors import UserInputError


def read_text(path: Path, what: str, error: Callable[[str, str], UserInputError], fix: str) -> str:
    """Return ``path``'s text (UTF-8).

    Args:
        path: the file.
        what: how the message names it, e.g. ``"review file"``.
        error: the error class to raise (a :class:`UserInputError`).
        fix: how to fix it.

    Raises:
        UserInputError: of class ``error``, when the file cannot be read.
    """
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise error(f"{what} {path} cannot be read ({why})", fix) from None


def first_problem(exc: ValidationError) -> str:
    """Return ``key 'a.b': message`` for the first validation error, and how many more there are."""
    first = exc.errors()[0]
    key = ".".join(str(part) for part in first["loc"]) or "(top level)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"key {key!r}: {first['msg']}{more}"


_STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
_STORAGE_WORDS = ("disk is full", "readonly database", "No space left on device")


def storage_problem(exc: BaseException) -> str | None:
    """Return why writing failed when ``exc`` means the disk refused a write, else None.

    That is a full disk or quota, a file-size limit, or a read-only file system, whichever layer
    met it: an ``OSError`` (by ``errno``), SQLite (``database or disk is full``), or a child such
    as git that printed ``No space left on device``. Such a failure is the machine's, never an
    attempt's: the run stops and can be resumed once there is room.
    """
    if isinstance(exc, OSError) and exc.errno in _STORAGE_ERRNOS:
        return exc.strerror or str(exc)
    text = str(exc)
    return next((word for word in _STORAGE_WORDS if word in text), None)
