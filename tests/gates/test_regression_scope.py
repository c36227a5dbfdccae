"""The regression check's scope as a person reads it: counts of zero and one read as English.

New user: a passed check's detail read "all 0 base-passing tests beyond the graded ids" (a base
whose every test is graded). The same sentence said "all 1 base-passing tests" for one test, and
its selected form "0 of 3 base-passing tests selected" and "1 of 1 base-passing tests".
"""

from __future__ import annotations

import pytest

from repogate.gates.regression import scope_text

WHY = ("src/app/cli.py changed (it configures or installs the tests)",)


@pytest.mark.parametrize(
    ("selected", "passing", "whole", "expected"),
    [
        (0, 0, True, f"no base-passing tests beyond the graded ids ({WHY[0]})"),
        (1, 1, True, f"the one base-passing test beyond the graded ids ({WHY[0]})"),
        (7, 7, True, f"all 7 base-passing tests beyond the graded ids ({WHY[0]})"),
        (0, 0, False, "no base-passing tests beyond the graded ids"),
        (0, 3, False, "none of the 3 base-passing tests beyond the graded ids selected"),
        (0, 1, False, "the one base-passing test beyond the graded ids, not selected"),
        (1, 1, False, "the one base-passing test beyond the graded ids, selected"),
        (1, 12, False, "1 of 12 base-passing tests selected beyond the graded ids"),
        (885, 1646, False, "885 of 1646 base-passing tests selected beyond the graded ids"),
    ],
)
def test_the_scope_reads_naturally_at_every_count(
    selected: int, passing: int, whole: bool, expected: str
) -> None:
    assert scope_text(selected, passing, WHY if whole else None) == expected


def test_a_whole_set_without_a_recorded_reason_has_no_empty_brackets() -> None:
    assert scope_text(2, 2, ()) == "all 2 base-passing tests beyond the graded ids"
