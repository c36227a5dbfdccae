"""The attempt's test trees: one state (a commit, the hidden tests applied), written afresh."""

from __future__ import annotations

from pathlib import Path

from repogate.attempt import AttemptConfig, AttemptProgress
from repogate.gates.verification import TreeMaker, graded_tree
from repogate.phases._shared import workspace


def graded_maker(cfg: AttemptConfig, progress: AttemptProgress, rev: str) -> TreeMaker:
    """Return what writes ``rev``'s graded tree (:func:`graded_tree`) to a new folder.

    Each call exports the commit from the harness's workspace again: a fresh tree no test code
    wrote, for a first run, a repeat or a rerun (:func:`repogate.gates.verification.fresh_tree`).
    """

    def make(dest: Path) -> None:
        graded_tree(
            workspace(cfg),
            progress.base,
            rev,
            progress.hidden,
            progress.hidden_paths,
            dest,
            embedded=progress.embedded,
        )

    return make
