"""The attempt's test trees: one state (a commit, the hidden tests applied), written afresh.

Every tree is a copy of the base's history kept when the workspace was made
(:func:`repogate.git.keep_history`) plus what its commit adds, fetched from the harness's
workspace (:func:`repogate.git.export_from_history`): the history a tree holds is its commit's,
as with :func:`repogate.git.export_tree`, without packing years of history again per tree.
"""

from __future__ import annotations

from pathlib import Path

from repogate import git
from repogate.attempt import AttemptConfig, AttemptProgress
from repogate.gates.graded_trees import GradedState
from repogate.phases._shared import workspace


def base_history(cfg: AttemptConfig) -> Path:
    """The attempt's bare copy of the base's history (made by :func:`keep_base_history`)."""
    return cfg.work / "base-history.git"


def keep_base_history(cfg: AttemptConfig) -> None:
    """Keep the fresh workspace's history, before anything runs in it (:func:`git.keep_history`)."""
    git.keep_history(workspace(cfg), base_history(cfg))


def export(cfg: AttemptConfig, rev: str, dest: Path) -> None:
    """Write commit ``rev`` of the workspace to ``dest`` as a clean repository (see the module)."""
    git.export_from_history(base_history(cfg), workspace(cfg), rev, dest)


def graded_state(cfg: AttemptConfig, progress: AttemptProgress, rev: str) -> GradedState:
    """Return commit ``rev`` of the workspace as a state to grade, hidden tests applied.

    Its tree is written afresh by each :func:`~repogate.gates.graded_trees.write_tree` (a first
    run) and :func:`~repogate.gates.graded_trees.fresh_tree` (a repeat or a rerun).
    """
    return GradedState(
        repo=workspace(cfg),
        base=progress.base,
        rev=rev,
        hidden=progress.hidden,
        hidden_paths=progress.hidden_paths,
        embedded=progress.embedded,
        history=base_history(cfg),
    )


def reference_state(cfg: AttemptConfig, progress: AttemptProgress, patch: bytes) -> GradedState:
    """Return the base plus the reference ``patch`` as a state to grade, hidden tests applied.

    Writing its tree raises ``PatchApplyError`` when the reference or the hidden test patch
    does not apply (:func:`repogate.gates.graded_trees.write_tree`).
    """
    return graded_state(cfg, progress, progress.base).model_copy(update={"reference": patch})
