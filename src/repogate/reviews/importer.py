"""Turn a GitHub pull request's review history into repogate's review evidence.

Each review is bound to the commit it was given on (its ``commit_id``) and so to that commit's
patch digest: sha256 of ``git diff --binary --full-index BASE COMMIT``, the digest gate A compares
with the candidate's (:func:`repogate.state.patch_digest`). BASE is the merge base of the pull
request's base and head (``--base`` overrides it), the base ``repogate gate`` uses.

GitHub's rule "Dismiss stale pull request approvals when new commits are pushed"
(https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches#require-pull-request-reviews-before-merging)
is what binding by digest enforces: an approval counts only for the patch it saw, so a later
commit that changes the patch leaves it stale, and one that leaves the patch unchanged does not.
A review whose ``commit_id`` is null (the commit was garbage-collected after a force-push) binds to
no patch and never counts; the evidence says so in ``notes``. A review on a commit that is not in
the pull request is refused: it belongs to another change.

``DISMISSED`` reviews were withdrawn on GitHub and count as comments; ``PENDING`` ones were never
submitted and are left out. Review threads come from GraphQL (``isResolved``, ``isOutdated``,
``path``, ``line``); REST review comments alone do not say whether a thread was resolved, so
without threads they only count as concerns raised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from repogate import git
from repogate.errors import EvidenceError, GitError
from repogate.gates.authority import Review, ReviewEvidence, ReviewMetrics, ReviewState, Thread
from repogate.reviews.github import (
    GitHubComment,
    GitHubCommit,
    GitHubPull,
    GitHubReview,
    GitHubThread,
)
from repogate.state import patch_digest

__all__ = ["GitHubExport", "import_reviews"]

_STATES: dict[str, ReviewState] = {
    "APPROVED": "approved",
    "CHANGES_REQUESTED": "changes_requested",
    "COMMENTED": "commented",
    "DISMISSED": "commented",
}


@dataclass(frozen=True)
class GitHubExport:
    """What the user exported from GitHub for one pull request (read by :mod:`.github`).

    Attributes:
        pull, reviews, comments, threads, commits: the pull request's REST and GraphQL JSON.
        team_members: team (``org/team``) to its members' lower-cased logins, from
            ``orgs/O/teams/T/members``: each review gets the teams its reviewer is a member of,
            so an approval can satisfy a CODEOWNERS rule naming ``@org/team``.
    """

    pull: GitHubPull
    reviews: tuple[GitHubReview, ...]
    comments: tuple[GitHubComment, ...] = ()
    threads: tuple[GitHubThread, ...] | None = None
    commits: tuple[GitHubCommit, ...] | None = None
    team_members: Mapping[str, frozenset[str]] = field(default_factory=dict)


def _digests(repo: Path, base: str, commits: Sequence[str]) -> dict[str, str]:
    found = {}
    for sha in commits:
        try:
            found[sha] = patch_digest(git.diff_binary(repo, base, sha))
        except GitError:
            raise EvidenceError(
                f"commit {sha} of the pull request is not in {repo}",
                "fetch the pull request's commits into the repository (git fetch origin pull/N/head)",
            ) from None
    return found


def _base(repo: Path, pull: GitHubPull, base: str | None) -> str:
    try:
        if base is not None:
            return git.rev_parse(repo, f"{base}^{{commit}}")
        merge_base = git.merge_base(repo, pull.base.sha, pull.head.sha)
    except GitError:
        raise EvidenceError(
            f"the pull request's base {base or pull.base.sha} or head {pull.head.sha} is not in {repo}",
            "give --repo a clone holding both (git fetch origin pull/N/head), or --base SHA",
        ) from None
    return merge_base or pull.base.sha


def _review(
    item: GitHubReview,
    digests: dict[str, str],
    notes: list[str],
    team_members: Mapping[str, frozenset[str]],
) -> Review | None:
    if item.state == "PENDING" or item.submitted_at is None:
        return None
    who = item.user.login if item.user is not None else "ghost"
    teams = tuple(sorted(team for team, members in team_members.items() if who.lower() in members))
    note = "dismissed on GitHub" if item.state == "DISMISSED" else ""
    if item.commit_id is None:
        notes.append(
            f"review {item.id} by {who} has no commit_id (its commit was garbage-collected): "
            "it binds to no patch and never counts"
        )
        return Review(
            reviewer=who,
            teams=teams,
            state=_STATES[item.state],
            patch_digest=None,
            at=item.submitted_at,
            note="; ".join(filter(None, [note, "commit unknown: binds to no patch"])),
        )
    if item.commit_id not in digests:
        raise EvidenceError(
            f"review {item.id} by {who} is on commit {item.commit_id}, which is not in the pull request",
            "export pulls/N/commits of the same pull request with --commits, or drop that review",
        )
    return Review(
        reviewer=who,
        teams=teams,
        state=_STATES[item.state],
        patch_digest=digests[item.commit_id],
        at=item.submitted_at,
        commit=item.commit_id,
        note=note,
    )


def _thread(node: GitHubThread) -> Thread:
    first = node.comments.nodes[0].body if node.comments.nodes else ""
    concern = " ".join(first.split())[:300] or f"thread on {node.path or 'the pull request'}"
    return Thread(
        concern=concern,
        resolved=node.isResolved,
        by=node.resolvedBy.login if node.resolvedBy is not None else "",
        path=node.path,
        line=node.line,
        outdated=node.isOutdated,
    )


def _metrics(export: GitHubExport, reviews: Sequence[Review]) -> ReviewMetrics:
    pull = export.pull
    first = min((r.at for r in reviews), default=None)
    commented = {c.pull_request_review_id for c in export.comments}
    substantive = sum(
        1
        for item in export.reviews
        if item.state == "CHANGES_REQUESTED"
        or (item.state != "PENDING" and (bool((item.body or "").strip()) or item.id in commented))
    )
    roots = [c for c in export.comments if c.in_reply_to_id is None]
    concerns = len(export.threads) if export.threads is not None else len(roots)
    after = sum(1 for c in export.commits or () if c.at > first) if first is not None else 0
    disposition = "merged" if pull.merged else "closed" if pull.state == "closed" else "open"
    return ReviewMetrics(
        minutes_to_first_review=None
        if first is None
        else round((first - pull.created_at).total_seconds() / 60, 2),
        substantive_rounds=substantive,
        concerns_raised=concerns,
        commits_after_first_review=after,
        final_disposition=disposition,
    )


def import_reviews(export: GitHubExport, repo: Path, base: str | None = None) -> ReviewEvidence:
    """Bind a pull request's reviews to patch digests and return repogate's review evidence.

    Args:
        export: the pull request, its reviews, and optionally comments, threads and commits.
        repo: a clone holding the pull request's base and commits.
        base: the base commit digests are taken against; None: the merge base of the pull
            request's base and head.

    Returns:
        Review evidence (``repogate schema reviews``) with ``metrics`` and ``notes`` filled in;
        each review's ``teams`` are the exported teams its reviewer is a member of.

    Raises:
        EvidenceError: a review on a commit not in the pull request, or commits missing from
            ``repo``; the message names the review or commit.
    """
    pull = export.pull
    commits = [c.sha for c in export.commits] if export.commits is not None else [pull.head.sha]
    digests = _digests(repo, _base(repo, pull, base), list(dict.fromkeys(commits)))
    notes: list[str] = []
    members = export.team_members
    reviews = [r for i in export.reviews if (r := _review(i, digests, notes, members)) is not None]
    threads = tuple(_thread(node) for node in export.threads or ())
    if export.threads is None and export.comments:
        notes.append(
            f"{len(export.comments)} review comments without --threads: whether their threads "
            "were resolved is unknown; counted as concerns only"
        )
    return ReviewEvidence(
        reviews=tuple(reviews),
        threads=threads,
        merged_by=pull.merged_by.login if pull.merged_by is not None else None,
        metrics=_metrics(export, reviews),
        notes=tuple(notes),
    )
