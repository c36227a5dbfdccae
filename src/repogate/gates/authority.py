"""Gate A, authority: checks ``code_owner_approved`` and ``review_threads_resolved``.

Who may let a change land is read from outside the patch: CODEOWNERS at the *base* commit (a patch
must not grant itself owners) and a review-evidence file written by the reviewers' side, never by
the agent. The rules follow GitHub's branch protection ("Require review from Code Owners",
"Dismiss stale pull request approvals when new commits are pushed"):

* every changed path whose base CODEOWNERS rule names owners needs an approval from one of them
  (a user, or a member of an owning team) given on the *current* patch digest;
* an approval given on an earlier digest is stale and does not count;
* the author's own approval never counts; at least ``min_approvals`` valid approvals are needed;
* a reviewer whose latest verdict is "changes requested" blocks, whichever digest it was given on
  (as on GitHub, a new push dismisses approvals but not change requests) until that reviewer
  approves;
* the agent never holds merge authority: evidence that the author merged fails the check.

Review rounds, concerns, minutes and changes after review are reported as soft metrics in
``details``; they never change the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import AwareDatetime, Field, StrictBool, StrictFloat, StrictInt, ValidationError

from repogate._files import read_json_object
from repogate._model import FrozenModel, SchemaVersion
from repogate._problems import every_problem
from repogate.errors import EvidenceError
from repogate.gates.codeowners import CodeownersProblem, Owners, validate_codeowners
from repogate.gates.concerns import threads_check
from repogate.gates.protection import BranchProtection
from repogate.git import ChangedPath
from repogate.receipt import Check, Observation
from repogate.vocabulary import CheckName, ErrorKind

__all__ = [
    "AuthorityObservation",
    "CodeownersProblem",
    "Review",
    "ReviewEvidence",
    "ReviewMetrics",
    "Thread",
    "check_authority",
    "load_reviews",
    "reviews_schema",
    "soft_metrics",
    "validate_codeowners",
]

CANDIDATE_PLACEHOLDER = "{{candidate}}"
APPROVED: CheckName = "code_owner_approved"
ReviewState = Literal["approved", "changes_requested", "commented"]


class Review(FrozenModel):
    """One review of one patch digest.

    Attributes:
        reviewer: the reviewer's login (``alice`` or ``@alice``) or email address.
        teams: teams the reviewer belongs to, ``org/team`` (a leading ``@`` is allowed).
        state: ``approved``, ``changes_requested`` or ``commented``.
        patch_digest: sha256 (64 hex) of the patch the review was given on; None when the
            review binds to no known patch (GitHub's ``commit_id`` is null once the commit was
            garbage-collected): such an approval never counts.
        at: when the review was given (with a time zone).
        minutes: time the reviewer spent, in minutes.
        commit: the commit the review was given on, when known (GitHub's ``commit_id``).
        note: how the review was read (``dismissed on GitHub``, ``commit unknown``).
    """

    reviewer: str = Field(min_length=1)
    teams: tuple[str, ...] = ()
    state: ReviewState
    patch_digest: str | None = Field(pattern=r"^[0-9a-f]{64}$")
    at: AwareDatetime
    minutes: StrictFloat = Field(default=0.0, ge=0)
    commit: str | None = None
    note: str = ""


class Thread(FrozenModel):
    """One review thread: the concern raised, whether and how it was resolved, and by whom.

    Attributes:
        concern: the concern, in words (the thread's first comment).
        resolved: whether the reviewers marked it resolved (GitHub's ``isResolved``).
        resolution: how it was resolved.
        by: who resolved it.
        path: the file the thread is on, when it is on one.
        line: the line it is on, when known.
        outdated: the code it was on has changed since (GitHub's ``isOutdated``).
        test: a pytest id in the candidate that checks the concern: the thread is resolved only
            when it is marked so and this test passes on the candidate (:mod:`.concerns`).
    """

    concern: str
    resolved: StrictBool
    resolution: str = ""
    by: str = ""
    path: str | None = None
    line: StrictInt | None = None
    outdated: StrictBool = False
    test: str | None = None


class ReviewMetrics(FrozenModel):
    """Review measures read from a pull request's history; soft, they never change a verdict.

    Attributes:
        minutes_to_first_review: from the pull request's opening to its first submitted review.
        substantive_rounds: reviews that requested changes or said something (a body or comments).
        concerns_raised: review threads (or, without threads, top-level review comments).
        commits_after_first_review: commits dated after the first review.
        final_disposition: ``merged``, ``closed`` or ``open``.
    """

    minutes_to_first_review: StrictFloat | None = None
    substantive_rounds: StrictInt = 0
    concerns_raised: StrictInt = 0
    commits_after_first_review: StrictInt = 0
    final_disposition: Literal["merged", "closed", "open"] = "open"


class ReviewEvidence(FrozenModel):
    """The review evidence of one attempt (JSON; `repogate schema reviews` prints its schema).

    Attributes:
        schema_version: version of this record (1); another version is refused.
        reviews: every review, in any order (sorted by ``at`` when read).
        threads: the review threads.
        merged_by: who merged the change, when it was merged.
        metrics: review measures from an import (``repogate reviews import``); soft.
        notes: what an import could not bind or read, one sentence each.
    """

    schema_version: SchemaVersion = 1
    reviews: tuple[Review, ...] = ()
    threads: tuple[Thread, ...] = ()
    merged_by: str | None = None
    metrics: ReviewMetrics | None = None
    notes: tuple[str, ...] = ()


def reviews_schema() -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) of a review-evidence file."""
    return ReviewEvidence.model_json_schema()


def _substitute(data: Any, candidate_digest: str | None) -> Any:
    reviews = data.get("reviews") if isinstance(data, dict) else None
    if isinstance(reviews, list) and candidate_digest is not None:
        for review in reviews:
            if isinstance(review, dict) and review.get("patch_digest") == CANDIDATE_PLACEHOLDER:
                review["patch_digest"] = candidate_digest
    return data


def load_reviews(path: Path, candidate_digest: str | None = None) -> ReviewEvidence:
    """Read and validate a review-evidence file.

    Args:
        path: the JSON file.
        candidate_digest: only for a contract with ``authority.simulated_reviews``: the digest
            that replaces a ``"{{candidate}}"`` patch digest. Without it the placeholder is refused.

    Returns:
        The evidence.

    Raises:
        EvidenceError: the file is missing, is not JSON, is not a JSON object, or does not match
            the schema; the one-line message names the file and every bad key.
    """
    fix = "fix it; `repogate schema reviews` prints the schema"
    data = read_json_object(path, "review file", EvidenceError, fix)
    try:
        return ReviewEvidence.model_validate(_substitute(data, candidate_digest))
    except ValidationError as exc:
        raise EvidenceError(
            f"review file {path}: {every_problem(exc, ReviewEvidence)}", fix
        ) from None


def _norm(name: str) -> str:
    return name.strip().lstrip("@").lower()


def _is_owner(review: Review, owner: str) -> bool:
    if "/" in owner and owner.startswith("@"):
        return _norm(owner) in {_norm(team) for team in review.teams}
    return _norm(owner) == _norm(review.reviewer)


def _latest(reviews: Sequence[Review]) -> dict[str, Review]:
    """Return each reviewer's latest approval or change request on any digest (not comments)."""
    latest: dict[str, Review] = {}
    for review in reviews:
        if review.state != "commented":
            latest[_norm(review.reviewer)] = review
    return latest


def soft_metrics(evidence: ReviewEvidence, patch_digest: str) -> dict[str, Any]:
    """Return the review soft metrics: rounds, concerns, minutes, changes after review, merger.

    ``review_rounds`` counts distinct digests reviewed; ``changes_after_review`` counts the
    distinct patch versions after the first one reviewed (the current patch included).
    """
    order: list[str] = []
    for review in sorted(evidence.reviews, key=lambda r: r.at):
        if review.patch_digest is not None and review.patch_digest not in order:
            order.append(review.patch_digest)
    versions = order + ([patch_digest] if order and patch_digest not in order else [])
    return {
        "review_rounds": len(order),
        "concerns_raised": len(evidence.threads),
        "review_minutes": sum(r.minutes for r in evidence.reviews),
        "changes_after_review": max(len(versions) - 1, 0),
        "merged_by": evidence.merged_by,
        **({} if evidence.metrics is None else {"github": evidence.metrics.model_dump()}),
    }


def _owner_failures(
    owners: Owners, changed: Sequence[ChangedPath], valid: Sequence[Review], stale: Sequence[Review]
) -> tuple[list[str], dict[str, list[str]]]:
    """Return the failure reasons for owned paths lacking an owner's approval, and the owner map."""
    needs: dict[tuple[str, ...], list[str]] = {}
    owner_map: dict[str, list[str]] = {}
    for path in sorted({p for c in changed for p in (c.path, c.old_path) if p}):
        path_owners = owners.of(path)
        owner_map[path] = list(path_owners)
        if path_owners and not any(_is_owner(r, o) for r in valid for o in path_owners):
            needs.setdefault(path_owners, []).append(path)
    reasons = []
    for path_owners, paths in needs.items():
        reason = f"{', '.join(paths)} need an approval from {' or '.join(path_owners)}"
        owned = [r for r in stale if any(_is_owner(r, o) for o in path_owners)]
        earlier = sorted({r.reviewer for r in owned if r.patch_digest is not None})
        unbound = sorted({r.reviewer for r in owned if r.patch_digest is None})
        if earlier:
            reason += f" (stale approval by {', '.join(earlier)} on an earlier patch)"
        if unbound:
            reason += f" (approval by {', '.join(unbound)} binds to no known patch)"
        reasons.append(reason + " on the current patch")
    return reasons, owner_map


def _approval_check(
    codeowners_text: str | None,
    changed: Sequence[ChangedPath],
    evidence: ReviewEvidence,
    patch_digest: str,
    author: str,
    min_approvals: int,
) -> tuple[Check, dict[str, Any]]:
    reviews = sorted(evidence.reviews, key=lambda r: r.at)
    latest = _latest(reviews)
    current = [
        r for r in latest.values() if r.state == "approved" and r.patch_digest == patch_digest
    ]
    own = [r for r in current if _norm(r.reviewer) == _norm(author)]
    valid = [r for r in current if r not in own]
    blocking = [r for r in latest.values() if r.state == "changes_requested"]
    approvers = {_norm(r.reviewer) for r in valid}
    stale = [
        r
        for r in reviews
        if r.state == "approved"
        and r.patch_digest != patch_digest
        and _norm(r.reviewer) not in approvers
        and _norm(r.reviewer) != _norm(author)
    ]
    owners = Owners(codeowners_text or "")
    reasons, owner_map = _owner_failures(owners, changed, valid, stale)
    if len(valid) < min_approvals:
        reasons.append(f"{len(valid)} of {min_approvals} required approvals on the current patch")
    reasons += [
        f"changes requested by {r.reviewer}"
        + ("" if r.patch_digest == patch_digest else " on an earlier patch")
        + " and not withdrawn by an approval"
        for r in blocking
    ]
    if evidence.merged_by is not None and _norm(evidence.merged_by) == _norm(author):
        reasons.append(f"merged by the author {author}: the agent never holds merge authority")
    notes = [f"approval by the author {author} does not count"] if own else []
    details: dict[str, Any] = {
        "owners": owner_map,
        "approvals": sorted(r.reviewer for r in valid),
        "stale_approvals": [
            {"reviewer": r.reviewer, "patch_digest": r.patch_digest} for r in stale
        ],
        "codeowners_problems": [{"line": p.line, "message": p.message} for p in owners.problems],
    }
    if owners.problems:
        lines = "; ".join(str(p) for p in owners.problems)
        detail = f"CODEOWNERS at the base has lines GitHub rejects and skips ({lines}); " + (
            "owners were computed without them; fix the file"
        )
        return Check.error(APPROVED, detail, "other evaluator error"), details
    if reasons:
        return Check(name=APPROVED, status="failed", detail="; ".join(reasons + notes)), details
    names = ", ".join(sorted(r.reviewer for r in valid)) or "nobody (none required)"
    detail = "; ".join([f"approved by {names} on the current patch", *notes])
    return Check(name=APPROVED, status="passed", detail=detail), details


class AuthorityObservation(Observation):
    """Gate A's observation, with the review soft metrics the decision records.

    Attributes:
        review_minutes: minutes the reviews report, summed.
        review_rounds: distinct patch digests reviewed.
    """

    review_minutes: float = 0.0
    review_rounds: int = 0


def check_authority(
    codeowners_text: str | None,
    changed: Sequence[ChangedPath],
    reviews: ReviewEvidence | None,
    patch_digest: str,
    author: str,
    min_approvals: int,
    protection: BranchProtection | None = None,
    concern_outcomes: Mapping[str, str] | None = None,
    concern_error: str | None = None,
    concern_error_kind: ErrorKind = "other evaluator error",
) -> AuthorityObservation:
    """Decide ``code_owner_approved`` and ``review_threads_resolved`` for one candidate.

    Args:
        codeowners_text: the CODEOWNERS file read at the *base* commit (None: none there).
        changed: the paths the patch changes.
        reviews: the review evidence (None: no reviews were given).
        patch_digest: the digest of the patch under evaluation.
        author: who wrote the patch (the contract's ``authority.author``).
        min_approvals: valid approvals needed overall.
        protection: the target branch's protection rules (:mod:`repogate.gates.protection`):
            its approval count applies when higher than ``min_approvals``; where it is laxer
            than repogate, ``details`` says so.
        concern_outcomes: each thread test's outcome on the candidate (:mod:`.concerns`).
        concern_error: why the thread tests could not run, when they could not.
        concern_error_kind: the kind of that error (:data:`repogate.vocabulary.ERROR_KINDS`).

    Returns:
        Two checks. ``code_owner_approved`` errors when the base CODEOWNERS has a line GitHub
        rejects (the owners GitHub would require differ from the file as written), naming the
        line. ``details`` holds owners per path, approvals, stale approvals, CODEOWNERS problems,
        and the soft metrics of :func:`soft_metrics` (review minutes and rounds also typed).
    """
    evidence = reviews or ReviewEvidence()
    needed = max(min_approvals, protection.required_approvals if protection else 0)
    approval, details = _approval_check(
        codeowners_text, changed, evidence, patch_digest, author, needed
    )
    if protection is not None:
        details["branch_protection"] = {
            **protection.model_dump(),
            "approvals_needed": needed,
            "laxer_than_repogate": protection.laxer_than_repogate(),
        }
    metrics = soft_metrics(evidence, patch_digest)
    details.update(metrics)
    details["unresolved_threads"] = [t.concern for t in evidence.threads if not t.resolved]
    if concern_outcomes:
        details["concern_tests"] = dict(concern_outcomes)
    return AuthorityObservation(
        checks=(
            approval,
            threads_check(
                evidence.threads, concern_outcomes or {}, concern_error, concern_error_kind
            ),
        ),
        details=details,
        review_minutes=float(metrics["review_minutes"]),
        review_rounds=int(metrics["review_rounds"]),
    )
