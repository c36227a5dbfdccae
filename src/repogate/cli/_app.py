"""The ``repogate`` command line.

User errors print one line, ``error: <what>; <how to fix>``, on standard error and exit with
:attr:`ExitCode.USAGE`. Every exit code is a member of :class:`ExitCode`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer import _click  # typer's vendored click: its usage errors

from repogate._interrupted import (
    interrupted_message,
    sigterm_as_ctrl_c,
)
from repogate._version import __version__
from repogate.cli._help import OutputClosed, plain_app
from repogate.errors import EvidenceError, ExitCode, RepogateError, RunDirError, UserInputError
from repogate.vocabulary import REPO_CACHE_HELP, attempt_state

if TYPE_CHECKING:  # each command loads what it uses: `version` and `--help` load none of them
    from repogate.cli.run import AgentOutcome
    from repogate.decision import Decision, Evidence
    from repogate.receipt import Receipt
    from repogate.store import AttemptRecord, Store


app = plain_app(
    "repogate",
    "Decide whether a coding agent's change became an accepted repository state transition.",
    pretty_exceptions_enable=False,
)


PROGRAM_VERSION = f"repogate {__version__}"
"""What ``repogate --version`` and ``repogate version`` print."""


def _print_version(given: bool) -> None:
    """``--version``: print :data:`PROGRAM_VERSION` and end the command line with exit 0."""
    if given:
        typer.echo(PROGRAM_VERSION)
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_print_version,
            help=f"Print the program and its version ({PROGRAM_VERSION}) and exit.",
        ),
    ] = False,
) -> None:
    """The options of ``repogate`` itself, before a command: ``--version`` (``-h``/``--help``)."""


def _register_tasks() -> None:
    from repogate.cli.tasks import app as tasks_app

    app.add_typer(tasks_app, name="tasks", short_help="Import, mine and check tasks.")


_register_tasks()


def _register_provenance() -> None:
    from repogate.cli.gate import register as register_gate
    from repogate.cli.provenance import register
    from repogate.cli.reviews import app as reviews_app

    register(app)
    register_gate(app)
    app.add_typer(reviews_app, name="reviews", short_help="Import GitHub review evidence.")


SCHEMAS = ("contract", "evidence", "decision", "reviews")


def _schema_of(name: str) -> dict[str, Any]:
    from repogate.contract import contract_schema
    from repogate.decision import Decision, Evidence
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
        EvidenceError: missing file, not JSON, not a JSON object, wrong schema version, or not
            valid evidence.
    """
    from pydantic import ValidationError

    from repogate._files import read_json_object
    from repogate._problems import every_problem
    from repogate.decision import Evidence

    raw = read_json_object(
        path,
        "evidence file",
        EvidenceError,
        "give one evidence object; `repogate schema evidence` prints its shape",
    )
    version = raw.get("schema_version")
    if version != 1:
        said = "no schema_version" if "schema_version" not in raw else f"schema_version {version!r}"
        raise EvidenceError(
            f"evidence file {path} has {said}",
            "this repogate reads schema_version 1; `repogate schema evidence` prints it",
        )
    try:
        return Evidence.model_validate(raw)
    except ValidationError as exc:
        raise EvidenceError(
            f"evidence file {path}: {every_problem(exc, Evidence)}",
            "`repogate schema evidence` prints the valid shape",
        ) from None


