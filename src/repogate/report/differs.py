"""Accepted, yet behaving differently from the reference: the differential oracle in the report.

An accepted attempt whose ``behaviour_matches_reference`` check failed (advisory in its profile,
or hard and then never accepted) passed every hard gate while some function it changed returns,
raises or mutates its arguments differently from the reference's on some input. Such an attempt
is counted per agent beside the resolved-vs-accepted table, each with its shortest
distinguishing input (the check's detail) and, in the HTML page, a link to the receipt that
records it. One module, read by the renderers through :attr:`Report.differs`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.table import Table

from repogate._model import FrozenModel

if TYPE_CHECKING:  # classify imports the report model, which holds these rows
    from repogate.report.classify import Fact

CHECK = "behaviour_matches_reference"


class DiffersAttempt(FrozenModel):
    """One accepted attempt the differential oracle flagged."""

    run: str
    evidence: str
    contract: str
    epoch: int
    detail: str


class DiffersFromReference(FrozenModel):
    """Per agent: accepted attempts, how many the differential oracle compared and flagged."""

    agent: str
    accepted: int
    compared: int
    differs: int
    attempts: tuple[DiffersAttempt, ...] = ()


def differs_rows(grouped: Mapping[str, Sequence[Fact]]) -> tuple[DiffersFromReference, ...]:
    """One row per agent (``grouped``: agent -> its facts), in the given order."""
    rows = []
    for agent, facts in grouped.items():
        accepted = [f for f in facts if f.accepted and f.attempt.decision is not None]
        flagged, compared = [], 0
        for f in accepted:
            decision = f.attempt.decision
            assert decision is not None
            check = next(
                (c for c in (*decision.checks, *decision.advisory) if c.name == CHECK), None
            )
            if check is None or check.status not in ("passed", "failed"):
                continue
            compared += 1
            if check.status == "failed":
                flagged.append(
                    DiffersAttempt(
                        run=str(f.attempt.run),
                        evidence=f.attempt.evidence,
                        contract=f.attempt.contract,
                        epoch=f.attempt.epoch,
                        detail=check.detail,
                    )
                )
        rows.append(
            DiffersFromReference(
                agent=agent,
                accepted=len(accepted),
                compared=compared,
                differs=len(flagged),
                attempts=tuple(flagged),
            )
        )
    return tuple(rows)


def text_table(rows: Sequence[DiffersFromReference]) -> Table:
    """The terminal table: accepted, compared, accepted and differs from the reference."""
    table = Table(
        title="accepted, differs from reference (differential oracle)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for column in ("agent", "accepted", "compared", "accepted, differs from reference"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(row.agent, str(row.accepted), str(row.compared), str(row.differs))
        for one in row.attempts:
            table.add_row("", "", "", f"{one.contract} e{one.epoch}: {one.detail}")
    return table


def html_section(rows: Sequence[DiffersFromReference], page_dir: Path) -> str:
    """The HTML table; each flagged attempt links its differential receipt (relative path)."""
    body = []
    for row in rows:
        body.append(
            f"<tr><td>{escape(row.agent)}</td><td>{row.accepted}</td><td>{row.compared}</td>"
            f"<td>{row.differs}</td></tr>"
        )
        for one in row.attempts:
            receipts = Path(one.run).resolve() / one.evidence / "receipts"
            found = (
                sorted(receipts.glob("*-V-differential.intoto.json")) if receipts.is_dir() else []
            )
            link = (
                f' <a href="{escape(Path(os.path.relpath(found[0], page_dir)).as_posix())}">receipt</a>'
                if found
                else ""
            )
            body.append(
                f'<tr><td></td><td colspan="3">{escape(one.contract)} e{one.epoch}: '
                f"{escape(one.detail)}{link}</td></tr>"
            )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("agent", "accepted", "compared", "accepted, differs from reference")
    )
    return (
        "<h3>Accepted, differs from reference (differential oracle)</h3>"
        f'<table id="differs"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )
