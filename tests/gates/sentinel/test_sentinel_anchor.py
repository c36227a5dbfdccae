"""Gate S's anchor: an imported fix's later history replays from where the fix landed.

The repositories are shaped like imported SWE-bench instances whose base lags the landing
(``tests/_lagging_history.py``); the window is found as ``tasks import`` finds it. The end-to-end
run through ``tasks import`` and the gold agent is ``tests/tasks/test_import_sentinel.py``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from _lagging_history import BASE, FIXED, SHAPES, instance
from _sentinel_support import run_pytest
from repogate import git
from repogate.contract import Sentinel
from repogate.gates.sentinel import SentinelInputs, check_sentinel
from repogate.tasks.import_strength import sentinel_window


def _state(repo: Path, base: str, files: dict[str, str]) -> str:
    """The base's tree with ``files`` written: a start tree or the reference state."""
    return git.tree_with_files(
        repo, git.tree_of(repo, base), {k: v.encode() for k, v in files.items()}
    )


def _inputs(
    tmp_path: Path, name: str, candidate: dict[str, str], *, with_reference: bool = True
) -> tuple[SentinelInputs, str]:
    """The sentinel's inputs for ``candidate`` (source files; the hidden test is added) on shape
    ``name``, the window as the import finds it; also the landing."""
    repo = tmp_path / name
    base, pr = SHAPES[name](repo)
    row = instance(name, repo, base, pr)
    found = sentinel_window(repo, base, str(row["patch"]).encode(), 3)
    assert found.landing is not None and found.follow_ups, found.why_none
    hidden = {"tests/test_m.py": FIXED["tests/test_m.py"]}
    start = _state(repo, base, {**candidate, **hidden})
    ctx = SentinelInputs(
        repo=repo,
        base=base,
        candidate=git.commit_tree(repo, start, [base], "candidate"),
        start_tree=start,
        config=Sentinel(after=found.landing, follow_ups=found.follow_ups),
        run_tests=run_pytest,
        cache_dir=tmp_path / "cache",
        reference=found.landing,
        reference_state=_state(repo, base, FIXED) if with_reference else None,
        focused_tests=("tests/test_m.py::test_a_negative",),
        regression_tests=("tests/test_m.py::test_a", "tests/test_m.py::test_b"),
    )
    return ctx, found.landing


def _statuses(details: dict[str, Any]) -> list[str]:
    return [s["status"] for s in details["steps"]]


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_reference_replays_from_its_landing_as_history_did(tmp_path: Path, name: str) -> None:
    """The gold attempt starts from the landing's own tree, so each follow-up replays exactly as
    it happened. Without a reference state the replay starts at the base, as before, fails, and
    the receipt says where it started."""
    ctx, landing = _inputs(tmp_path, name, {"pkg/m.py": FIXED["pkg/m.py"]})
    obs = check_sentinel(ctx)
    assert obs.checks[0].status == "passed", obs.checks[0].detail
    anchor = obs.details["anchor"]
    assert (anchor["status"], anchor["landing"]) == ("same", landing)
    assert anchor["tree"] == git.tree_of(ctx.repo, landing)
    assert obs.details["steps"] and set(_statuses(obs.details)) == {"clean"}
    assert all(s["history_passed"] > 0 for s in obs.details["steps"])

    at_base = check_sentinel(replace(ctx, reference_state=None))
    assert at_base.checks[0].status == "failed"
    assert at_base.details["anchor"]["status"] == "base"
    assert any("not where the reference landed" in n for n in at_base.details["residual_unknowns"])


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_different_fix_is_placed_where_the_reference_landed(tmp_path: Path, name: str) -> None:
    """A candidate that fixes the bug its own way replaces the reference in the landing; the
    maintainers' later commits then replay onto it and their tests pass."""
    other = BASE["pkg/m.py"].replace("    return x\n", "    return x if x > 0 else 0\n", 1)
    ctx, landing = _inputs(tmp_path, name, {"pkg/m.py": other})
    obs = check_sentinel(ctx)
    assert obs.checks[0].status == "passed", obs.checks[0].detail
    anchor = obs.details["anchor"]
    assert anchor["status"] == "clean"
    start = git.show_file(ctx.repo, anchor["tree"], "pkg/m.py") or b""
    landed = git.show_file(ctx.repo, landing, "pkg/m.py") or b""
    assert b"x if x > 0 else 0" in start and b"max(x, 0)" not in start
    assert start.replace(b"x if x > 0 else 0", b"max(x, 0)") == landed  # the lag kept


def test_a_candidate_that_also_rewrote_what_the_lag_changed_conflicts_at_the_anchor(
    tmp_path: Path,
) -> None:
    """What the candidate does beyond the reference meets the history it would have landed on:
    here it rewrites ``b()``, which the branch changed before the landing. A semantic conflict:
    the check fails, no follow-up is replayed, and the conflicted lines count as repair effort."""
    fixed = FIXED["pkg/m.py"].replace("x + 1", "1 + x")
    ctx, landing = _inputs(tmp_path, "same-file", {"pkg/m.py": fixed})
    obs = check_sentinel(ctx)
    assert obs.checks[0].status == "failed"
    assert obs.details["anchor"]["status"] == "conflict"
    assert "pkg/m.py" in obs.checks[0].detail and landing[:12] in obs.checks[0].detail
    assert _statuses(obs.details) == ["blocked"] * len(ctx.config.follow_ups)
    assert obs.details["conflicts"]["semantic"] == ["pkg/m.py"]
    assert obs.details["extra_repair_effort"] > 0
    # the same edit to b() on the shape whose branch left b() alone is no conflict
    elsewhere, _ = _inputs(tmp_path, "lag-elsewhere", {"pkg/m.py": fixed})
    assert check_sentinel(elsewhere).details["anchor"]["status"] == "clean"


def test_a_file_the_candidate_deleted_and_the_branch_changed_is_a_semantic_conflict(
    tmp_path: Path,
) -> None:
    """Removing ``pkg/util.py``, which the branch extended before the landing, meets that change:
    a conflict named as semantic (not a follow-up's deletion superseding the candidate)."""
    repo = tmp_path / "lag-elsewhere"
    ctx, _ = _inputs(tmp_path, "lag-elsewhere", {"pkg/m.py": FIXED["pkg/m.py"]})
    gone = git.tree_with_files(repo, ctx.start_tree, {"pkg/util.py": None})
    obs = check_sentinel(replace(ctx, start_tree=gone))
    assert obs.checks[0].status == "failed"
    assert obs.details["anchor"]["status"] == "conflict"
    assert obs.details["conflicts"]["semantic"] == ["pkg/util.py"]
    assert obs.details["conflicts"]["superseded"] == []
