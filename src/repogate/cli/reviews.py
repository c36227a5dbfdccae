"""``repogate reviews import``: GitHub's review JSON to repogate's review evidence (gate A's input)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from repogate._counted import counted
from repogate.cli._help import plain_app

app = plain_app(
    "reviews",
    "Review evidence: import a pull request's reviews from GitHub's JSON.",
)


@app.command("import", short_help="GitHub review JSON as review evidence.")
def import_cmd(
    pull: Annotated[Path, typer.Option("--pull", metavar="FILE", help="pulls/N JSON (REST).")],
    reviews: Annotated[
        Path, typer.Option("--reviews", metavar="FILE", help="pulls/N/reviews JSON (REST).")
    ],
    out: Annotated[
        Path, typer.Option("--out", metavar="FILE", help="Review evidence JSON to write.")
    ],
    comments: Annotated[
        Path | None,
        typer.Option("--comments", metavar="FILE", help="pulls/N/comments JSON (REST)."),
    ] = None,
    threads: Annotated[
        Path | None,
        typer.Option("--threads", metavar="FILE", help="GraphQL pullRequest.reviewThreads JSON."),
    ] = None,
    commits: Annotated[
        Path | None, typer.Option("--commits", metavar="FILE", help="pulls/N/commits JSON (REST).")
    ] = None,
    repo: Annotated[
        Path,
        typer.Option("--repo", metavar="DIR", help="A clone holding the pull request's commits."),
    ] = Path(),
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            metavar="SHA",
            help="Base commit for digests; default: merge base of base and head.",
        ),
    ] = None,
    team: Annotated[
        list[str] | None,
        typer.Option(
            "--team",
            metavar="ORG/TEAM=FILE",
            help="A team's orgs/O/teams/T/members JSON (REST); repeatable.",
        ),
    ] = None,
) -> None:
    """Bind each review to its commit's patch digest; write the evidence whole or not at all."""
    from repogate._locks import write_atomic
    from repogate.reviews import (
        GitHubComment,
        GitHubCommit,
        GitHubExport,
        GitHubPull,
        GitHubReview,
        import_reviews,
        read_list,
        read_object,
        read_team,
        read_threads,
    )

    export = GitHubExport(
        pull=read_object(pull, GitHubPull, "pull request file"),
        reviews=read_list(reviews, GitHubReview, "reviews file"),
        comments=() if comments is None else read_list(comments, GitHubComment, "comments file"),
        threads=None if threads is None else read_threads(threads),
        commits=None if commits is None else read_list(commits, GitHubCommit, "commits file"),
        team_members=dict(read_team(spec) for spec in team or ()),
    )
    evidence = import_reviews(export, repo.resolve(), base)
    write_atomic(out, evidence.model_dump_json(indent=2) + "\n")
    bound = sum(1 for r in evidence.reviews if r.patch_digest is not None)
    typer.echo(
        f"{out}: {counted(len(evidence.reviews), 'review')} ({bound} bound to a patch digest), "
        f"{counted(len(evidence.threads), 'thread')}"
    )
    for note in evidence.notes:
        typer.echo(f"note: {note}")
