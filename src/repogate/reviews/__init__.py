"""Review evidence from GitHub: read its REST and GraphQL JSON, bind each review to a patch digest.

:mod:`~repogate.reviews.github` declares GitHub's shapes; :mod:`~repogate.reviews.importer` binds
reviews to patch digests and measures the review history (``repogate reviews import``).
"""

from __future__ import annotations

from repogate.reviews.github import (
    GitHubComment,
    GitHubCommit,
    GitHubPull,
    GitHubReview,
    GitHubThread,
    read_list,
    read_object,
    read_team,
    read_threads,
)
from repogate.reviews.importer import GitHubExport, import_reviews

__all__ = [
    "GitHubComment",
    "GitHubCommit",
    "GitHubExport",
    "GitHubPull",
    "GitHubReview",
    "GitHubThread",
    "import_reviews",
    "read_list",
    "read_object",
    "read_team",
    "read_threads",
]