@app.command("decide", short_help="Apply the gates to evidence; exit 0 if accepted.")
def decide_cmd(
    evidence: Annotated[
        Path,
        typer.Argument(
            metavar="EVIDENCE.json", help="Evidence JSON (see `repogate schema evidence`)."
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the decision as JSON.")] = False,
) -> None:
    """Apply the non-compensating gates to typed evidence; exit 0 when accepted, 1 when not."""
    from repogate.cli.terminal import decision_table, print_table
    from repogate.decision import decide

    decision = decide(load_evidence(evidence))
    if as_json:
        typer.echo(decision.model_dump_json(indent=2))
    else:
        print_table(decision_table(decision))
    raise typer.Exit(ExitCode.OK if decision.accepted else ExitCode.NOT_ACCEPTED)


@app.command("run", short_help="Run agents on contracts and decide each attempt.")
def run_cmd(
    contracts: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="CONTRACT.toml", help="Contract TOML files; none runs the embedded default."
        ),
    ] = None,
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            metavar="SPEC",
            help="gold | null | predictions:FILE | cmd:'COMMAND' | scripted:FILE | baseline:MODEL"
            " | mini:MODEL | commit:SHA (repeatable; see docs/agents.md and docs/model-agents.md).",
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", metavar="DIR", help="Run directory (rerun to resume).")
    ] = Path("repogate-run"),
    repo_cache: Annotated[
        Path | None,
        typer.Option(
            "--repo-cache",
            metavar="DIR",
            envvar="REPOGATE_REPO_CACHE",
            help=REPO_CACHE_HELP,
        ),
    ] = None,
    epochs: Annotated[
        int, typer.Option("--epochs", metavar="N", min=1, help="Repeats of every attempt.")
    ] = 1,
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
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            metavar="N",
            help="Attempts at once (local: default 1; ray: default the cluster's).",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            "--executor", metavar="local|ray", help="Where attempts run (ray: repogate[ray])."
        ),
    ] = "local",
    require_all_predictions: Annotated[
        bool,
        typer.Option(
            "--require-all-predictions",
            help="Refuse a predictions file without a row for every contract, before any "
            "repository is read or built (default: a missing row is that agent's empty patch, "
            "status no_prediction, as SWE-bench counts it).",
        ),
    ] = False,
    sign_key: Annotated[
        str | None,
        typer.Option(
            "--sign-key",
            metavar="FILE|env:NAME",
            help="Sign every decision and the run summary with this ed25519 private key: a PEM "
            "file from `repogate keygen`, or env:NAME for a variable holding it.",
        ),
    ] = None,
    skip_sentinel_when_rejected: Annotated[
        bool,
        typer.Option(
            "--skip-sentinel-when-rejected",
            help="Do not run the post-merge sentinel (gate S) on an attempt a hard check has "
            "already failed: it cannot change a rejection. Its check reads skipped, naming the "
            "failed checks; the sentinel stage then covers only attempts not already rejected. "
            "Recorded in the run manifest; set by a run's first command, which a rerun into the "
            "same --out keeps. Default: the sentinel runs on every attempt.",
        ),
    ] = False,
) -> None:
    """Run agents on contracts and decide each attempt; exit 0 when every attempt ran."""
    from repogate.agents import parse_specs, requiring_all
    from repogate.cli.run import execute
    from repogate.executors import make_executor
    from repogate.provenance import load_signer

    specs = parse_specs(agent or [])  # every spec and the files it names, before any write
    if require_all_predictions:
        specs = requiring_all(specs)
    signer = None if sign_key is None else load_signer(sign_key)
    chosen = make_executor(executor, workers)
    code = execute(
        contracts or [],
        specs,
        out,
        repo_cache,
        epochs,
        as_json,
        allow_weak_isolation,
        chosen,
        signer,
        skip_sentinel_when_rejected=skip_sentinel_when_rejected,
    )
    raise typer.Exit(code)


@app.command("report", short_help="Acceptance with intervals, funnel, resolved.")
def report_cmd(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(metavar="RUN_DIR", help="Run directories written by `repogate run`."),
    ],
    by: Annotated[
        str | None,
        typer.Option(
            "--by", metavar="KEY", help="Group by this cohort tag (a contract's [cohort] key)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Write a self-contained HTML page to FILE (missing folders are created, and named).",
        ),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="swebench",
            help="swebench: print SWE-bench's report.json for one agent.",
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="AGENT",
            help="Baseline agent for the paired comparison and autonomy.",
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option("--agent", metavar="NAME", help="The agent --format swebench reports on."),
    ] = None,
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy",
            metavar="FILE",
            help="A TOML policy file: the autonomy rule's and gate claims' thresholds "
            "(docs/report.md; default: the documented defaults).",
        ),
    ] = None,
) -> None:
    """Report acceptance with intervals, the stage funnel, errors, resolved vs accepted, autonomy."""
    from repogate.cli.report import execute

    raise typer.Exit(execute(run_dirs, by, as_json, html, fmt, baseline, agent, policy))


@app.command("schema")
def schema_cmd(
    name: Annotated[str, typer.Argument(metavar="NAME", help=f"One of: {', '.join(SCHEMAS)}.")],
) -> None:
    """Print the JSON Schema of a contract, evidence file or decision."""
    typer.echo(json.dumps(_schema_of(name), indent=2))


