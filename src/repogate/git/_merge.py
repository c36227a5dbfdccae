"""Merge and replay, for the harness's merge step and the post-merge sentinel (gates/sentinel.py).

Merges are tree operations (``git merge-tree --write-tree``, merge-ort, renames on): no work tree,
index, HEAD or ref of the repository is touched; only new objects are written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from repogate.errors import GitError
from repogate.git._diff import show_file
from repogate.git._run import _checked_rev, _exec, _failure, _text, is_ancestor
from repogate.git._trees import commit_tree

# merge-tree reads these from configuration; pinned so the markers and rename detection are the
# same on every machine whatever the repository configures.
_MERGE_CONFIG = ("-c", "merge.conflictStyle=merge", "-c", "merge.renames=true")


@dataclass(frozen=True)
class MergeMessage:
    """One informational message of a merge, as ``git merge-tree --messages -z`` reports it.

    Attributes:
        paths: the paths the message is about.
        kind: git's stable type token, e.g. ``CONFLICT (contents)``, ``CONFLICT (modify/delete)``,
            ``Auto-merging``, ``CONFLICT (rename/delete)``.
        text: the human-readable message.
    """

    paths: tuple[str, ...]
    kind: str
    text: str


@dataclass(frozen=True)
class MergeResult:
    """The result of a three-way tree merge.

    Attributes:
        tree: the merged tree id; when conflicted, files with content conflicts hold conflict
            markers (``<<<<<<<``, ``=======``, ``>>>>>>>``) and structural conflicts keep one side.
        conflicted: the paths left with unmerged entries, sorted; empty for a clean merge.
        messages: git's informational and conflict messages.
    """

    tree: str
    conflicted: tuple[str, ...]
    messages: tuple[MergeMessage, ...]

    @property
    def clean(self) -> bool:
        """True when no path conflicted."""
        return not self.conflicted


@dataclass(frozen=True)
class ReplayStep:
    """One follow-up commit's own change replayed onto a state.

    Attributes:
        commit: the follow-up commit replayed.
        parent: the parent its change was taken against (``parent..commit``).
        onto: the tree it was replayed onto.
        commit_tree: the tree of ``commit`` itself (its state in real history).
        empty: True when ``commit`` changes nothing against ``parent`` (same tree); then
            ``merge.tree`` is ``onto``.
        merge: the merge result.
        conflict_text: for each conflicted path, the bytes left in the result tree (with
            conflict markers for a content conflict), or None when no file is left there.
    """

    commit: str
    parent: str
    onto: str
    commit_tree: str
    empty: bool
    merge: MergeResult
    conflict_text: tuple[tuple[str, bytes | None], ...] = ()


def _parse_merge_tree(out: bytes) -> MergeResult:
    """Parse ``git merge-tree --write-tree --name-only --messages -z`` output."""
    fields = out.split(b"\0")
    tree = fields[0].decode().strip()
    i = 1
    conflicted: set[str] = set()
    while i < len(fields) and fields[i]:
        conflicted.add(os.fsdecode(fields[i]))
        i += 1
    i += 1
    messages: list[MergeMessage] = []
    while i < len(fields) and fields[i].isdigit():
        count = int(fields[i])
        paths = tuple(os.fsdecode(p) for p in fields[i + 1 : i + 1 + count])
        kind, text = fields[i + 1 + count], fields[i + 2 + count]
        messages.append(MergeMessage(paths, kind.decode("utf-8", "replace"), text.decode().strip()))
        i += count + 3
    return MergeResult(tree, tuple(sorted(conflicted)), tuple(messages))


def _merge_trees(repo: Path, ours: str, theirs: str) -> MergeResult:
    args = [
        *_MERGE_CONFIG,
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--messages",
        "-z",
        "--end-of-options",
        _checked_rev(ours),
        _checked_rev(theirs),
    ]
    done = _exec(args, repo)
    if done.returncode not in (0, 1):
        raise _failure(args, done)
    return _parse_merge_tree(done.stdout)


def merge_candidate(repo: Path, target: str, candidate: str) -> MergeResult:
    """Merge commit ``candidate`` into commit ``target`` as a tree operation: the harness's merge.

    ``git merge-tree --write-tree target candidate`` (merge-ort, rename detection on, merge base
    found from history): nothing is checked out and no ref moves. When ``target`` is the
    candidate's own parent the result is the candidate's tree.

    Args:
        repo: a repository holding both commits.
        target: the target head (normally the base commit, or the branch head the contract names).
        candidate: the candidate commit.

    Returns:
        The merged tree and any conflicted paths.

    Raises:
        GitError: a commit is unknown or git failed (exit status other than 0 or 1).
    """
    return _merge_trees(repo, target, candidate)


def _trees(repo: Path, revs: Sequence[str]) -> list[str]:
    """Return the tree ids of ``revs`` (commits or trees), in one ``git rev-parse``."""
    # no --end-of-options here: without --verify, rev-parse echoes it; _checked_rev refuses "-"
    args = ["rev-parse", *(f"{_checked_rev(r)}^{{tree}}" for r in revs)]
    return _text(args, repo).split()


def _conflict_text(
    repo: Path, tree: str, paths: Sequence[str]
) -> tuple[tuple[str, bytes | None], ...]:
    return tuple((path, show_file(repo, tree, path)) for path in paths)


def replay_commit(
    repo: Path, onto_tree_or_commit: str, commit: str, parent: str, held: Sequence[str] = ()
) -> ReplayStep:
    """Apply the change ``parent..commit`` onto a state: a cherry-pick done as a tree operation.

    A three-way merge with base ``parent``, ours ``onto``, theirs ``commit`` (merge-ort, rename
    detection on), as ``git cherry-pick`` (or ``cherry-pick -m`` for a merge commit) does it. git
    2.39 has no ``merge-tree --merge-base``, so the base is fixed through history instead: a
    throw-away commit of ``onto`` whose only parent is ``parent`` has ``parent`` as its one best
    common ancestor with ``commit`` (``parent`` is an ancestor of ``commit``).

    ``held`` names commits the state already contains (the target head the candidate was merged
    into). One that ``commit`` descends from but ``parent`` does not becomes a second parent of the
    throw-away commit, so the merge base is the merge of ``parent`` and it (merge-ort's virtual
    base): its changes, which ``parent..commit`` also holds, are not applied a second time.

    Args:
        repo: a repository holding the full history.
        onto_tree_or_commit: the current state (a tree or commit id).
        commit: the follow-up commit to replay.
        parent: the parent of ``commit`` whose change is replayed; for a merge commit the parent
            that descends from the reference change.
        held: commits the state already contains (see above).

    Returns:
        The replay step: the result tree, whether it was empty, conflicted paths and their text.

    Raises:
        GitError: a commit or tree is unknown, ``parent`` is not an ancestor of ``commit``, or
            git failed.
    """
    onto, theirs, before = _trees(repo, [onto_tree_or_commit, commit, parent])
    if not is_ancestor(repo, parent, commit):
        raise GitError(["git", "merge-base", parent, commit], -1, f"{parent} is not an ancestor")
    if theirs == before:
        return ReplayStep(commit, parent, onto, theirs, True, MergeResult(onto, (), ()))
    also = [h for h in held if is_ancestor(repo, h, commit) and not is_ancestor(repo, h, parent)]
    ours = commit_tree(repo, onto, [parent, *also], "repogate: replay state")
    merged = _merge_trees(repo, ours, commit)
    text = _conflict_text(repo, merged.tree, merged.conflicted)
    return ReplayStep(commit, parent, onto, theirs, False, merged, text)
