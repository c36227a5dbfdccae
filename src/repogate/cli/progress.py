"""The live progress bar of ``repogate run``: done of total, accepted, rejected, errors, and ETA.

Shown only on a terminal and never with ``--json``; elsewhere a plain ``running [N/TOTAL] LABEL``
line per attempt goes to standard error, so logs still tell what is running and how far the run
is: N is the attempt's place (attempts begun before it, those found done on resume first, plus
one), and ``(K finished)`` follows when attempts run side by side and K differs from N - 1.

A resumed run first says how many of its attempts it found done (``2 of 3 attempts already
done``), before its first ``running`` line, or alone when nothing is left to run; on a terminal
too, above the bar.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from repogate._counted import counted
from repogate.store import AttemptRecord

COUNTS = (
    "[green]{task.fields[accepted]} accepted[/] [red]{task.fields[rejected]} rejected[/] "
    "[yellow]{task.fields[error]} error[/]"
)


class RunProgress:
    """A context manager whose :meth:`tick` is the runner's progress callback.

    Args:
        total: attempts planned (finished ones found on resume count as done).
        console: where to draw (standard error by default).
        quiet: draw nothing and print no progress lines (``--json``).
        warning: printed once (even when quiet), after the inputs are checked and before the
            first attempt (at the end when none was left to run), e.g. that isolation is
            weakened.
    """

    def __init__(
        self,
        total: int,
        console: Console | None = None,
        *,
        quiet: bool = False,
        warning: str | None = None,
    ) -> None:
        self.console = console or Console(stderr=True)
        self.quiet = quiet
        self._warning = warning
        self.counts = {"accepted": 0, "rejected": 0, "error": 0}
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TextColumn(COUNTS),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
            disable=quiet or not self.console.is_terminal,
        )
        self._task = self._bar.add_task("attempts", total=total, accepted=0, rejected=0, error=0)
        self.total = total
        self.begun = 0
        self.found_done = 0
        self._said_found = False
        self._started = False
        self._running: set[str] = set()

    def __enter__(self) -> RunProgress:
        self._bar.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if exc_info[0] is None:  # nothing was left to run: said now
            self._say_warning()
            self._say_found_done()
        self._bar.__exit__(*exc_info)

    def _say(self, line: str) -> None:
        """Print ``line`` above the bar on a terminal, else as it is (never when quiet)."""
        if not self.quiet:
            self._bar.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def _say_warning(self) -> None:
        """Once, even when quiet: the warning given (``warning: WEAK ISOLATION ...``), if any."""
        if self._warning is not None:
            self._bar.console.print(
                f"warning: {self._warning}", markup=False, highlight=False, soft_wrap=True
            )
            self._warning = None

    def _say_found_done(self) -> None:
        """Once: ``2 of 3 attempts already done``, when the store held finished attempts."""
        if self.found_done and not self._said_found:
            self._said_found = True
            self._say(f"{self.found_done} of {counted(self.total, 'attempt')} already done")

    @property
    def finished(self) -> int:
        """Attempts finished so far (each counted once by its outcome)."""
        return sum(self.counts.values())

    def line(self, label: str) -> str:
        """The progress line of the attempt begun last: ``running [3/29] LABEL``.

        ``(K finished)`` follows when K, the attempts finished, is not the N - 1 before it.
        """
        place = f"running [{self.begun}/{self.total}] {label}"
        return place if self.finished == self.begun - 1 else f"{place} ({self.finished} finished)"

    def tick(self, label: str, record: AttemptRecord | None) -> None:
        """Before an attempt (``record`` None) show its label; after it, count its outcome."""
        self._say_warning()
        if record is None:
            self._say_found_done()
            self._started = True
            self.begun += 1
            self._running.add(label)
            self._bar.update(self._task, description=label[:40])
            if not self.console.is_terminal and not self.quiet:
                self.console.print(self.line(label), markup=False, highlight=False, soft_wrap=True)
            return
        if label in self._running:
            self._running.discard(label)
        else:  # found done in the store (a resumed run): it counts before those still to run
            self.begun += 1
            if not self._started:  # the store's done attempts are all told before any starts
                self.found_done += 1
        decision = record.decision
        outcome = decision.outcome if decision is not None else "error"
        self.counts[outcome if outcome in self.counts else "error"] += 1
        c = self.counts
        self._bar.update(
            self._task, advance=1, accepted=c["accepted"], rejected=c["rejected"], error=c["error"]
        )
