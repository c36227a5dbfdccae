"""GitHub's JSON shapes for a pull request's review history, as users export them.

REST (https://docs.github.com/en/rest/pulls): ``GET /repos/O/R/pulls/N`` (the pull request),
``.../pulls/N/reviews`` (reviews: ``user.login``, ``state``, ``commit_id``, ``submitted_at``,
``body``), ``.../pulls/N/comments`` (review comments: ``pull_request_review_id``, ``path``,
``line``, ``commit_id``, ``in_reply_to_id``), ``.../pulls/N/commits`` (``sha``,
``commit.committer.date``), ``GET /orgs/O/teams/T/members`` (a team's members: ``login``; review
JSON does not say which teams a reviewer belongs to). GraphQL (https://docs.github.com/en/graphql/reference/objects#pullrequestreviewthread):
``pullRequest { reviewThreads { nodes { isResolved isOutdated path line resolvedBy { login }
comments { nodes { body author { login } } } } } }``, as the whole response (``data.repository.
pullRequest.reviewThreads``) or its ``nodes`` list.

Only the fields repogate reads are declared; GitHub's many others are ignored. A file of another
shape is refused with the file, the item and the key named.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import AwareDatetime, ValidationError

from repogate._files import read_text
from repogate._model import ForeignModel
from repogate._problems import every_problem
from repogate.errors import EvidenceError
from repogate.gates.codeowners import is_team

__all__ = [
    "GitHubComment",
    "GitHubCommit",
    "GitHubPull",
    "GitHubReview",
    "GitHubThread",
    "read_list",
    "read_object",
    "read_team",
    "read_threads",
]

FIX = "give the JSON GitHub's API returns for it (see docs/reviews.md)"


class GitHubUser(ForeignModel):
    """A GitHub account (``user``, ``merged_by``, ``author``)."""

    login: str


class GitHubRef(ForeignModel):
    """A pull request's ``head`` or ``base``."""

    sha: str
    ref: str = ""


class GitHubPull(ForeignModel):
    """``pulls/N``: the pull request."""

    number: int
    user: GitHubUser | None = None
    state: Literal["open", "closed"] = "open"
    created_at: AwareDatetime
    merged: bool = False
    merged_at: AwareDatetime | None = None
    merged_by: GitHubUser | None = None
    head: GitHubRef
    base: GitHubRef


class GitHubReview(ForeignModel):
    """One item of ``pulls/N/reviews``."""

    id: int
    user: GitHubUser | None = None
    state: Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING"]
    commit_id: str | None = None
    submitted_at: AwareDatetime | None = None
    body: str | None = ""


class GitHubComment(ForeignModel):
    """One item of ``pulls/N/comments`` (a review comment on a line of the diff)."""

    id: int
    pull_request_review_id: int | None = None
    in_reply_to_id: int | None = None
    user: GitHubUser | None = None
    body: str = ""
    path: str = ""
    line: int | None = None
    commit_id: str | None = None
    created_at: AwareDatetime


class _CommitDate(ForeignModel):
    date: AwareDatetime


class _CommitBody(ForeignModel):
    committer: _CommitDate


class GitHubCommit(ForeignModel):
    """One item of ``pulls/N/commits``."""

    sha: str
    commit: _CommitBody

    @property
    def at(self) -> datetime:
        """When it was committed."""
        return self.commit.committer.date


class _ThreadComment(ForeignModel):
    body: str = ""
    author: GitHubUser | None = None


class _ThreadComments(ForeignModel):
    nodes: tuple[_ThreadComment, ...] = ()


class GitHubThread(ForeignModel):
    """One GraphQL ``PullRequestReviewThread`` node."""

    isResolved: bool
    isOutdated: bool = False
    path: str | None = None
    line: int | None = None
    resolvedBy: GitHubUser | None = None
    comments: _ThreadComments = _ThreadComments()


Shape = TypeVar("Shape", bound=ForeignModel)


def _load(path: Path, what: str) -> Any:
    text = read_text(path, what, EvidenceError, FIX)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise EvidenceError(f"{what} {path} is not JSON: {str(exc)[:200]}", FIX) from None


def _validate(shape: type[Shape], data: Any, where: str) -> Shape:
    try:
        return shape.model_validate(data)
    except ValidationError as exc:
        raise EvidenceError(
            f"{where} is not in GitHub's shape: {every_problem(exc, shape)}", FIX
        ) from None


def read_object(path: Path, shape: type[Shape], what: str) -> Shape:
    """Read one JSON object of ``shape`` from ``path``.

    Raises:
        EvidenceError: unreadable, not JSON, or not that shape (key named).
    """
    return _validate(shape, _load(path, what), f"{what} {path}")


def read_list(path: Path, shape: type[Shape], what: str) -> tuple[Shape, ...]:
    """Read a JSON list of ``shape`` items from ``path`` (one page or pages joined).

    Raises:
        EvidenceError: unreadable, not JSON, not a list, or an item not of that shape (its index
            and key named).
    """
    data = _load(path, what)
    if not isinstance(data, list):
        raise EvidenceError(
            f"{what} {path}: expected a JSON list [...], got {type(data).__name__}", FIX
        )
    return tuple(_validate(shape, item, f"{what} {path} item {i}") for i, item in enumerate(data))


def read_threads(path: Path) -> tuple[GitHubThread, ...]:
    """Read GraphQL review threads: the whole response, ``reviewThreads``, or its ``nodes`` list.

    Raises:
        EvidenceError: unreadable, not JSON, or no thread nodes where GitHub puts them.
    """
    data = _load(path, "review threads file")
    for key in ("data", "repository", "pullRequest", "reviewThreads", "nodes"):
        if isinstance(data, dict) and key in data:
            data = data[key]
    if not isinstance(data, list):
        raise EvidenceError(
            f"review threads file {path} holds no reviewThreads nodes",
            "give GraphQL's response to pullRequest { reviewThreads { nodes { isResolved ... } } }",
        )
    return tuple(
        _validate(GitHubThread, item, f"review threads file {path} node {i}")
        for i, item in enumerate(data)
    )


def read_team(spec: str) -> tuple[str, frozenset[str]]:
    """Read ``ORG/TEAM=FILE``: a team's name and its members' logins (lower-cased).

    ``FILE`` holds what ``GET /orgs/ORG/teams/TEAM/members`` returns (a list of users; pages
    joined), so a review by one of them is a review by a member of ``@ORG/TEAM``
    (https://docs.github.com/en/rest/teams/members#list-team-members).

    Raises:
        EvidenceError: ``spec`` is not ``ORG/TEAM=FILE``, or the file is unreadable, not JSON or
            not a list of users.
    """
    name, sep, file = spec.partition("=")
    team = name.strip().removeprefix("@")
    if not sep or not file or not is_team(f"@{team}"):
        raise EvidenceError(
            f"team {spec!r} is not ORG/TEAM=FILE",
            "give the team as CODEOWNERS names it and the JSON of "
            "gh api orgs/ORG/teams/TEAM/members, e.g. --team acme/auth=auth-members.json",
        )
    members = read_list(Path(file), GitHubUser, f"members file of {team}")
    return team, frozenset(user.login.lower() for user in members)
