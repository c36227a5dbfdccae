"""``repogate keygen`` and ``repogate verify``: make a signing key pair, check signed verdicts.

``verify`` exits 0 when every signature, digest and state id checks out, 1 naming every failing
file (one line each, ``FAIL file: what``; a folder it cannot list or a file it cannot read is
such a line too, never skipped), and 2 for bad input (a missing or unreadable key, a folder
holding no verdict). A target with no signature at all (a run made without ``--sign-key``) is
said once to be unsigned, with how to sign it (:data:`UNSIGNED`), and exits 1 as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from repogate._counted import counted
from repogate.errors import ExitCode

UNSIGNED = (
    "not signed: no decision or run summary carries a signature (give --sign-key FILE, a key "
    "from `repogate keygen`, to the `repogate run` or `repogate gate` command that made it and "
    "rerun it: its finished attempts are kept and signed)"
)
"""What ``verify`` says of a target nothing in which is signed, in place of a line per verdict."""


def keygen_cmd(
    out: Annotated[
        Path,
        typer.Option("--out", metavar="DIR", help="Folder for the key pair (made if missing)."),
    ],
) -> None:
    """Write an ed25519 key pair: repogate-signing.key (private, 0600) and .pub.json (public)."""
    from repogate.provenance import generate

    private, public = generate(out)
    typer.echo(f"private key: {private} (keep it secret; give it to `repogate run --sign-key`)")
    typer.echo(f"public key: {public} (give it to `repogate verify --key`)")


def verify_cmd(
    target: Annotated[
        Path,
        typer.Argument(
            metavar="TARGET", help="A run folder, an attempt folder, or a decision.json."
        ),
    ],
    key: Annotated[
        Path,
        typer.Option("--key", metavar="FILE", help="The signer's public key (.pub.json or PEM)."),
    ],
) -> None:
    """Check signatures, every receipt's digest and state id; exit 1 naming every failing file."""
    from repogate.provenance import NOT_SIGNED, load_public_key, verify_target
    from repogate.receipt import visible

    public = load_public_key(key)
    found = verify_target(target, public)
    for problem in found.problems:
        if found.unsigned and problem.message == NOT_SIGNED:
            continue  # said once, below, for the whole target
        # a file name is the writer's choice: one line, escaped (a non-UTF-8 name is a surrogate)
        typer.echo(f"FAIL {visible(problem.file)}: {visible(problem.message)}")
    if found.unsigned:
        typer.echo(f"{target}: {UNSIGNED}")
        raise typer.Exit(ExitCode.NOT_ACCEPTED)
    summary = " and the run summary" if found.run_summary else ""
    if found.problems:
        failing = len({p.file for p in found.problems})
        typer.echo(
            f"{target}: {counted(failing, 'failing file')}; "
            f"{counted(found.decisions, 'decision')} verified{summary}"
        )
        raise typer.Exit(ExitCode.NOT_ACCEPTED)
    typer.echo(
        f"{target}: verified {counted(found.decisions, 'decision')}{summary} with key "
        f"{public.keyid[:16]}"
    )


def register(app: typer.Typer) -> None:
    """Add ``keygen`` and ``verify`` to the ``repogate`` command line."""
    app.command("keygen", short_help="Write an ed25519 key pair for signing.")(keygen_cmd)
    app.command("verify", short_help="Check a run's signatures and receipt digests.")(verify_cmd)
