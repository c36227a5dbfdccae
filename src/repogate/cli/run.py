"""``repogate run``: plan the attempts, show progress, print the decisions."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from rich.console import Console
from securesystemslib.signer import Signer

from repogate._files import storage_problem
from repogate._folders import not_a_folder
from repogate.agent_spec import AgentSpec, GoldSpec, NullSpec, ScriptSpec, parse_agent_spec
from repogate.agents import require_predictions
from repogate.cli.progress import RunProgress
from repogate.cli.terminal import attempts_table, print_table
from repogate.contract import load_contract
from repogate.errors import ExitCode, RunDirError, UserInputError
from repogate.jobs import Executor
from repogate.recorded import recorded_proposal, recorded_results
from repogate.runner import PlannedAttempt, RunOptions, attempt_count, check_isolation, run
from repogate.sandbox import WEAK_FLAG
from repogate.store import DB_NAME, AttemptRecord, Store
from repogate.tasks.scenario_injections import contract_ids, with_injected
from repogate.tasks.scenarios import build_scenario, default_agents, scenario_names
from repogate.tasks.taskset import contract_files

DEFAULT_SELECTION = "embedded default: every built-in scenario with its shipped agents"
EMBEDDED_WEAK = "the embedded default (built-in scenarios and their shipped agents only)"
"""Why the embedded default may run without bubblewrap: its agents and code are repogate's own."""


def _shipped(text: str, out: Path) -> AgentSpec:
    """A scenario's shipped agent; its script is named relative to the run folder ``out``.

    So the spec (and the attempt ids made from it) stays the same when the run folder is moved
    or copied, and the copy resumes.
    """
    spec = parse_agent_spec(text)
    if isinstance(spec, ScriptSpec) and spec.file.is_relative_to(out):
        return ScriptSpec(arg=str(spec.file.relative_to(out)), file=spec.file)
    return spec


def default_plans(out: Path, agents: list[AgentSpec]) -> list[PlannedAttempt]:
    """Build every built-in scenario under ``out/scenarios`` and plan its agents.

    Args:
        out: the run folder (absolute).
        agents: the agents to run (parsed); none runs each scenario's shipped agents.
    """
    plans = []
    for name in scenario_names():
        built = with_injected(build_scenario(name, out / "scenarios" / name))
        for path in built.contracts:
            contract = load_contract(path)
            shipped = default_agents(built, path, contract.reference is not None)
            specs = agents or [_shipped(text, out) for text in shipped]
            plans += [PlannedAttempt(contract, f"scenario:{name}", spec) for spec in specs]
    return plans


def default_contract_ids() -> list[str]:
    """Return the ids of the contracts :func:`default_plans` plans, in order, building nothing.

    Read from the shipped scenario files (:func:`repogate.tasks.scenario_injections.contract_ids`),
    so a run of the embedded default checks its agents against them before the scenarios'
    repositories are built.
    """
    return [task_id for name in scenario_names() for task_id in contract_ids(name)]


def named_plans(contracts: list[Path], agents: list[AgentSpec]) -> list[PlannedAttempt]:
    """Plan ``agents`` (default gold and null) on each named contract.

    A task-set folder (one holding ``tasks.jsonl``) stands for each of its validated contracts.
    """
    specs = agents or [GoldSpec(), NullSpec()]
    loaded = [(load_contract(path), label) for path, label in contract_files(contracts)]
    return [PlannedAttempt(c, src, spec) for c, src in loaded for spec in specs]


class AgentOutcome(NamedTuple):
    """The agent's own account of its run, apart from the verdict on what it left.

    Attributes:
        status: ``done``; ``stopped`` at its time budget; ``crashed`` (e.g. it exited non-zero).
        detail: why, e.g. ``stopped at its budget of 2 s`` or ``exit 1``.
    """

    status: str
    detail: str


def agent_outcomes(store: Store, records: Sequence[AttemptRecord]) -> dict[str, AgentOutcome]:
    """Return each attempt's agent outcome by attempt id, read from its ``propose`` receipt.

    An attempt without that receipt (stopped before the agent ran) has no entry.
    """
    found = {}
    for record in records:
        proposal = recorded_proposal(store.receipts(record.attempt_id))
        if proposal is not None:
            found[record.attempt_id] = AgentOutcome(proposal.status, proposal.detail)
    return found