@app.command("show", short_help="A run's attempts, or one attempt's checks.")
def show_cmd(
    run_dir: Annotated[
        Path, typer.Argument(metavar="RUN_DIR", help="A run directory written by `repogate run`.")
    ],
    attempt: Annotated[
        str | None,
        typer.Argument(
            metavar="N|ATTEMPT_ID",
            help="One attempt: its row number in the table (#) or its attempt id.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print attempts as JSON.")] = False,
) -> None:
    """Print a run's attempts (one line each), or one attempt's isolation, checks and evidence.

    One attempt: when it started and finished (UTC, to the minute), the isolation its tests
    ran under (from its decision) and the run's (agents and tests, from the manifest, with its
    warnings), every check, the soft measures with their units, whether the sentinel was left
    out (run --skip-sentinel-when-rejected) and why, its receipts and patch.

    Each finished attempt's evidence is checked. An attempt begun and not started yet shows as
    'not started'; one started and unfinished as 'running' while a run holds the folder's
    lock, else as 'interrupted'. An attempt whose evidence changed since
    it was stored (a receipt, decision.json or its store row) shows no verdict, is named on
    standard error, and the command exits 3.
    """
    from repogate.cli.run import AgentOutcome, agent_outcomes
    from repogate.cli.terminal import attempts_table, print_table
    from repogate.store import Store

    with Store.open(run_dir) as store:
        records = store.attempts()
        outcomes = agent_outcomes(store, records)
        statuses = {key: said.status for key, said in outcomes.items()}
        changed = {key: ", ".join(problems) for key, problems in store.changed_evidence().items()}
        live = store.being_written()
        receipts: list[str] = []
        run_isolation: list[str] = []
        sentinel: list[str] = []
        if attempt is not None:
            run_isolation = _run_isolation(store)
            record = _pick(records, attempt)
            sentinel = _sentinel_lines(store.receipts(record.attempt_id), record.decision)
            receipts = [
                p.name
                for p in sorted((store.attempt_dir(record.attempt_id) / "receipts").glob("*.json"))
            ]
            records = [record]
            changed = {k: v for k, v in changed.items() if k == record.attempt_id}
    if as_json:
        rows = [
            {
                **r.model_dump(mode="json"),
                "state": attempt_state(r.status, live=live),
                "evidence": _evidence_status(r, changed),
                "agent_status": outcomes[r.attempt_id].status if r.attempt_id in outcomes else None,
                "agent_detail": outcomes[r.attempt_id].detail if r.attempt_id in outcomes else None,
            }
            for r in records
        ]
        typer.echo(json.dumps(rows, indent=2))
    elif attempt is None:
        table = attempts_table(
            records, f"run {run_dir}", statuses, interrupted=not live, changed=changed
        )
        print_table(table)
        _show_injections(records)
    else:
        said = outcomes.get(records[0].attempt_id, AgentOutcome("done", ""))
        _show_one(run_dir, records[0], said, receipts, run_isolation, sentinel, live=live)
    for attempt_id, problems in changed.items():
        typer.echo(
            f"error: attempt {attempt_id}: evidence changed since it was stored ({problems}); "
            "its verdict is not trusted: rerun it into a new --out folder",
            err=True,
        )
    raise typer.Exit(ExitCode.INTERNAL if changed else ExitCode.OK)


def _show_injections(records: list[AttemptRecord]) -> None:
    """Acceptance with and without each injection, paired by task (nothing when none ran)."""
    from repogate.report.injections import injection_pairs, pairs_line

    seen = [(r.contract_id, r.agent, r.decision.outcome) for r in records if r.decision]
    line = pairs_line(injection_pairs(seen))
    if line:
        typer.echo(line)


def _evidence_status(record: AttemptRecord, changed: dict[str, str]) -> str:
    """``verified``, ``changed: <what>``, or ``unfinished`` (no chain to check yet)."""
    if record.attempt_id in changed:
        return f"changed: {changed[record.attempt_id]}"
    return "verified" if record.status == "done" else "unfinished"


def _pick(records: list[AttemptRecord], attempt: str) -> AttemptRecord:
    """The attempt named by its row number (1-based, as ``show`` numbers them) or its id."""
    if attempt.isdigit() and 1 <= int(attempt) <= len(records):
        return records[int(attempt) - 1]
    for record in records:
        if record.attempt_id == attempt:
            return record
    raise UserInputError(
        f"no attempt {attempt!r} in this run",
        f"give a row number 1..{len(records)} or an attempt id from `repogate show RUN_DIR`",
    )


