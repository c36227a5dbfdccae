"""``repogate run``: plan the attempts, show progress, print the decisions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from repogate.contract import load_contract
from repogate.errors import ExitCode, RunDirError
from repogate.report.terminal import attempts_table, print_table
from repogate.runner import PlannedAttempt, RunOptions, check_isolation, run
from repogate.sandbox import WEAK_FLAG
from repogate.store import AttemptRecord, Store
from repogate.tasks.scenarios import build_scenario, default_agents, scenario_names
from repogate.tasks.taskset import is_task_set, iter_sources

DEFAULT_SELECTION = "embedded default: every built-in scenario with its shipped agents"
EMBEDDED_WEAK = "the embedded default (built-in scenarios and their shipped agents only)"
"""Why the embedded default may run without bubblewrap: its agents and code are repogate's own."""


def default_plans(out: Path, agents: list[str]) -> list[PlannedAttempt]:
    """Build every built-in scenario under ``out/scenarios`` and plan its agents."""
    plans = []
    for name in scenario_names():
        built = build_scenario(name, out / "scenarios" / name)
        for path in built.contracts:
            contract = load_contract(path)
            specs = agents or default_agents(built, path, contract.reference is not None)
            plans += [PlannedAttempt(contract, f"scenario:{name}", spec) for spec in specs]
    return plans


def named_plans(contracts: list[Path], agents: list[str]) -> list[PlannedAttempt]:
    """Plan ``agents`` (default gold and null) on each named contract.

    A task-set folder (one holding ``tasks.jsonl``) stands for each of its validated contracts.
    """
    specs = agents or ["gold", "null"]
    files: list[tuple[Path, str]] = []
    for path in contracts:
        if is_task_set(path):
            files += [(p, str(p)) for p, _ in iter_sources(path)]
        else:
            files.append((path, str(path)))
    loaded = [(load_contract(path), label) for path, label in files]
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
        for receipt in store.receipts(record.attempt_id):
            proposal = receipt.details.get("proposal") if receipt.gate == "propose" else None
            if isinstance(proposal, dict):
                status, detail = proposal.get("status"), proposal.get("detail")
                found[record.attempt_id] = AgentOutcome(str(status), str(detail or ""))
    return found


def _decision_json(record: AttemptRecord, agent: AgentOutcome | None) -> dict[str, object]:
    decision = record.decision
    return {
        "contract": record.contract_id,
        "agent": record.agent,
        "epoch": record.epoch,
        "accepted": bool(decision and decision.accepted),
        "resolved": bool(decision and decision.resolved),
        "outcome": decision.outcome if decision else "crashed",
        "failed": list(decision.failed) if decision else [],
        "errored": list(decision.errored) if decision else [],
        "stages": decision.stages if decision else {},
        "crash": record.crash,
        "agent_status": agent.status if agent else None,
        "agent_detail": agent.detail if agent else None,
    }


def check_out_folder(out: Path) -> None:
    """Refuse an ``--out`` that is a file or lies below one, before anything is written.

    Raises:
        RunDirError: naming the file.
    """
    for path in (out, *out.parents):
        if path.exists() or path.is_symlink():
            if path.is_dir():
                return
            where = "is a file" if path == out else f"is below the file {path}"
            raise RunDirError(f"--out {out} {where}", "give a folder")


def execute(
    contracts: list[Path],
    agents: list[str],
    out: Path,
    repo_cache: Path | None,
    epochs: int,
    as_json: bool,
    allow_weak_isolation: bool = False,
) -> ExitCode:
    """Run and report; return ``OK`` when every attempt ran, ``INTERNAL`` when any crashed.

    Args:
        contracts: contract files; none runs the embedded default.
        agents: agent specs; none runs gold and null (or each scenario's shipped agents).
        out: the run directory.
        repo_cache: local mirrors of repository URLs.
        epochs: repeats of every attempt.
        as_json: print the decisions as JSON instead of a table.
        allow_weak_isolation: the user's ``--allow-weak-isolation``: run untrusted code without
            bubblewrap (warned at the start and in the summary). The embedded default with its
            own agents is allowed so without it, and says so the same way.

    Raises:
        RunDirError: ``out`` is a file or lies below one (checked before anything else).
        UserInputError: a contract, repository or agent spec is unusable.
        IsolationError: bubblewrap is not usable and weak isolation was not allowed.
    """
    check_out_folder(out)
    out = out.resolve()
    embedded = not contracts and not agents
    weak = WEAK_FLAG if allow_weak_isolation else EMBEDDED_WEAK if embedded else None
    options = RunOptions(out=out, repo_cache=repo_cache, epochs=epochs, weak_isolation=weak)
    warning = check_isolation(options)  # before the scenarios are built: bad input writes nothing
    if contracts:
        plans = named_plans(contracts, agents)
        selection = "contracts named on the command line: " + ", ".join(map(str, contracts))
    else:
        plans = default_plans(out, agents)
        selection = DEFAULT_SELECTION
    options = replace(options, selection=selection)
    console = Console(stderr=True)
    warned = [] if warning else [True]  # said once the inputs are checked, before the first attempt
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=as_json or not console.is_terminal,
    ) as bar:
        task = bar.add_task("attempts", total=len(plans) * epochs)

        def tick(label: str, record: AttemptRecord | None) -> None:
            if not warned:
                warned.append(True)
                bar.console.print(
                    f"warning: {warning}", markup=False, highlight=False, soft_wrap=True
                )
            if record is None:
                bar.update(task, description=label)
                if not console.is_terminal and not as_json:
                    console.print(f"running {label}")
            else:
                bar.advance(task)

        records = run(plans, options, tick)
    store = Store.open(out)
    try:
        agents_said = agent_outcomes(store, records)
    finally:
        store.close()
    if as_json:
        rows = [_decision_json(r, agents_said.get(r.attempt_id)) for r in records]
        print(json.dumps(rows, indent=2))
    else:
        statuses = {key: said.status for key, said in agents_said.items()}
        print_table(attempts_table(records, f"run {out}", statuses))
    if warning:
        console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    return ExitCode.INTERNAL if any(r.status == "crashed" for r in records) else ExitCode.OK
