"""The ``repogate`` command line.

User errors print one line, ``error: <what>; <how to fix>``, on standard error and exit with
:attr:`ExitCode.USAGE`. Every exit code is a member of :class:`ExitCode`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from repogate._files import first_problem, read_text
from repogate._version import __version__
from repogate.contract import contract_schema
from repogate.decision import Decision, Evidence, decide
from repogate.errors import EvidenceError, ExitCode, RepogateError, UserInputError
from repogate.report.terminal import attempts_table, decision_table, print_table
from repogate.store import Store

__all__ = ["ExitCode", "app", "main"]

app = typer.Typer(
    name="repogate",
    help="Decide whether a coding agent's change became an accepted repository state transition.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_tasks() -> None:
    from repogate.cli_tasks import app as tasks_app

    app.add_typer(tasks_app, name="tasks")


_register_tasks()

SCHEMAS = ("contract", "evidence", "decision", "reviews")
INTERRUPTED_MESSAGE = "interrupted: finished attempts are kept; rerun the same command to resume"


def _schema_of(name: str) -> dict[str, Any]:
    from repogate.gates.authority import reviews_schema

    builders = {
        "contract": contract_schema,
        "reviews": reviews_schema,
        "evidence": Evidence.model_json_schema,
        "decision": Decision.model_json_schema,
    }
    if name not in builders:
        raise UserInputError(
            f"unknown schema {name!r}", f"choose one of: {', '.join(sorted(builders))}"
        )
    return builders[name]()


def load_evidence(path: Path) -> Evidence:
    """Read an evidence JSON file.

    Raises:
        EvidenceError: missing file, not JSON, wrong schema version, or not valid evidence.
    """
    text = read_text(path, "evidence file", EvidenceError, "give an evidence .json file")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EvidenceError(f"evidence file {path} is not JSON: {exc}", "fix the JSON") from None
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if version != 1:
        raise EvidenceError(
            f"evidence file {path} has schema_version {version!r}",
            "this repogate reads schema_version 1; `repogate schema evidence` prints it",
        )
    try:
        return Evidence.model_validate(raw)
    except ValidationError as exc:
        raise EvidenceError(
            f"evidence file {path}: {first_problem(exc)}",
            "`repogate schema evidence` prints the valid shape",
        ) from None


@app.command("decide")
def decide_cmd(
    evidence: Annotated[
        Path, typer.Argument(help="Evidence JSON (see `repogate schema evidence`).")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision as JSON.")] = False,
) -> None:
    """Apply the non-compensating gates to typed evidence; exit 0 when accepted, 1 when not."""
    decision = decide(load_evidence(evidence))
    if as_json:
        typer.echo(decision.model_dump_json(indent=2))
    else:
        print_table(decision_table(decision))
    raise typer.Exit(ExitCode.OK if decision.accepted else ExitCode.NOT_ACCEPTED)


@app.command("run")
def run_cmd(
    contracts: Annotated[
        list[Path] | None,
        typer.Argument(help="Contract TOML files; none runs the embedded default."),
    ] = None,
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            help="gold | null | predictions:FILE | cmd:'COMMAND' | scripted:FILE (repeatable).",
        ),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Run directory (rerun to resume).")] = Path(
        "repogate-run"
    ),
    repo_cache: Annotated[
        Path | None,
        typer.Option("--repo-cache", envvar="REPOGATE_REPO_CACHE", help="Local mirrors of URLs."),
    ] = None,
    epochs: Annotated[int, typer.Option("--epochs", min=1, help="Repeats of every attempt.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print decisions as JSON.")] = False,
    allow_weak_isolation: Annotated[
        bool,
        typer.Option(
            "--allow-weak-isolation",
            help="Run untrusted code (agents, the tests of their patches) without bubblewrap: "
            "it can then read and write your files. Warned and recorded. "
            "REPOGATE_ALLOW_WEAK_ISOLATION=1 does the same.",
        ),
    ] = False,
) -> None:
    """Run agents on contracts and decide each attempt; exit 0 when every attempt ran."""
    from repogate.cli_run import execute

    code = execute(
        contracts or [], agent or [], out, repo_cache, epochs, as_json, allow_weak_isolation
    )
    raise typer.Exit(code)


@app.command("schema")
def schema_cmd(
    name: Annotated[str, typer.Argument(help=f"One of: {', '.join(SCHEMAS)}.")],
) -> None:
    """Print the JSON Schema of a contract, evidence file or decision."""
    typer.echo(json.dumps(_schema_of(name), indent=2))


@app.command("show")
def show_cmd(
    run_dir: Annotated[Path, typer.Argument(help="A run directory written by `repogate run`.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print attempts as JSON.")] = False,
) -> None:
    """Print a run's attempts and decisions; an attempt left unfinished shows as interrupted."""
    from repogate.cli_run import agent_outcomes

    store = Store.open(run_dir)
    try:
        records = store.attempts()
        statuses = {key: said.status for key, said in agent_outcomes(store, records).items()}
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in records], indent=2))
    else:
        print_table(attempts_table(records, f"run {run_dir}", statuses, interrupted=True))


@app.command("version")
def version_cmd() -> None:
    """Print the evaluator version."""
    typer.echo(__version__)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (an :class:`ExitCode` value).

    Ctrl-C prints one line on how to resume and gives :attr:`ExitCode.INTERRUPTED`, however
    typer reports it: as ``KeyboardInterrupt``, as ``typer.Abort`` (click), or, as typer 0.29
    does, by returning 130 itself.
    """
    try:
        result = app(args=argv, standalone_mode=False)
    except UserInputError as exc:
        typer.echo(f"error: {exc}", err=True)
        return ExitCode.USAGE
    except RepogateError as exc:
        typer.echo(f"error: {exc}", err=True)
        return ExitCode.INTERNAL
    except typer.Exit as exc:
        return int(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        result = ExitCode.INTERRUPTED
    except typer.TyperException as exc:  # the command line's own usage errors
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            typer.echo(f"error: {exc}", err=True)
        return ExitCode.USAGE
    if result == ExitCode.INTERRUPTED:  # no command of ours returns it: only Ctrl-C does
        typer.echo(INTERRUPTED_MESSAGE, err=True)
    return int(result) if isinstance(result, int) else ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
