"""``repogate gate``: decide a pull request's head in CI; exit 1 when not accepted (0 in shadow mode)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from repogate.sandbox import WEAK_FLAG


def gate_cmd(
    contract: Annotated[
        Path, typer.Option("--contract", metavar="FILE", help="The repository's contract TOML.")
    ],
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            metavar="SHA",
            help="Base commit; default: merge base of GITHUB_BASE_REF and head, else the "
            "contract's base_commit (a contract naming one must agree).",
        ),
    ] = None,
    head: Annotated[
        str | None,
        typer.Option("--head", metavar="SHA", help="Candidate commit; default: GITHUB_SHA."),
    ] = None,
    reviews: Annotated[
        Path | None,
        typer.Option(
            "--reviews", metavar="FILE", help="Review evidence JSON (`repogate schema reviews`)."
        ),
    ] = None,
    fail_to_pass: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-to-pass",
            metavar="ID",
            help="A test id the pull request must make pass (repeatable); taken from the head.",
        ),
    ] = None,
    protection: Annotated[
        Path | None,
        typer.Option(
            "--protection", metavar="FILE", help="GitHub's branches/B/protection JSON for the base."
        ),
    ] = None,
    repo: Annotated[
        Path | None,
        typer.Option(
            "--repo", metavar="DIR", help="The repository; default: GITHUB_WORKSPACE, else here."
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", metavar="DIR", help="Run folder for the verdict.")
    ] = Path("repogate-gate"),
    sign_key: Annotated[
        str | None,
        typer.Option(
            "--sign-key",
            metavar="FILE|env:NAME",
            help="ed25519 private key: a PEM file, or env:NAME.",
        ),
    ] = None,
    shadow: Annotated[
        bool, typer.Option("--shadow", help="Record the verdict without failing the job.")
    ] = False,
    allow_weak_isolation: Annotated[
        bool,
        typer.Option(
            "--allow-weak-isolation",
            help="Run the candidate's tests without bubblewrap (warned and recorded).",
        ),
    ] = False,
) -> None:
    """Evaluate a pull request's head as the candidate; exit 1 when not accepted."""
    from repogate.ci import exit_code, resolve_request, run_gate
    from repogate.cli.run import check_out_folder
    from repogate.cli.terminal import decision_table, print_table
    from repogate.provenance import load_signer

    signer = None if sign_key is None else load_signer(sign_key)
    request = resolve_request(
        contract,
        base=base,
        head=head,
        repo=repo,
        reviews=reviews,
        fail_to_pass=fail_to_pass or (),
        protection=protection,
    )
    check_out_folder(out)
    outcome = run_gate(
        request,
        out.resolve(),
        signer=signer,
        shadow=shadow,
        weak_isolation=WEAK_FLAG if allow_weak_isolation else None,
        env=os.environ,
    )
    if outcome.record.decision is not None:
        print_table(decision_table(outcome.record.decision))
    elif outcome.record.crash is not None:
        typer.echo(f"crashed: {outcome.record.crash}", err=True)
    if shadow:
        typer.echo("shadow mode: verdict recorded, the job is not failed")
    raise typer.Exit(exit_code(outcome.record, shadow))


def register(app: typer.Typer) -> None:
    """Add ``gate`` to the ``repogate`` command line."""
    app.command("gate", short_help="A pull request's head as the candidate, in CI.")(gate_cmd)