def _run_isolation(store: Store) -> list[str]:
    """The lines saying the run's isolation and its warnings, from the run manifest."""
    from repogate.store import isolation_summary

    try:
        manifest = store.manifest()
    except RunDirError as exc:  # the attempt is still shown; the manifest's fault is said
        return [f"run's isolation: not known ({exc})"]
    warnings = manifest.warnings if manifest is not None else ()
    return [
        f"run's isolation: {isolation_summary(manifest)}",
        *(f"warning: {w}" for w in warnings),
    ]


def _sentinel_lines(receipts: list[Receipt], decision: Decision | None) -> list[str]:
    """The lines saying what gate S observed where the checks table does not.

    Gate S left out (``--skip-sentinel-when-rejected``): ``sentinel: not run: already rejected
    by focused_tests_passed (--skip-sentinel-when-rejected)``. Gate S run where its check is no
    check of the profile (hermetic: observed beside the verdict, as the run table's sentinel
    column shows it): ``sentinel: failed: <its detail> (observed, not a check of the hermetic
    profile: no part of the verdict)``. Empty when its check is a row of the decision's table
    (lifecycle) or gate S did not run.
    """
    gate_s = [r for r in receipts if r.gate == "S"]
    skipped = [
        f"sentinel: {check.detail} ({receipt.details['not_run']})"
        for receipt in gate_s
        if receipt.details.get("not_run")
        for check in receipt.checks
    ]
    if skipped or decision is None:
        return skipped
    from repogate.receipt import visible

    tabled = {c.name for c in (*decision.checks, *decision.advisory)}
    why = f"observed, not a check of the {decision.profile} profile: no part of the verdict"
    return [
        *(f"sentinel: error: {r.crash} ({why})" for r in gate_s if r.crash is not None),
        *(
            f"sentinel: {c.status}: {visible(c.detail)} ({why})"
            for r in gate_s
            for c in r.checks
            if c.name not in tabled
        ),
    ]


def _show_one(
    run_dir: Path,
    record: AttemptRecord,
    agent: AgentOutcome,
    receipts: list[str],
    run_isolation: list[str],
    sentinel: list[str],
    *,
    live: bool,
) -> None:
    """Print one attempt: who and what, its status, its isolation, its checks and evidence.

    ``agent`` is the agent's own account from its ``propose`` receipt: when it did not finish
    (crashed, stopped, ...), the reason it recorded is printed under its status.

    ``sentinel`` holds the lines saying what gate S observed that the checks table does not
    show (:func:`_sentinel_lines`: not run and why, or a hermetic attempt's observed sentinel),
    printed under the checks.

    The attempt's own isolation (that of its tests' commands) is in its decision; an attempt
    not decided has none, and the run's (the weakest of its commands, from the manifest, with
    the manifest's warnings) is printed for every attempt.
    """
    from repogate.cli.terminal import decision_table, print_table
    from repogate.clock import readable
    from repogate.models.trajectory import TRAJECTORY_FILE, read_trajectory, summary
    from repogate.receipt import visible

    folder = run_dir / "attempts" / record.attempt_id
    typer.echo(
        f"attempt {record.attempt_id}: {record.agent} on {record.contract_id}, epoch {record.epoch}"
    )
    state = attempt_state(record.status, live=live)
    typer.echo(f"agent status: {agent.status}; attempt status: {state}")
    if agent.status != "done" and agent.detail:
        typer.echo(f"agent's reason: {visible(agent.detail)}")
    if record.status != "planned":
        ended = f", finished {readable(record.finished_at)}" if record.finished_at else ""
        typer.echo(f"started {readable(record.started_at)}{ended}")
    if record.crash:
        typer.echo(f"crash: {record.crash}")
    if record.decision is not None and record.decision.isolation:
        typer.echo(f"isolation: {record.decision.isolation}")
    if record.decision is not None and record.decision.assurance:
        typer.echo(f"assurance: {record.decision.assurance}")
    for line in run_isolation:
        typer.echo(line)
    trajectory = read_trajectory(folder / "agent")
    if trajectory is not None:
        said = trajectory if isinstance(trajectory, str) else summary(trajectory)
        typer.echo(f"trajectory: {said} (agent/{TRAJECTORY_FILE})")
    if record.decision is not None:
        print_table(decision_table(record.decision))
    for line in sentinel:
        typer.echo(line)
    typer.echo(f"evidence: {folder}")
    for name in receipts:
        typer.echo(f"  receipts/{name}")
    if (folder / "patch.diff").is_file():
        typer.echo("  patch.diff")


