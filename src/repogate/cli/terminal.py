"""Terminal rendering of decisions and runs with rich tables."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping, Sequence

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

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


_CRASH_WIDTH = 60
"""Characters of a crash's type and message shown (``show RUN_DIR N`` prints it whole)."""
WIDTH = 100
"""The attempts table's width where standard output is no terminal and ``COLUMNS`` is unset."""
_AGENT_WIDTH = 20
"""The agent column's widest (a longer label wraps)."""
_AGENT_READABLE = 16
"""The agent column's narrowest where a contract id can still keep its narrowest beside it."""
_BREAK = re.compile(r"[^\s+\-_./:,]*(?:[+\-_./:,]\s*|\s+)|[^\s+\-_./:,]+")
"""A piece of text a line may end after: up to and including a ``+ - _ . / : ,`` or spaces."""


class Wrapped:
    """Plain text a table cell wraps after its separators and never cuts.

    A contract id, an agent label, a list of check names: every line of the cell but the last
    ends at a ``-``, ``+``, ``_``, ``.``, ``/``, ``:``, ``,`` or a space, and the lines put
    together spell the text whole. Lines break at spaces first, then after a separator inside
    a word wider than the cell; a piece wider still (only in a cell narrower than the text's
    longest piece) is folded at the cell's edge. The text is never read as markup.

    Args:
        text: the text; a newline starts a line.
        style: a rich style for the whole text, e.g. ``"dim"``.
    """

    def __init__(self, text: str, style: str = "") -> None:
        self.text = text
        self.style = style

    def pieces(self) -> list[str]:
        """The text's pieces, each up to and including one separator, across its lines."""
        return [p for line in self.text.split("\n") for p in _BREAK.findall(line)]

    def lines(self, width: int) -> list[str]:
        """The text wrapped to ``width`` characters (at least 1) a line, never cut.

        Lines break at spaces first; a word wider than ``width`` breaks after its separators,
        and a piece wider still is folded.
        """
        width = max(width, 1)
        out: list[str] = []
        for text in self.text.split("\n"):
            line = ""
            for word in re.findall(r"\s*\S+\s*", text) or [""]:
                if len((line + word).rstrip()) <= width:
                    line += word
                    continue
                if line:
                    out.append(line.rstrip())
                    line = ""
                for piece in [word] if len(word.rstrip()) <= width else _BREAK.findall(word):
                    if line and len((line + piece).rstrip()) > width:
                        out.append(line.rstrip())
                        line = ""
                    line += piece
                    while len(line.rstrip()) > width:  # a piece wider than the cell: folded
                        out.append(line[:width])
                        line = line[width:]
            out.append(line.rstrip())
        return out

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        """Narrowest: the longest piece; widest: the longest line."""
        return Measurement(_piece(self), max(len(line) for line in self.text.split("\n")))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The text's lines at the cell's width."""
        yield Text("\n".join(self.lines(options.max_width)), style=self.style, no_wrap=True)


def _piece(text: Wrapped) -> int:
    """The width of ``text``'s longest piece: the narrowest its cell can be without folding."""
    return max((len(p.rstrip()) for p in text.pieces()), default=0)


class AttemptsTable:
    """The attempts of a run, one row each, sized when printed (see :func:`attempts_table`).

    For the console's width: where every check name fits whole beside each contract id's and
    agent label's longest piece, the ids get the width they need first (up to their longest),
    then the labels (up to 20), then the check names the rest; otherwise ids and labels keep
    their narrowest and the check names wrap after a ``_``. No id, label or check name is cut.

    Args:
        title: the table's title.
        rows: per attempt: number, contract id, agent label, epoch, verdict (rich markup),
            why, sentinel status (rich markup), wall seconds; ids, labels and why are plain.
        names: every check name a why cell may hold (their widths size the why column).
    """

    def __init__(self, title: str, rows: list[tuple[str, ...]], names: Sequence[str]) -> None:
        self.title = title
        self.rows = rows
        self.names = names

    def _widths(self, total: int) -> dict[str, int]:
        """Each column's width for a table ``total`` characters wide (one space between columns)."""
        fixed = {  # never wrapped: as wide as its header or its longest value
            column: max([len(column), *(len(Text.from_markup(r[i]).plain) for r in self.rows)])
            for i, column in enumerate(_HEADERS)
            if column not in _TEXT
        }
        room = total - sum(fixed.values()) - (len(_HEADERS) - 1)
        cells = {c: [Wrapped(r[_HEADERS.index(c)]) for r in self.rows] for c in _TEXT}
        widest = {
            c: max([len(c), *(max(map(len, w.text.split("\n"))) for w in cells[c])]) for c in _TEXT
        }
        widest["agent"] = min(widest["agent"], max(_AGENT_WIDTH, len("agent")))
        least = {  # the narrowest each can be without folding inside a piece
            c: max([len(c), *(_piece(w) for w in cells[c])]) for c in _TEXT
        }
        why = _HEADERS[5]
        names = [Wrapped(n + ",") for n in self.names]  # a crash's message may fold; names not
        least[why] = max([len(why), *(_piece(w) for w in names)])
        named = max([len(why), *(len(n.text) for n in names)])
        if least["contract"] + least["agent"] + named <= room:
            least[why] = named  # check names whole: then the ids get what room is left first
            readable = max(least["agent"], min(widest["agent"], _AGENT_READABLE))
            if least["contract"] + readable + least[why] <= room:
                least["agent"] = readable  # a label on one or two lines, the ids keeping room
            contract = min(
                widest["contract"], max(least["contract"], room - least["agent"] - least[why])
            )
            agent = min(widest["agent"], max(least["agent"], room - contract - least[why]))
        else:  # too narrow for that: ids and labels at their narrowest, the names wrap
            contract, agent = least["contract"], least["agent"]
        rest = max(least[why], room - contract - agent)
        if contract + agent + rest > room:  # narrower than every piece: each gets its share
            share = max(room, 3) / (least["contract"] + least["agent"] + least[why])
            contract, agent = (max(1, int(least[c] * share)) for c in ("contract", "agent"))
            rest = max(1, room - contract - agent)
        return {**fixed, "contract": contract, "agent": agent, why: min(rest, widest[why])}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The table at the console's width."""
        widths = self._widths(options.max_width)
        table = Table(
            title=self.title,
            title_justify="left",
            box=box.SIMPLE_HEAD,
            padding=(0, 0, 0, 0),  # the box puts one space between columns
            pad_edge=False,
            show_edge=False,
        )
        for column in _HEADERS:
            table.add_column(column, width=widths[column], no_wrap=True, overflow="ellipsis")
        for row in self.rows:
            table.add_row(
                *(
                    Wrapped(cell) if column in _TEXT else cell
                    for column, cell in zip(_HEADERS, row, strict=True)
                )
            )
        yield table


