r"""CODEOWNERS as GitHub reads it: owners of a path, and the lines GitHub rejects.

Rules followed (GitHub docs, "About code owners"): a pattern follows most gitignore rules; the
*last* matching line wins, and a matching line with no owners leaves the path unowned; owners are
``@user``, ``@org/team`` or an email address. Three gitignore features do not work and make the
line invalid: a pattern starting with ``!`` (negation), ``[ ]`` character ranges, and ``\#`` to
escape a leading ``#``. GitHub skips an invalid line (and highlights it in the file view); a file
over 3 MB is not loaded at all.

Matching is done by the ``codeowners`` library (a port of hmarr/codeowners). This module adds the
validator and the owner-token grammar, and feeds the library only the lines GitHub would keep, so
:func:`owners_of` gives the owners GitHub would request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from codeowners import CodeOwners

CODEOWNERS_LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
"""Where GitHub looks for the file, in order; the first one found is used."""

MAX_BYTES = 3 * 1024 * 1024

_USER = re.compile(r"^@[A-Za-z0-9](?:[A-Za-z0-9_]|-(?=[A-Za-z0-9_]))*$")
_TEAM = re.compile(r"^@[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def is_team(owner: str) -> bool:
    """Whether ``owner`` is a team as CODEOWNERS names one: ``@org/team``."""
    return _TEAM.match(owner) is not None


@dataclass(frozen=True)
class CodeownersProblem:
    """A line GitHub rejects.

    Attributes:
        line: 1-based line number (0 for a problem with the whole file).
        message: what is wrong, naming the offending text.
    """

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


def _tokens(line: str) -> list[str]:
    r"""Split a rule into pattern and owners; ``\ `` keeps a space in the pattern, ``#`` ends it."""
    tokens = re.split(r"(?<!\\)\s+", line.strip())
    for i, token in enumerate(tokens):
        if i > 0 and token.startswith("#"):
            return tokens[:i]
    return tokens


def _line_problems(number: int, line: str) -> list[CodeownersProblem]:
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return []
    pattern, *owners = _tokens(stripped)
    found: list[str] = []
    if pattern.startswith("!"):
        found.append(f"negation pattern {pattern!r}: GitHub does not support '!'")
    if pattern.startswith("\\#"):
        found.append(f"pattern {pattern!r}: GitHub does not support escaping '#' with '\\'")
    if "[" in pattern or "]" in pattern:
        found.append(f"pattern {pattern!r}: GitHub does not support '[ ]' character ranges")
    for owner in owners:
        if not (_USER.match(owner) or _TEAM.match(owner) or _EMAIL.match(owner)):
            found.append(f"owner {owner!r} is not @user, @org/team or an email address")
    return [CodeownersProblem(number, message) for message in found]


def validate_codeowners(text: str) -> list[CodeownersProblem]:
    """Return the problems GitHub would report in a CODEOWNERS file, by line number.

    Args:
        text: the file's text.

    Returns:
        Problems in line order; empty when GitHub would accept every line. Owners that do not
        exist or lack write access cannot be seen offline and are not reported.
    """
    if len(text.encode()) > MAX_BYTES:
        return [CodeownersProblem(0, "file is over 3 MB: GitHub does not load it")]
    problems: list[CodeownersProblem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        problems.extend(_line_problems(number, line))
    return problems


class Owners:
    """The owners of paths under one CODEOWNERS text, with invalid lines skipped as GitHub does.

    Args:
        text: the CODEOWNERS file's text (read at the base commit).
    """

    def __init__(self, text: str) -> None:
        self.problems = validate_codeowners(text)
        bad = {p.line for p in self.problems}
        kept = [
            "" if n in bad else " ".join(_tokens(line)) if line.strip() else ""
            for n, line in enumerate(text.splitlines(), start=1)
        ]
        self._owners = CodeOwners("" if 0 in bad else "\n".join(kept))

    def of(self, path: str) -> tuple[str, ...]:
        """Return the owners of ``path`` (``@user``, ``@org/team`` or email), last match winning.

        Args:
            path: repository-relative, ``/`` separators.
        """
        return tuple(owner for _, owner in self._owners.of(path))


def owners_of(text: str, paths: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Return each path's owners under CODEOWNERS ``text``, invalid lines skipped as GitHub does."""
    owners = Owners(text)
    return {path: owners.of(path) for path in paths}
