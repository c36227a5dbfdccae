"""Path globs as contracts write them: ``*`` within one folder, ``**`` across folders.

The one dialect of every user-facing path pattern: contract globs (permissions, oracles,
release notes, patch-source paths) and ``tasks mine --paths``.

A pattern is matched against a path relative to the repository root, with ``/`` separators. A
leading ``/`` is ignored; a pattern that names a folder (``changelog.d`` or ``changelog.d/``)
also matches every file below it. ``?`` matches one character other than ``/``. Other
characters match themselves (no character classes: contract globs never need them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

TEST_GLOBS = ("**/test_*.py", "**/*_test.py", "**/tests/**", "**/test/**", "**/testing/**")
"""Test files by pytest's default naming and the folders projects keep tests in: the oracle's."""


@lru_cache(maxsize=512)
def _regex(pattern: str) -> re.Pattern[str]:
    body = pattern.strip().lstrip("/").rstrip("/")
    out: list[str] = []
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(body[i]))
            i += 1
    return re.compile("".join(out) + "(?:/.*)?")


def matches(path: str, pattern: str) -> bool:
    """Return True when ``path`` (repository-relative, ``/`` separators) matches ``pattern``.

    Args:
        path: e.g. ``"spec/retry.json"``.
        pattern: e.g. ``"spec/**"``, ``"*.md"`` (root folder only), ``"changelog.d"``.
    """
    return _regex(pattern).fullmatch(path.lstrip("/")) is not None


def matches_any(path: str, patterns: Iterable[str]) -> bool:
    """Return True when ``path`` matches at least one of ``patterns``."""
    return any(matches(path, p) for p in patterns)
