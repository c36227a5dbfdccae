"""Branch protection as data: GitHub's ``branches/B/protection`` JSON, read for gate A.

GitHub's REST API returns a protected branch's rules from ``GET /repos/O/R/branches/B/protection``
(https://docs.github.com/en/rest/branches/branch-protection#get-branch-protection):
``required_pull_request_reviews`` (``required_approving_review_count``,
``require_code_owner_reviews``, ``dismiss_stale_reviews``), ``required_status_checks``
(``contexts``, ``checks[].context``, ``strict``) and ``required_conversation_resolution.enabled``.
An absent object means the rule is off.

Gate A applies them as the stricter of the branch's rule and repogate's own: the branch can raise
the approvals needed and require code-owner review; it cannot relax what repogate always holds
(approvals bound to the patch digest, so stale ones never count; review threads resolved). Where
the branch is laxer, gate A's details say so. Required status checks are recorded for the
reader: repogate does not observe other CI jobs.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from repogate._files import read_json_object
from repogate._model import ForeignModel, FrozenModel
from repogate._problems import every_problem
from repogate.errors import EvidenceError

__all__ = ["BranchProtection", "load_protection"]

_FIX = "give the JSON of GET /repos/O/R/branches/B/protection (see docs/reviews.md)"


class _Reviews(ForeignModel):
    required_approving_review_count: int = Field(default=0, ge=0, le=6)
    require_code_owner_reviews: bool = False
    dismiss_stale_reviews: bool = False


class _Check(ForeignModel):
    context: str


class _StatusChecks(ForeignModel):
    strict: bool = False
    contexts: tuple[str, ...] = ()
    checks: tuple[_Check, ...] = ()


class _Enabled(ForeignModel):
    enabled: bool = False


class _Protection(ForeignModel):
    required_pull_request_reviews: _Reviews | None = None
    required_status_checks: _StatusChecks | None = None
    required_conversation_resolution: _Enabled | None = None


class BranchProtection(FrozenModel):
    """A protected branch's rules as gate A reads them.

    Attributes:
        required_approvals: approving reviews the branch requires (0 when reviews are not required).
        code_owner_reviews: the branch requires a code owner's review.
        dismiss_stale_reviews: the branch dismisses approvals when new commits are pushed.
        conversation_resolution: the branch requires review conversations resolved.
        status_checks: the status checks the branch requires, by context name.
        source: the file it was read from.
    """

    required_approvals: int = 0
    code_owner_reviews: bool = False
    dismiss_stale_reviews: bool = False
    conversation_resolution: bool = False
    status_checks: tuple[str, ...] = ()
    source: str = ""

    def laxer_than_repogate(self) -> list[str]:
        """Return the branch's rules that are laxer than what repogate always holds."""
        notes = []
        if not self.dismiss_stale_reviews:
            notes.append("the branch keeps stale approvals; repogate binds approvals to the patch")
        if not self.conversation_resolution:
            notes.append("the branch does not require resolved conversations; repogate does")
        return notes


def load_protection(path: Path) -> BranchProtection:
    """Read GitHub's branch-protection JSON.

    Raises:
        EvidenceError: the file is missing, not JSON, not an object, or of another shape (the key
            named).
    """
    data = read_json_object(path, "branch protection file", EvidenceError, _FIX)
    try:
        raw = _Protection.model_validate(data)
    except ValidationError as exc:
        raise EvidenceError(
            f"branch protection file {path} is not in GitHub's shape: {every_problem(exc, _Protection)}",
            _FIX,
        ) from None
    reviews = raw.required_pull_request_reviews
    checks = raw.required_status_checks
    contexts = () if checks is None else (*checks.contexts, *(c.context for c in checks.checks))
    resolution = raw.required_conversation_resolution
    return BranchProtection(
        required_approvals=0 if reviews is None else reviews.required_approving_review_count,
        code_owner_reviews=reviews is not None and reviews.require_code_owner_reviews,
        dismiss_stale_reviews=reviews is not None and reviews.dismiss_stale_reviews,
        conversation_resolution=resolution is not None and resolution.enabled,
        status_checks=tuple(dict.fromkeys(contexts)),
        source=str(path),
    )