_HEADERS = ("#", "contract", "agent", "ep", "verdict", "why (failed checks)", "sentinel", "wall s")
_TEXT = frozenset({"contract", "agent", "why (failed checks)"})
"""The columns that wrap (after a separator, never cutting); the others keep one line."""


def attempts_table(
    records: Sequence[AttemptRecord],
    title: str,
    agent_status: Mapping[str, str] | None = None,
    *,
    interrupted: bool = False,
    changed: Mapping[str, str] | None = None,
) -> AttemptsTable:
    """Return a table with one row per attempt, sized to the console it is printed on.

    Columns: row number (what ``repogate show RUN_DIR N`` takes), contract id, agent, epoch,
    verdict, every failed (else errored) check by its full name, sentinel status, wall time.
    A contract id, an agent label and a check name are never cut: where the console is too
    narrow for one they wrap after a separator (``payments-retry-timeout+`` then
    ``irrelevant-failing-test``), ids keeping their width first; two agents sharing a short name
    are labelled by their whole spec text. A crash's message is cut in its middle; ``repogate
    show RUN_DIR N`` gives the details.

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
    labels = agent_labels(r.agent for r in records)
    rows: list[tuple[str, ...]] = []
    for number, record in enumerate(records, 1):
        decision = record.decision
        said = statuses.get(record.attempt_id, "done")
        agent_note = "" if said == "done" else f"(agent {said}) "
        if record.attempt_id in (changed or {}):
            verdict, style = "changed", "red"
            why = "evidence changed: " + (changed or {})[record.attempt_id]
            rest = ("", "")
        elif decision is None:
            verdict = attempt_state(record.status, live=not interrupted)
            style = "yellow" if verdict == "crashed" else "dim"
            why = agent_note + middle_cut(str(record.crash or ""), _CRASH_WIDTH)
            rest = ("", "")
        else:
            verdict = decision.outcome
            style = {"accepted": "green", "rejected": "red", "error": "yellow"}[verdict]
            why = agent_note + _why(decision)
            sentinel = _stage(decision.stages.get("sentinel passed", "skipped"))
            rest = (sentinel, f"{decision.soft.wall_time_s:.1f}")
        rows.append(
            (
                str(number),
                record.contract_id,
                labels[record.agent],
                str(record.epoch),
                f"[{style}]{verdict}",
                why,
                *rest,
            )
        )
    names = {n for r in records if r.decision for n in r.decision.failed or _errored(r.decision)}
    return AttemptsTable(title, rows, sorted(names))


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


class StdoutConsole(Console):
    """A rich console on standard output whose closed pipe is a :class:`BrokenPipeError`.

    rich's own answer to a closed pipe is ``SystemExit(1)``, which a script reads as "not
    accepted"; raised as the error it is, :func:`repogate.cli.main` exits quietly with
    :attr:`~repogate.errors.ExitCode.OUTPUT_CLOSED`, as for any other write.
    """

    def on_broken_pipe(self) -> None:
        """Stop printing and raise :class:`BrokenPipeError` (rich would exit 1)."""
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "standard output was closed by its reader")


def print_table(table: RenderableType) -> None:
    """Print ``table`` to standard output at the terminal's width (``COLUMNS`` when set).

    Off a terminal, with ``COLUMNS`` unset, at 100 columns.
    """
    console = StdoutConsole()
    if not console.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
        console.width = WIDTH
    console.print(table)
