"""Reading the user's input files with one-line errors: the shared edge of every loader.

Each loader (contract, evidence, reviews, predictions, scripted agents) reads a file and validates
it with pydantic; these helpers turn the two foreign failures (``OSError``, ``ValidationError``)
into the message our errors carry, so every loader says it the same way.
"""

from __future__ import annotations

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
