"""Counts in prose take the noun's number (a report once said "over 1 tasks")."""

from __future__ import annotations

import pytest

from repogate._counted import counted


@pytest.mark.parametrize(
    ("n", "noun", "plural", "expected"),
    [
        (1, "task", None, "1 task"),
        (0, "task", None, "0 tasks"),
        (2, "test", None, "2 tests"),
        (-1, "test", None, "-1 test"),
        (1, "match", "matches", "1 match"),
        (3, "match", "matches", "3 matches"),
    ],
)
def test_the_noun_takes_the_number(n: int, noun: str, plural: str | None, expected: str) -> None:
    assert counted(n, noun, plural) == expected
