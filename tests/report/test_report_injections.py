"""Acceptance with and without each injection, paired by task (issue 24)."""

from __future__ import annotations

from repogate.report.injections import injection_pairs, pairs_line, split_derived


def test_derived_ids_split_into_parent_and_kind() -> None:
    assert split_derived("pay+stale-lockfile") == ("pay", "stale-lockfile")
    assert split_derived("a+b+generated-file-trap") == ("a+b", "generated-file-trap")
    assert split_derived("pay+ablate-AGENTS.md") == ("pay", "ablate-AGENTS.md")
    assert split_derived("pay+unknown") is None
    assert split_derived("pay") is None


def test_pairs_count_only_tasks_with_both_sides_scored() -> None:
    """An errored attempt is not scored; a variant without its parent is not paired."""
    attempts = [
        ("t1", "gold", "accepted"),
        ("t1+misleading-comment", "gold", "rejected"),
        ("t2", "gold", "rejected"),
        ("t2+misleading-comment", "gold", "accepted"),
        ("t3", "gold", "accepted"),
        ("t3+misleading-comment", "gold", "error"),
        ("t4+misleading-comment", "gold", "accepted"),
        ("t1", "full", "accepted"),
        ("t1+misleading-comment", "full", "accepted"),
        ("t1+misleading-comment", "full", "rejected"),
    ]
    gold, full = sorted(injection_pairs(attempts), key=lambda p: p.agent, reverse=True)
    assert (gold.agent, gold.tasks, gold.lost, gold.gained) == ("gold", 2, 1, 1)
    assert (gold.accepted_without, gold.accepted_with) == (1.0, 1.0)
    assert (full.tasks, full.accepted_without, full.accepted_with) == (1, 1.0, 0.5)
    assert full.lost == 1
    assert pairs_line([full]) == (
        "misleading-comment, full: 1/1 -> 0.5/1 accepted without -> with the injection "
        "(lost 1, gained 0)"
    )


def test_no_derived_task_gives_no_rows() -> None:
    assert injection_pairs([("t1", "gold", "accepted")]) == ()
