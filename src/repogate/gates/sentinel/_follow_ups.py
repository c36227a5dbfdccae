"""Which follow-up commits the sentinel replays, and against which parent (private to the sentinel).

The contract names follow-ups, or a count is taken from the target branch's real history after the
reference change (first-parent path, or every descendant).

Each follow-up's change is taken against the previous observed commit (the reference change for the
first) whenever that is its ancestor: ``previous..follow-up`` then holds the follow-up's own change
plus any real commits between the two that the window does not name, so a window of non-adjacent
commits (say, the later commits touching the same files) does not conflict over history it left
out, and the reference change itself always replays cleanly. On a first-parent path this is each
commit's first parent; for a merge commit it is the parent that descends from the reference change.
Otherwise (no reference, or commits named out of order) a commit's own parent is used: the only
one, or for a merge commit the first that descends from the reference change (else from the base).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from repogate import git
from repogate._model import FrozenModel
from repogate.errors import GitError, UserInputError


class FollowUp(FrozenModel):
    """One follow-up commit to replay.

    Attributes:
        sha: the commit (40 hex).
        parent: the commit its change is taken against (``parent..sha``): the previous observed
            commit when that is an ancestor, else its own parent (see the module docstring).
        between: real commits in ``parent..sha`` other than ``sha`` (0 for adjacent commits).
        subject: the first line of its message.
        merge: True when the commit has more than one parent.
    """

    sha: str
    parent: str
    subject: str
    merge: bool = False
    between: int = 0


def _full_sha(repo: Path, sha: str, what: str) -> str:
    if not git.has_object(repo, sha):
        raise UserInputError(
            f"{what} {sha} is not in repository {repo}",
            "check the SHA in the contract, or fetch the repository's full history",
        )
    try:
        return git.rev_parse(repo, f"{sha}^{{commit}}")
    except GitError:
        raise UserInputError(f"{what} {sha} is not a commit", "name a commit SHA") from None


def _parent_for(repo: Path, sha: str, parents: Sequence[str], anchors: Sequence[str]) -> str:
    for anchor in anchors:
        for parent in parents:
            if git.is_ancestor(repo, anchor, parent):
                return parent
    raise UserInputError(
        f"follow-up {sha} has no parent descending from the base commit",
        "name commits made after the base",
    )


def _branch_tip(repo: Path, branch: str) -> str:
    for name in (branch, f"origin/{branch}", f"refs/remotes/origin/{branch}"):
        try:
            return git.rev_parse(repo, f"{name}^{{commit}}")
        except GitError:
            continue
    raise UserInputError(
        f"target branch {branch!r} is not in repository {repo}",
        "set the contract's target_branch to a branch of the repository",
    )


def follow_up_commits(
    repo: Path,
    base: str,
    reference: str | None,
    explicit: Sequence[str],
    count: int,
    target_branch: str,
    first_parent: bool,
) -> tuple[FollowUp, ...]:
    """Return the follow-up commits to replay, in order.

    ``explicit`` SHAs, when given, in their order; otherwise up to ``count`` commits of
    ``target_branch``'s history after the reference change (after the base when there is no
    reference) that descend from it, oldest first, following first parents only when
    ``first_parent``. Fewer than ``count`` are returned when history holds fewer.

    Args:
        repo: a repository holding the full history.
        base: the base commit.
        reference: the reference (gold) commit, or None.
        explicit: follow-up SHAs the contract names.
        count: how many to take from history when none are named.
        target_branch: the branch to walk (``origin/<name>`` is tried too).
        first_parent: follow first parents only.

    Raises:
        UserInputError: a named follow-up is missing from the repository, is not a commit, is not
            a descendant of the base (or is the base), or the target branch does not exist.
    """
    base = _full_sha(repo, base, "base commit")
    anchor = _full_sha(repo, reference, "reference commit") if reference else base
    shas: list[str] = []
    if explicit:
        for given in explicit:
            sha = _full_sha(repo, given, "follow-up commit")
            if sha == base or not git.is_ancestor(repo, base, sha):
                raise UserInputError(
                    f"follow-up commit {given} is not a descendant of the base commit {base[:12]}",
                    "name commits made after the base on the target branch",
                )
            shas.append(sha)
    elif count:
        for sha in git.log_range(
            repo, anchor, _branch_tip(repo, target_branch), first_parent=first_parent
        ):
            if len(shas) == count:
                break
            if git.is_ancestor(repo, anchor, sha):
                shas.append(sha)
    follow_ups: list[FollowUp] = []
    previous = anchor if reference else None
    for sha in shas:
        follow_ups.append(_follow_up(repo, sha, previous, (anchor, base)))
        previous = sha
    return tuple(follow_ups)


def _follow_up(repo: Path, sha: str, previous: str | None, anchors: Sequence[str]) -> FollowUp:
    parents = git.commit_parents(repo, sha)
    if previous is not None and previous != sha and git.is_ancestor(repo, previous, sha):
        parent = previous
    else:
        parent = _parent_for(repo, sha, parents, anchors)
    between = (
        0 if parent in parents else len(git.log_range(repo, parent, sha, first_parent=False)) - 1
    )
    return FollowUp(
        sha=sha,
        parent=parent,
        subject=git.commit_subject(repo, sha),
        merge=len(parents) > 1,
        between=between,
    )