class ReceiptFacts(NamedTuple):
    """What ``run --json`` reports from an attempt's receipts beside its decision.

    Attributes:
        failing_tests: graded test ids that did not pass in the last test run (gate V), flaky
            exclusions left out.
        sentinel: the sentinel's checks (gate S) as ``{name, status, detail}``; empty when it
            did not run.
    """

    failing_tests: list[str]
    sentinel: list[dict[str, str]]


def receipt_facts(store: Store, record: AttemptRecord) -> ReceiptFacts:
    """Read :class:`ReceiptFacts` from one attempt's stored receipts."""
    receipts = store.receipts(record.attempt_id)
    failing = [r.test_id for r in recorded_results(receipts) if not r.ok and not r.excluded]
    sentinel = [c.model_dump() for r in receipts if r.gate == "S" for c in r.checks]
    return ReceiptFacts(failing, sentinel)


def _decision_json(
    record: AttemptRecord, agent: AgentOutcome | None, facts: ReceiptFacts
) -> dict[str, object]:
    decision = record.decision
    return {
        "attempt_id": record.attempt_id,
        "contract": record.contract_id,
        "agent": record.agent,
        "epoch": record.epoch,
        "accepted": bool(decision and decision.accepted),
        "resolved": bool(decision and decision.resolved),
        "outcome": decision.outcome if decision else "crashed",
        "failed": list(decision.failed) if decision else [],
        "errored": list(decision.errored) if decision else [],
        "stages": decision.stages if decision else {},
        "crash": record.crash.model_dump() if record.crash else None,
        "agent_status": agent.status if agent else None,
        "agent_detail": agent.detail if agent else None,
        "wall_time_s": decision.soft.wall_time_s if decision else None,
        "failing_tests": facts.failing_tests,
        "sentinel": {
            "status": decision.stages.get("sentinel passed", "skipped") if decision else None,
            "checks": facts.sentinel,
        },
        "checks": [c.model_dump() for c in decision.checks] if decision else [],
    }


def check_out_folder(out: Path) -> None:
    """Refuse an ``--out`` that is a file or lies below one, before anything is written.

    Raises:
        RunDirError: naming the file.
    """
    where = not_a_folder(out)
    if where is not None:
        raise RunDirError(f"--out {out} {where}", "give a folder")
    folder = next((p for p in (out, *out.parents) if p.is_dir()), None)
    if folder is not None:
        _check_writable(out, folder)
        if folder == out:
            _check_is_a_run(out)


_SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file (https://www.sqlite.org/fileformat.html)."""
_LEFT_BEFORE_THE_STORE = frozenset({"scenarios", ".lock"})
"""What a run folder may hold before its store exists: the embedded default's built scenarios."""


def _check_is_a_run(out: Path) -> None:
    """Refuse an existing ``out`` that is neither a readable run nor empty (nothing is adopted).

    Raises:
        RunDirError: its store is not a readable repogate store (of a version this one reads),
            or it holds other files and no store.
    """
    names = {p.name for p in out.iterdir()}
    if DB_NAME in names:
        with (out / DB_NAME).open("rb") as db:
            header = db.read(len(_SQLITE_HEADER))
        if header != _SQLITE_HEADER:  # never opened as a database: SQLite would write beside it
            raise RunDirError(
                f"{out / DB_NAME} is not a readable repogate store (not an SQLite database)",
                "give the --out folder of a repogate run, or rerun into a new folder",
            )
        with Store.open(out):  # raises RunDirError naming what is wrong with the store
            return
    if names - _LEFT_BEFORE_THE_STORE:
        raise RunDirError(
            f"--out {out} holds files and no repogate run ({', '.join(sorted(names)[:3])}...)",
            "give a new or empty folder, or the --out folder of a run to resume or extend it",
        )


def _check_writable(out: Path, folder: Path) -> None:
    """Refuse ``out`` when ``folder`` (it, or its nearest existing parent) takes no new file.

    Probed by making and removing an empty file, which also sees a read-only file system that
    permission bits do not show (and holds for root, whom permission bits do not stop).
    """
    try:
        handle, probe = tempfile.mkstemp(prefix=".repogate-probe-", dir=folder)
    except OSError as exc:
        raise RunDirError(
            f"--out {out} is not writable ({exc.strerror} in {folder})",
            "give a folder you can write to",
        ) from None
    os.close(handle)
    Path(probe).unlink()


def execute(
    contracts: list[Path],
    agents: list[AgentSpec],
    out: Path,
    repo_cache: Path | None,
    epochs: int,
    as_json: bool,
    allow_weak_isolation: bool = False,
    executor: Executor | None = None,
    signer: Signer | None = None,
    *,
    skip_sentinel_when_rejected: bool = False,
) -> ExitCode:
    """Run and report; return ``OK`` when every attempt ran, ``INTERNAL`` when any crashed.

    Args:
        contracts: contract files; none runs the embedded default.
        agents: the agents, parsed and their files read at the command line
            (:func:`repogate.agents.parse_specs`); none runs gold and null (or each scenario's
            shipped agents).
        out: the run directory.
        repo_cache: local mirrors of repository URLs.
        epochs: repeats of every attempt.
        as_json: print the decisions as JSON instead of a table.
        allow_weak_isolation: the user's ``--allow-weak-isolation``: run untrusted code without
            bubblewrap (warned at the start and in the summary). The embedded default with its
            own agents is allowed so without it, and says so the same way.
        executor: where the attempts run (None: one by one in this process).
        signer: signs every decision and the run summary (``--sign-key``); None signs nothing.
        skip_sentinel_when_rejected: ``--skip-sentinel-when-rejected``: gate S is not run on an
            attempt a hard check has already failed.

    Raises:
        RunDirError: ``out`` is a file, lies below one or is not writable (checked before
            anything else); or the disk refused a write during the run (full, read-only): the
            attempt under way stays unfinished and is redone when the same command is rerun.
        UserInputError: a contract, repository or agent spec is unusable.
        IsolationError: bubblewrap is not usable and weak isolation was not allowed.
    """
    check_out_folder(out)
    out = out.resolve()
    embedded = not contracts and not agents
    weak = WEAK_FLAG if allow_weak_isolation else EMBEDDED_WEAK if embedded else None
    options = RunOptions(
        out=out,
        repo_cache=repo_cache,
        epochs=epochs,
        weak_isolation=weak,
        signer=signer,
        skip_sentinel_when_rejected=skip_sentinel_when_rejected,
    )
    warning = check_isolation(options)  # before the scenarios are built: bad input writes nothing
    with _disk_refusals(out), _unmade_on_bad_input(out):
        if contracts:
            plans = named_plans(contracts, agents)
            selection = "contracts named on the command line: " + ", ".join(map(str, contracts))
        else:  # checked before the scenarios are built (tens of seconds)
            require_predictions(agents, default_contract_ids())
            plans = default_plans(out, agents)
            selection = DEFAULT_SELECTION
        console = Console(stderr=True)
        options = replace(
            options,
            selection=selection,
            warn=lambda line: console.print(
                f"warning: {line}", markup=False, highlight=False, soft_wrap=True
            ),
        )
        total = attempt_count(plans, epochs)
        with RunProgress(total, quiet=as_json, warning=warning) as bar:
            records = run(plans, options, bar.tick, executor)
        with Store.open(out) as store:
            agents_said = agent_outcomes(store, records)
            facts = {r.attempt_id: receipt_facts(store, r) for r in records} if as_json else {}
        if as_json:
            rows = [
                _decision_json(r, agents_said.get(r.attempt_id), facts[r.attempt_id])
                for r in records
            ]
            print(json.dumps(rows, indent=2))
        else:
            statuses = {key: said.status for key, said in agents_said.items()}
            print_table(attempts_table(records, f"run {out}", statuses))
        return ExitCode.INTERNAL if any(r.status == "crashed" for r in records) else ExitCode.OK


@contextmanager
def _unmade_on_bad_input(out: Path) -> Iterator[None]:
    """Remove what this command made in ``out`` when bad input stops it before its store exists.

    The embedded default builds its scenarios into ``out/scenarios`` before its agents are made
    for their contracts (a model-driven agent's key is checked then); bad input must still write
    nothing. (A ``--require-all-predictions`` file is checked against the scenarios' ids before
    they are built: :func:`default_contract_ids`.) A store already there (a run being resumed) is never touched, nor
    anything this command did not make.
    """
    made = [path for path in (out, out / "scenarios") if not path.exists()]
    had_store = (out / DB_NAME).exists()
    try:
        yield
    except UserInputError:
        if made and not had_store and not (out / DB_NAME).exists():
            shutil.rmtree(made[0], ignore_errors=True)
        raise


@contextmanager
def _disk_refusals(out: Path) -> Iterator[None]:
    """Turn a write the disk refused (full, read-only) into one :class:`RunDirError` line."""
    try:
        yield
    except Exception as exc:
        problem = storage_problem(exc)
        if problem is None:
            raise
        raise RunDirError(
            f"cannot write to {out} ({problem})",
            "free space there (or give --out on another disk) and rerun the same command: "
            "finished attempts are kept",
        ) from None
