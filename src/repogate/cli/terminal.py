"""Terminal rendering of decisions and runs with rich tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from repogate.agent_spec import agent_labels, middle_cut
from repogate.decision import Decision
from repogate.store import AttemptRecord
from repogate.vocabulary import attempt_state

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
    table.caption = f"soft: {decision.soft.text() or 'all zero'}"
    table.caption_justify = "left"
    return table


# (column, max width or None: as wide as its values) and whether the column may wrap. A contract
# id longer than its column is cut in its middle (two ids sharing a long prefix looked alike when
# cut at the end); the why column names every failed check in full, wrapping between names, so
# a row may take more than one line.
_CONTRACT_WIDTH = 24
_CRASH_WIDTH = 60
"""Characters of a crash's type and message shown (``show RUN_DIR N`` prints it whole)."""
_COLUMNS: tuple[tuple[str, int | None, bool], ...] = (
    ("#", 3, False),
    ("contract", _CONTRACT_WIDTH, False),
    ("agent", 20, True),
    ("ep", 2, False),
    ("verdict", None, False),
    ("why (failed checks)", None, True),
    ("sentinel", 8, False),
    ("wall s", 6, False),
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
    """Return a table with one row per attempt, at most 100 columns wide.

    Columns: row number (what ``repogate show RUN_DIR N`` takes), contract id (cut in its middle
    past 24 characters, so ids sharing a prefix stay apart), agent, epoch, verdict, every failed
    (else errored) check by its full name (wrapping between names), sentinel status, wall time.
    An agent label longer than its column folds onto the next line, never cut (two agents
    differing only at their end stay apart); a crash's message is cut in its middle;
    ``repogate show RUN_DIR N`` gives the details.

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
        padding=(0, 0, 0, 0),  # the box puts one space between columns
        pad_edge=False,
        show_edge=False,
    )
    labels = agent_labels((r.agent for r in records), width=2 * (_COLUMNS[2][1] or 0))
    rows: list[tuple[str, ...]] = []
    verdicts: list[str] = []
    for number, record in enumerate(records, 1):
        decision = record.decision
        said = statuses.get(record.attempt_id, "done")
        agent_note = "" if said == "done" else f"(agent {said}) "
        if record.attempt_id in (changed or {}):
            verdict, style = "changed", "red"
            why = "evidence changed: " + escape((changed or {})[record.attempt_id])
            rest = ("", "")
        elif decision is None:
            verdict = attempt_state(record.status, live=not interrupted)
            style = "yellow" if verdict == "crashed" else "dim"
            why = agent_note + escape(middle_cut(str(record.crash or ""), _CRASH_WIDTH))
            rest = ("", "")
        else:
            verdict = decision.outcome
            style = {"accepted": "green", "rejected": "red", "error": "yellow"}[verdict]
            why = agent_note + escape(_why(decision))
            sentinel = _stage(decision.stages.get("sentinel passed", "skipped"))
            rest = (sentinel, f"{decision.soft.wall_time_s:.1f}")
        verdicts.append(verdict)
        rows.append(
            (
                str(number),
                escape(middle_cut(record.contract_id, _CONTRACT_WIDTH)),
                escape(labels[record.agent]),
                str(record.epoch),
                f"[{style}]{verdict}",
                why,
                *rest,
            )
        )
    whole = {  # the widths a column never goes below: its longest value, its longest check name
        "contract": min(max((len(r.contract_id) for r in records), default=0), _CONTRACT_WIDTH),
        "verdict": max(map(len, verdicts), default=0),
        "why (failed checks)": 1  # a name and its comma stay on one line
        + max((len(n) for r in records if r.decision for n in r.decision.failed), default=0),
        "sentinel": len("sentinel"),
        "wall s": len("wall s"),
    }
    for column, width, wraps in _COLUMNS:
        table.add_column(
            column,
            no_wrap=not wraps,
            overflow="fold" if wraps else "ellipsis",
            max_width=width,
            min_width=max(len(column), whole[column]) if column in whole else None,
        )
    for row in rows:
        table.add_row(*row)
    return table


def _why(decision: Decision) -> str:
    """Every failed check, else every errored one that says why (not those never reached)."""
    return ", ".join(decision.failed or _errored(decision))


def _errored(decision: Decision) -> tuple[str, ...]:
    """The errored checks; for an attempt stopped before the agent ran, only why it stopped."""
    explained = tuple(
        c.name
        for c in decision.checks
        if c.status == "error" and not c.detail.startswith(("not observed", "no candidate"))
    )
    return explained or decision.errored


def _stage(status: str) -> str:
    return "" if status == "skipped" else f"[{_STYLE[status]}]{status}"


def print_table(table: Table) -> None:
    """Print ``table`` to standard output: at most 100 columns, or the terminal's width if narrower."""
    console = Console()
    console.width = min(console.width, WIDTH) if console.is_terminal else WIDTH
    console.print(table)