@app.command("version")
def version_cmd() -> None:
    """Print the program and its version, as --version does."""
    typer.echo(PROGRAM_VERSION)


_register_provenance()  # after the commands above, so `--help` lists them first


def _command_path(argv: list[str]) -> str:
    """``repogate`` and the command words ``argv`` begins with (``repogate tasks check``)."""
    words = ["repogate"]
    group: object = typer.main.get_command(app)
    for word in argv:
        commands: dict[str, object] = getattr(group, "commands", {})  # click's Group
        if word not in commands:
            break
        words.append(word)
        group = commands[word]
    return " ".join(words)


JSON_OPTION_GUESSES = frozenset({"--format", "--output", "--output-format", "-o"})
"""Options other tools print JSON with (``--format json``, ``-o json``): on a command of ours
that has ``--json``, an unknown one of them is answered ``did you mean --json?``. click offers
only options spelt alike (:func:`difflib.get_close_matches`), and ``--format`` is not ``--json``."""


def _options_of(exc: typer.TyperException) -> list[str]:
    """The options of the command ``exc`` belongs to (``--json``, ``--out``), none when unknown."""
    command = getattr(getattr(exc, "ctx", None), "command", None)
    return [opt for param in getattr(command, "params", ()) for opt in getattr(param, "opts", ())]


def _no_such_option(exc: typer.TyperException) -> str | None:
    """``no such option: --format (did you mean --json?)``, or None for another kind of error.

    click's own guesses (options spelt alike: ``--jsn``) are kept, said ``did you mean`` for one;
    an option other tools print JSON with (:data:`JSON_OPTION_GUESSES`) is offered ``--json``
    when the command has it.
    """
    from repogate.receipt import visible

    name = getattr(exc, "option_name", None)
    if not isinstance(name, str) or not hasattr(exc, "possibilities"):
        return None
    guesses = list(getattr(exc, "possibilities", None) or ())
    if name in JSON_OPTION_GUESSES and "--json" in _options_of(exc) and "--json" not in guesses:
        guesses.insert(0, "--json")
    said = f"no such option: {visible(name)}"
    if len(guesses) == 1:
        return f"{said} (did you mean {guesses[0]}?)"
    return f"{said} (possible options: {', '.join(sorted(guesses))})" if guesses else said


_INTEGER_ERRORS = frozenset({"int_parsing", "int_type", "int_from_float"})
"""pydantic's error types (typer validates option values with it) for a value not an integer."""
_NUMBER_ERRORS = frozenset({"float_parsing", "float_type"})
"""pydantic's error types for a value that is not a number."""


def _bad_number(exc: typer.TyperException) -> str | None:
    """``--workers 'two' is not a whole number; give one, e.g. --workers 1``, or None.

    typer 0.29 checks an option's value with pydantic and says pydantic's first message
    (``Input should be a valid integer, unable to parse string as an integer``); the
    :class:`pydantic.ValidationError` it came from (the error's cause) holds the value and the
    kind of problem, said here as the other bad values of the command line are: the option, the
    value, what it takes, and an example (its default, else its least value, else 1). A value
    out of range says the bound (``--epochs 0 is below 1; give 1 or more``).
    """
    from pydantic import ValidationError

    from repogate.receipt import visible

    cause, param = exc.__cause__, getattr(exc, "param", None)
    opts: list[str] = list(getattr(param, "opts", None) or ())
    if not isinstance(cause, ValidationError) or getattr(param, "param_type_name", "") != "option":
        return None  # not pydantic's, or an argument's (it has no flag to name)
    error = cause.errors(include_url=False)[0]
    flag, value, kind = max(opts, key=len), error["input"], error["type"]
    bounds = error.get("ctx") or {}
    limit = bounds.get("ge", bounds.get("le"))
    if kind in ("greater_than_equal", "less_than_equal") and isinstance(limit, int | float):
        below = kind == "greater_than_equal"
        return (
            f"{flag} {visible(str(value))} is {'below' if below else 'above'} {limit:g}; give "
            f"{limit:g} or {'more' if below else 'less'}"
        )
    shown = visible(repr(value) if isinstance(value, str) else str(value))
    if kind not in _INTEGER_ERRORS | _NUMBER_ERRORS:
        return None
    whole = kind in _INTEGER_ERRORS
    default = getattr(param, "default", None)
    least = getattr(param, "min", None)
    example = (
        default if isinstance(default, int | float) and not isinstance(default, bool) else None
    )
    example = example if example is not None else least if least is not None else 1
    wanted = "a whole number" if whole else "a number"
    return f"{flag} {shown} is not {wanted}; give {wanted}, e.g. {flag} {example:g}"


