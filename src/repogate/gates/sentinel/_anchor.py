"""Where the sentinel's replay starts when the reference landed after the base (an imported fix).

An imported SWE-bench instance's base is its pull request's base. The fix reached the branch
later (the contract's ``sentinel.after``, the *landing*: the fix's own commit when it was committed
on the branch, else the merge that brought it), after other commits of the branch (the *lag*), and
the maintainers' next commits were written on top of the landing. Replayed onto the base with the
candidate, those commits conflicted with the lag or ran tests that need it, whoever wrote the
candidate: the reference patch failed or errored on every real instance tried (issue 21,
pallets__flask-4045: ``setup.py``; -5063: later tests calling code the base lacks).

So the replay starts from the landing, with the reference's change replaced by the candidate's: a
three-way merge (:func:`repogate.git.replay_commit`) whose merge base is the *reference state*
(the base with the reference patch and the hidden tests, made as the candidate's start tree is),
ours the landing's tree, theirs the candidate's start tree. It applies what the candidate does
differently from the reference onto the state where history continued. The reference's own attempt
starts from the landing's tree exactly, so history replays for it as it happened; the hidden tests
are the same on both sides of that change, so the landing's tests stay as they landed.

Rejected alternative: rebasing the candidate's start tree (``base -> start tree``) onto the
landing's first parent. It carries the hidden tests, written against the base, into a state where
the lag may have changed the same test files (a conflict for every attempt, the reference's
included), and it leaves out what the landing holds beyond the reference patch (a merge's
conflict resolution, a reworded changelog entry).

Outcomes: ``same`` (the candidate's state is the reference's: the landing's tree), ``clean``,
``resolved`` (conflicts only in changelog files, resolved by the contract's policy), ``conflict``
(what the candidate does differently conflicts with the landing's history: a semantic conflict,
so no follow-up is replayed and the check fails, as a follow-up's semantic conflict fails it),
and ``base`` (no anchoring: the contract names no landing, or the reference state could not be
made; the replay starts from the merged candidate).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from repogate import git
from repogate._model import FrozenModel
from repogate.gates.sentinel._replay import (
    ChangelogPolicy,
    ConflictFile,
    conflict_files,
    resolve_changelog,
)

AnchorStatus = Literal["base", "same", "clean", "resolved", "conflict"]


class Anchor(FrozenModel):
    """Where the replay started.

    Attributes:
        landing: the commit the reference landed in (the contract's ``sentinel.after``), or None.
        status: see the module docstring.
        conflicts: conflicted paths of the swap (changelog ones resolved by policy).
        tree: the state the first follow-up is replayed onto; None after a semantic conflict.
        detail: one sentence for people.
    """

    landing: str | None = None
    status: AnchorStatus
    conflicts: tuple[ConflictFile, ...] = ()
    tree: str | None
    detail: str = ""


def at_start(start_tree: str, detail: str, landing: str | None = None) -> Anchor:
    """Return the anchor of a replay that starts from ``start_tree`` (status ``base``)."""
    return Anchor(landing=landing, status="base", tree=start_tree, detail=detail)


def anchor_at_landing(
    repo: Path,
    base: str,
    landing: str,
    reference_state: str,
    start_tree: str,
    changelog_paths: Sequence[str],
    policy: ChangelogPolicy,
) -> Anchor:
    """Place the candidate where the reference landed: the landing with the reference swapped out.

    Args:
        repo: a repository holding the full history (throw-away commits are written to it).
        base: the base commit.
        landing: the commit the reference landed in (a descendant of the base).
        reference_state: the tree of the base with the reference patch and hidden tests.
        start_tree: the candidate's start tree (merged candidate, hidden tests applied).
        changelog_paths: globs of changelog files (their conflicts are resolved by ``policy``).
        policy: the contract's changelog policy.

    Returns:
        The anchor (see the module docstring).

    Raises:
        GitError: git failed, or a commit or tree is unknown.
    """
    reference = git.commit_tree(repo, reference_state, [base], "repogate: reference state")
    candidate = git.commit_tree(repo, start_tree, [reference], "repogate: candidate state")
    step = git.replay_commit(repo, landing, candidate, reference)
    if step.empty:
        return Anchor(
            landing=landing,
            status="same",
            tree=step.onto,
            detail=f"the candidate's state is the reference's: the replay starts at {landing[:12]}",
        )
    # a path the candidate deleted and the landing changed is no follow-up's deletion winning
    # (``superseded``): here it is the candidate's own change meeting history, a conflict
    conflicts = tuple(
        c.model_copy(update={"superseded": False})
        for c in conflict_files(repo, step, changelog_paths)
    )
    semantic = sorted(c.path for c in conflicts if not c.changelog)
    if semantic:
        return Anchor(
            landing=landing,
            status="conflict",
            conflicts=conflicts,
            tree=None,
            detail=(
                f"what the candidate does differently from the reference conflicts with the "
                f"history it landed on ({landing[:12]}) in {', '.join(semantic)}"
            ),
        )
    where = f"the candidate in place of the reference at {landing[:12]}"
    if conflicts:
        tree = resolve_changelog(repo, step, policy)
        return Anchor(
            landing=landing,
            status="resolved",
            conflicts=conflicts,
            tree=tree,
            detail=f"{where}; changelog conflicts resolved ({policy})",
        )
    return Anchor(landing=landing, status="clean", tree=step.merge.tree, detail=where)
