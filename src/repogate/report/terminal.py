"""Terminal rendering of decisions and runs with rich tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.table import Table

from repogate.agents import agent_name
from repogate.decision import Decision
from repogate.store import AttemptRecord

_STYLE = {"passed": "green", "failed": "red", "error": "yellow", "skipped": "dim"}


def decision_table(decision: Decision) -> Table:
    """Return a table of one decision: every hard check, its status and detail, then soft metrics."""
    verdict = {"accepted": "[green]accepted", "rejected": "[red]rejected", "error": "[yellow]error"}
    table = Table(
        title=f"{decision.task_id} ({decision.profile}): {verdict[decision.outcome]}",
        title_justify="left",
    )
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for check in decision.checks:
        style = _STYLE[check.status]
        table.add_row(check.name, f"[{style}]{check.status}", check.detail)
    soft = decision.soft.model_dump()
    table.caption = "soft: " + ", ".join(f"{k}={v:g}" for k, v in soft.items() if v)
    return table


def attempts_table(
    records: Sequence[AttemptRecord],
    title: str,
    agent_status: Mapping[str, str] | None = None,
    *,
    interrupted: bool = False,
    changed: Mapping[str, str] | None = None,
) -> Table:
    """Return a table with one row per attempt: contract, agent, epoch, verdict, failed, errored.

    Args:
        records: the attempts, in order.
        title: the table's title.
        agent_status: the agent's own status by attempt id (``done``, ``stopped``, ``crashed``);
            any other than ``done`` is shown under the verdict, e.g. ``(agent stopped)``.
        interrupted: show an attempt still marked ``running`` as ``interrupted``: for a run read
            back when no process holds the run directory (``repogate show``).
        changed: what changed in an attempt's evidence since it was stored, by attempt id; such
            an attempt shows ``evidence changed`` and no verdict (neither copy is trusted).
    """
    statuses = agent_status or {}
    table = Table(title=title, title_justify="left")
    for column in (
        "contract",
        "agent",
        "epoch",
        "verdict",
        "failed",
        "errored",
        "sentinel",
        "wall s",
    ):
        table.add_column(column, overflow="fold")
    for record in records:
        decision = record.decision
        said = statuses.get(record.attempt_id, "done")
        agent_note = "" if said == "done" else f"\n[dim](agent {said})"
        if record.attempt_id in (changed or {}):
            row = ("[red]evidence changed", "", (changed or {})[record.attempt_id], "", "")
        elif decision is None:
            status = "interrupted" if interrupted and record.status == "running" else record.status
            verdict = "[yellow]crashed" if status == "crashed" else f"[dim]{status}"
            row = (verdict + agent_note, "", record.crash or "", "", "")
        else:
            style = {"accepted": "green", "rejected": "red", "error": "yellow"}[decision.outcome]
            row = (
                f"[{style}]{decision.outcome}{agent_note}",
                "\n".join(decision.failed),
                _errored(decision),
                _stage(decision.stages.get("sentinel passed", "skipped")),
                f"{decision.soft.wall_time_s:.1f}",
            )
        table.add_row(record.contract_id, agent_name(record.agent), str(record.epoch), *row)
    return table


def _errored(decision: Decision) -> str:
    """The errored checks; for an attempt stopped before the agent ran, only why it stopped."""
    explained = [
        c
        for c in decision.checks
        if c.status == "error" and not c.detail.startswith(("not observed", "no candidate"))
    ]
    if len(explained) < len(decision.errored) and explained:
        return "\n".join(f"{c.name}: {c.detail}" for c in explained)
    return "\n".join(decision.errored)


def _stage(status: str) -> str:
    return "" if status == "skipped" else f"[{_STYLE[status]}]{status}"


def print_table(table: Table) -> None:
    """Print ``table`` to standard output, wide enough not to cut check names."""
    Console(width=max(Console().width, 120)).print(table)