def _usage_line(exc: typer.TyperException, argv: list[str]) -> str:
    """One line ``what; how to fix`` for a usage error, in place of the usage block it would show.

    typer's usage errors (click's ``UsageError``, vendored) carry ``format_message()`` and the
    ``ctx`` of the command they belong to; one raised by the option parser (an option given no
    value) carries none, so the command is read from the command line's leading words. An
    unknown option is answered with the options it may mean (:func:`_no_such_option`); an option
    given a value that is not the number it takes says so (:func:`_bad_number`), not pydantic.
    """
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", None) or _command_path(argv)
    number = _bad_number(exc)
    if number is not None:
        return f"{number}; see `{command} --help`"
    format_message = getattr(exc, "format_message", None)
    text = _no_such_option(exc) or (format_message() if callable(format_message) else str(exc))
    what = " ".join(str(text).split()).rstrip(".")
    what = what[:1].lower() + what[1:]
    # click's suggestion is a second sentence ("... 'shwo'. Did you mean 'show'?") or a
    # parenthesis ("(Possible options: ...)"): one clause either way
    what = what.replace(". Did you mean ", " (did you mean ", 1)
    if what.endswith("?") and "(did you mean " in what:
        what += ")"
    what = what.replace("(Possible options:", "(possible options:")
    valid = "commands" if what.startswith("no such command") else "options"
    return f"{what}; see `{command} --help` for the valid {valid}"


def _output_closed() -> int:
    """Point standard output at ``/dev/null`` and return :attr:`ExitCode.OUTPUT_CLOSED`.

    What is still buffered for the closed pipe would fail again when Python flushes it at exit
    (``Exception ignored ... BrokenPipeError``, exit 120): the Python documentation's "Note on
    SIGPIPE" sends it to ``/dev/null`` instead. A standard output with no file descriptor (a
    test's capture) is left as it is.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        pass
    return ExitCode.OUTPUT_CLOSED


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (an :class:`ExitCode` value).

    Ctrl-C prints one line on what is kept and how to resume (by command:
    :func:`repogate._interrupted.interrupted_message`) and gives :attr:`ExitCode.INTERRUPTED`, however
    typer reports it: as ``KeyboardInterrupt``, as ``typer.Abort`` (click), or, as typer 0.29
    does, by returning 130 itself. SIGTERM is handled as Ctrl-C while the command runs
    (:func:`repogate._interrupted.sigterm_as_ctrl_c`).

    Standard output closed by its reader (``repogate show RUN | head -1``) ends the command with
    :attr:`ExitCode.OUTPUT_CLOSED` and nothing more printed, whether a write met it
    (:class:`~repogate.cli._help.OutputClosed`) or the last flush did.
    """
    code = _main(argv)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return _output_closed()
    return code


def _main(argv: list[str] | None) -> int:
    """:func:`main` but for the last flush of standard output."""
    try:
        with sigterm_as_ctrl_c():
            result = app(args=argv, prog_name="repogate", standalone_mode=False)
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
    except OutputClosed:
        return _output_closed()
    except _click.exceptions.NoArgsIsHelpError as exc:  # `repogate`, `repogate tasks` alone
        typer.echo(exc.ctx.get_help(), err=True)  # the help as --help prints it, not one line
        return ExitCode.USAGE
    except typer.TyperException as exc:  # the command line's own: a bad or unknown option
        typer.echo(f"error: {_usage_line(exc, sys.argv[1:] if argv is None else argv)}", err=True)
        return ExitCode.USAGE
    if result == ExitCode.INTERRUPTED:  # no command of ours returns it: only Ctrl-C does
        typer.echo(interrupted_message(sys.argv[1:] if argv is None else argv), err=True)
    return int(result) if isinstance(result, int) else ExitCode.OK
