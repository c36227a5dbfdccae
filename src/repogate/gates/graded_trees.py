"""Graded test trees: one state of the repository with the hidden tests applied, written afresh.

A graded tree is the candidate (or the merged tree, the base, the reference) with every file the
hidden tests touch reset to the base and the hidden test patch applied, so no edit of the agent's
to those files survives into grading (:func:`graded_tree`). A state (a commit, or the base plus a
reference patch) is a record (:class:`GradedState`) passed down to the step that needs its tree
(:func:`write_tree`); every run after a state's first, repeat or rerun, runs on a fresh export of
that state (:func:`fresh_tree`), never on a tree earlier test code wrote. Running and grading the tests on
these trees is :mod:`repogate.gates.verification`'s.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from repogate import git
from repogate._files import unlink_nofollow, write_bytes_nofollow
from repogate._model import FrozenModel
from repogate.contract import TransitionContract
from repogate.globs import matches_any
from repogate.oracles.embedded import EmbeddedOracle, restore
from repogate.oracles.pytest_runner import select_files

Exporter = Callable[[Path, str, Path], None]
"""Writes commit ``rev`` of a repository to a new folder: ``(repo, rev, dest)``."""


class GradedState(FrozenModel):
    """One state to grade: a commit, or the base plus a reference patch, with the hidden tests.

    Attributes:
        repo: the repository holding the commits (the attempt's workspace).
        base: the base commit's SHA; the hidden tests' files are reset to it.
        rev: the commit whose tree is written (the base, for a reference state).
        reference: the reference patch applied on ``rev``; None for a plain commit.
        hidden: the hidden test patch's bytes.
        hidden_paths: the paths ``hidden`` touches (:func:`repogate.patches.touched_paths`).
        embedded: graded text in editable files, put back last (:mod:`repogate.oracles.embedded`).
        history: a bare copy of the base's history the tree is exported from
            (:func:`repogate.git.export_from_history`); None exports from ``repo`` alone
            (:func:`repogate.git.export_tree`).
    """

    repo: Path
    base: str
    rev: str
    reference: bytes | None = None
    hidden: bytes
    hidden_paths: tuple[str, ...]
    embedded: tuple[EmbeddedOracle, ...] = ()
    history: Path | None = None


def write_tree(state: GradedState, dest: Path) -> None:
    """Write ``state``'s tree, hidden tests applied, to the new folder ``dest``.

    As :func:`graded_tree` writes a commit; for a reference state, the base plus its patch.

    Raises:
        GitError: git failed.
        PatchApplyError: the reference or the hidden test patch does not apply.
    """
    export = (
        git.export_tree
        if state.history is None
        else partial(git.export_from_history, state.history)
    )
    export(state.repo, state.rev, dest)
    if state.reference is not None:
        git.apply_patch(dest, state.reference)
    _with_hidden(state.repo, state.base, state.hidden, state.hidden_paths, dest, state.embedded)


def fresh_tree(state: GradedState, tree: Path, label: str) -> Path:
    """Write a fresh copy of ``state``'s tree beside ``tree`` (:func:`write_tree`); return its path.

    The copy is ``<parent>/<tree name>-<label>-<random>/<tree name>`` (same folder name as the
    first run's, so ids and paths the tests print read the same), in a folder no run used before.

    Raises:
        GitError, PatchApplyError: as :func:`write_tree` raises them.
    """
    holder = Path(tempfile.mkdtemp(prefix=f"{tree.name}-{label}-", dir=tree.parent))
    dest = holder / tree.name
    write_tree(state, dest)
    return dest


def graded_tree(
    repo: Path,
    base: str,
    rev: str,
    hidden: bytes,
    hidden_paths: Sequence[str],
    dest: Path,
    *,
    embedded: Sequence[EmbeddedOracle] = (),
    export: Exporter = git.export_tree,
) -> None:
    """Write the tree of ``rev`` to ``dest`` with hidden-test files reset to ``base`` and applied.

    ``hidden_paths`` are the paths ``hidden`` touches (:func:`repogate.patches.touched_paths`).
    Graded text in editable files (``embedded``) is put back from the hidden tests' version last
    (:mod:`repogate.oracles.embedded`). ``export`` writes the tree of ``rev`` (task validation
    passes :func:`repogate.git.copy_repository`, on a workspace holding nothing newer).

    Raises:
        GitError: git failed.
        PatchApplyError: the hidden test patch does not apply at the base (an invalid task).
    """
    export(repo, rev, dest)
    _with_hidden(repo, base, hidden, hidden_paths, dest, embedded)


def _with_hidden(
    repo: Path,
    base: str,
    hidden: bytes,
    hidden_paths: Sequence[str],
    dest: Path,
    embedded: Sequence[EmbeddedOracle],
) -> None:
    """Reset the hidden tests' files to ``base``, apply them, put back graded text in ``dest``."""
    for path in hidden_paths:
        # The tree is the candidate's: a link it holds on a hidden test's way is replaced (as
        # a folder on the way) or removed, never written through.
        at_base = git.show_file(repo, base, path)
        if at_base is None:
            write_bytes_nofollow(dest, path, b"", make_parents=True)
            unlink_nofollow(dest, path)
        else:
            write_bytes_nofollow(dest, path, at_base, make_parents=True)
    git.apply_patch(dest, hidden)
    restore(dest, embedded)


def hidden_test_files(contract: TransitionContract, tree: Path, ids: Sequence[str]) -> list[str]:
    """Return the files of ``ids`` in ``tree`` that are hidden test files.

    With ``hidden_tests = { commit, paths, exclude }`` these are the files its globs select; with
    a hidden test patch file, or no hidden tests (the graded tests are the repository's own, kept
    from the agent by the integrity gate), every file of the graded ids.
    """
    files = select_files(ids, tree)
    hidden = contract.oracles.hidden_tests
    if hidden is None or hidden.commit is None:
        return files
    return [
        f
        for f in files
        if (not hidden.paths or matches_any(f, hidden.paths)) and not matches_any(f, hidden.exclude)
    ]
