"""Terminal rendering of decisions and runs with rich tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from repogate.agent_spec import agent_labels
from repogate.decision import Decision
from repogate.store import AttemptRecord

_STYLE = {"passed": "green", "failed": "red", "error": "yellow", "skipped": "dim"}


def decision_table(decision: Decision) -> Table:
    """Return a table of one decision: hard checks, advisory checks (marked), soft metrics."""
    verdict = {"accepted": "[green]accepted", "rejected": "[red]rejected", "error": "[yellow]error"}
    table = Table(
        title=f"{escape(decision.task_id)} ({decision.profile}): {verdict[decision.outcome]}",
        title_justify="left",
    )
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for check in decision.checks:
        style = _STYLE[check.status]
        table.add_row(check.name, f"[{style}]{check.status}", escape(check.detail))
    for check in decision.advisory:  # reported beside the verdict, never changing it
        style = _STYLE[check.status]
        table.add_row(f"{check.name} (advisory)", f"[{style}]{check.status}", escape(check.detail))
    soft = decision.soft.model_dump()
    table.caption = "soft: " + ", ".join(f"{k}={v:g}" for k, v in soft.items() if v)
    return table


# (column, max width): the widths sum, with one space after each column, to at most 100.
_COLUMNS = (
    ("#", 3),
    ("contract", 23),
    ("agent", 14),
    ("ep", 2),
    ("verdict", 11),
    ("why (first check, +more)", 24),
    ("sentinel", 8),
    ("wall s", 6),
)
WIDTH = 100


def attempts_table(
    records: Sequence[AttemptRecord],
    title: str,
    agent_status: Mapping[str, str] | None = None,
    *,
    interrupted: bool = False,
    changed: Mapping[str, str] | None = None,
) -> Table:
    """Return a table with one line per attempt, at most 100 columns wide.

    Columns: row number (what ``repogate show RUN_DIR N`` takes), contract, agent, epoch, verdict,
    the first failed (else errored) check with how many more, sentinel status, wall time. Long
    values are cut with an ellipsis, never wrapped; ``repogate show RUN_DIR N`` gives the details.

    Args:
        records: the attempts, in order.
        title: the table's title.
        agent_status: the agent's own status by attempt id (``done``, ``stopped``, ``crashed``);
            any other than ``done`` leads the why column, e.g. ``(agent stopped)``.
        interrupted: show an attempt still marked ``running`` as ``interrupted``: for a run read
            back when no process holds the run directory (``repogate show``). A ``planned``
            attempt (begun in the store, not started) shows as ``not started`` either way.
        changed: what changed in an attempt's evidence since it was stored, by attempt id; such
            an attempt shows ``evidence changed`` and no verdict (neither copy is trusted).
    """
    statuses = agent_status or {}
    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        pad_edge=False,
        show_edge=False,
    )
    for column, width in _COLUMNS:
        table.add_column(
            column,
            no_wrap=True,
            overflow="ellipsis",
            max_width=width,
        )
    labels = agent_labels((r.agent for r in records), width=dict(_COLUMNS)["agent"])
    for number, record in enumerate(records, 1):
        decision = record.decision
        said = statuses.get(record.attempt_id, "done")
        agent_note = "" if said == "done" else f"(agent {said}) "
        if record.attempt_id in (changed or {}):
            row = (
                "[red]changed",
                "evidence changed: " + escape((changed or {})[record.attempt_id]),
                "",
                "",
            )
        elif decision is None:
            status = shown_status(record.status, interrupted=interrupted)
            verdict = "[yellow]crashed" if status == "crashed" else f"[dim]{status}"
            row = (verdict, agent_note + escape(str(record.crash or "")), "", "")
        else:
            style = {"accepted": "green", "rejected": "red", "error": "yellow"}[decision.outcome]
            row = (
                f"[{style}]{decision.outcome}",
                agent_note + escape(_why(decision)),
                _stage(decision.stages.get("sentinel passed", "skipped")),
                f"{decision.soft.wall_time_s:.1f}",
            )
        table.add_row(
            str(number),
            escape(record.contract_id),
            escape(labels[record.agent]),
            str(record.epoch),
            *row,
        )
    return table


def shown_status(status: str, *, interrupted: bool = False) -> str:
    """How ``show`` words an attempt's store status.

    ``planned`` (begun in the store, waiting its turn) is ``not started``; ``running`` is
    ``interrupted`` when ``interrupted`` is set (no run holds the folder).
    """
    if status == "planned":
        return "not started"
    return "interrupted" if interrupted and status == "running" else status


def _why(decision: Decision) -> str:
    """The first failed check, else the first errored one, and how many more there are."""
    names = decision.failed or tuple(_errored(decision).splitlines())
    if not names:
        return ""
    return names[0] + (f" +{len(names) - 1}" if len(names) > 1 else "")


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
    """Print ``table`` to standard output: at most 100 columns, or the terminal's width if narrower."""
    console = Console()
    console.width = min(console.width, WIDTH) if console.is_terminal else WIDTH
    console.print(table)
