"""``repogate keygen`` and ``repogate verify``: make a signing key pair, check signed verdicts.

``verify`` exits 0 when every signature, digest and state id checks out, 1 naming every failing
file (one line each, ``FAIL file: what``; a folder it cannot list or a file it cannot read is
such a line too, never skipped), and 2 for bad input (a missing or unreadable key, a folder
holding no verdict). A target with no signature at all (a run made without ``--sign-key``) is
said once to be unsigned, and exits 1 as well; its finished attempts' evidence is then checked
as ``show`` and ``report`` check it (:meth:`repogate.store.Store.changed_evidence`): a changed
one is a ``FAIL attempts/ID: evidence changed ...`` line, and only a run whose evidence is intact
is told to rerun with ``--sign-key`` into the same folder (:data:`UNSIGNED`).
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
        changed = _changed_evidence(target)
        for attempt_id, problems in changed.items():
            typer.echo(
                f"FAIL attempts/{visible(attempt_id)}: evidence changed since it was stored "
                f"({visible(', '.join(problems))})"
            )
        if changed:
            typer.echo(
                f"{target}: not signed, and {counted(len(changed), 'attempt')}'s evidence "
                "changed since it was stored: its verdict is not trusted (a rerun into this "
                "folder is refused); rerun into a new --out folder, with --sign-key FILE to sign it"
            )
        else:
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


def _changed_evidence(target: Path) -> dict[str, tuple[str, ...]]:
    """What changed since it was stored in ``target``'s finished attempts, by attempt id.

    ``target`` is a run folder, an attempt folder of one or its ``decision.json``; its run's
    store checks every finished attempt's digest chain as for ``show`` and ``report``
    (:meth:`repogate.store.Store.changed_evidence`), and an attempt's own is kept. Empty when
    nothing changed, or when ``target`` is in no run folder (a copied verdict: no store to check).
    """
    from repogate.errors import RunDirError
    from repogate.store import DB_NAME, DECISION_FILE, Store

    folder = target.parent if target.name == DECISION_FILE and not target.is_dir() else target
    run_dir, only = (
        (folder, None) if (folder / DB_NAME).is_file() else (folder.parent.parent, folder.name)
    )
    try:
        with Store.open(run_dir) as store:
            changed = store.changed_evidence()
    except RunDirError:
        return {}
    return {k: v for k, v in changed.items() if only is None or k == only}


def register(app: typer.Typer) -> None:
    """Add ``keygen`` and ``verify`` to the ``repogate`` command line."""
    app.command("keygen", short_help="Write an ed25519 key pair for signing.")(keygen_cmd)
    app.command("verify", short_help="Check a run's signatures and receipt digests.")(verify_cmd)
