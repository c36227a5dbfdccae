"""The attempt's test trees: one state (a commit, the hidden tests applied), written afresh.

Every tree is a copy of the base's history kept when the workspace was made
(:func:`repogate.git.keep_history`) plus what its commit adds, fetched from the harness's
workspace (:func:`repogate.git.export_from_history`): the history a tree holds is its commit's,
as with :func:`repogate.git.export_tree`, without packing years of history again per tree.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from repogate import git
from repogate.attempt import AttemptConfig, AttemptProgress
from repogate.gates.graded_trees import Exporter, TreeMaker, graded_tree, reference_tree
from repogate.phases._shared import workspace


def base_history(cfg: AttemptConfig) -> Path:
    """The attempt's bare copy of the base's history (made by :func:`keep_base_history`)."""
    return cfg.work / "base-history.git"


def keep_base_history(cfg: AttemptConfig) -> None:
    """Keep the fresh workspace's history, before anything runs in it (:func:`git.keep_history`)."""
    git.keep_history(workspace(cfg), base_history(cfg))


def exporter(cfg: AttemptConfig) -> Exporter:
    """Return what exports a commit of ``repo`` to a new folder from the base's history copy."""
    return partial(git.export_from_history, base_history(cfg))


def export(cfg: AttemptConfig, rev: str, dest: Path) -> None:
    """Write commit ``rev`` of the workspace to ``dest`` as a clean repository (see the module)."""
    exporter(cfg)(workspace(cfg), rev, dest)


def _maker(
    cfg: AttemptConfig,
    progress: AttemptProgress,
    write: Callable[..., None],
    change: str | bytes,
) -> TreeMaker:
    """What writes a tree with ``write``: the base, ``change``, the hidden tests, graded text.

    ``write`` is :func:`graded_tree` (``change`` a commit) or :func:`reference_tree` (a patch).
    """

    def make(dest: Path) -> None:
        write(
            workspace(cfg),
            progress.base,
            change,
            progress.hidden,
            progress.hidden_paths,
            dest,
            embedded=progress.embedded,
            export=exporter(cfg),
        )

    return make


def graded_maker(cfg: AttemptConfig, progress: AttemptProgress, rev: str) -> TreeMaker:
    """Return what writes ``rev``'s graded tree (:func:`graded_tree`) to a new folder.

    Each call exports the commit again: a fresh tree no test code wrote, for a first run, a
    repeat or a rerun (:func:`repogate.gates.graded_trees.fresh_tree`).
    """
    return _maker(cfg, progress, graded_tree, rev)


def reference_maker(cfg: AttemptConfig, progress: AttemptProgress, patch: bytes) -> TreeMaker:
    """Return what writes the reference's graded tree to a new folder.

    The base plus ``patch``, hidden tests applied
    (:func:`~repogate.gates.graded_trees.reference_tree`).

    Raises (when called):
        PatchApplyError: the reference or the hidden test patch does not apply.
    """
    return _maker(cfg, progress, reference_tree, patch)
