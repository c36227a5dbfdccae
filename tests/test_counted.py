"""Counts in prose take the noun's number (a report once said "over 1 tasks")."""

from __future__ import annotations

import pytest

from repogate._counted import counted, listed


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


def test_listed_names_the_first_and_counts_the_rest() -> None:
    assert listed(["a", "b", "c"], 2) == "a, b and 1 more"
    assert listed(["a", "b"], 2) == "a, b"
    assert listed([], 3) == ""
    assert listed(["a", "b", "c", "d", "e"], 1) == "a and 4 more"
