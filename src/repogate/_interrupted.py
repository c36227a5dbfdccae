"""What Ctrl-C prints, by command: one line saying what is kept and how to go on; SIGTERM as Ctrl-C.

Imported by the console script's entry point before the rest of repogate loads (so it imports
nothing of repogate's), and by :mod:`repogate.cli`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the console script imports this module before anything else: keep it light
    from collections.abc import Sequence
    from types import FrameType

INTERRUPTED_MESSAGE = "interrupted: finished attempts are kept; rerun the same command to resume"
"""``repogate run``: its finished attempts are in the run folder."""
TASKS_INTERRUPTED_MESSAGE = (
    "interrupted: finished candidates are kept; rerun the same command to resume"
)
"""``tasks import`` and ``tasks mine``: each finished candidate is in the task-set folder."""
CHECK_INTERRUPTED_MESSAGE = "interrupted: nothing was kept; rerun the same command to check again"
"""``tasks check``: it writes no results, only a line per contract as it finishes."""
OTHER_INTERRUPTED_MESSAGE = "interrupted; rerun the same command"

_BY_COMMAND = {
    ("run",): INTERRUPTED_MESSAGE,
    ("tasks", "import"): TASKS_INTERRUPTED_MESSAGE,
    ("tasks", "mine"): TASKS_INTERRUPTED_MESSAGE,
    ("tasks", "check"): CHECK_INTERRUPTED_MESSAGE,
}


def interrupted_message(args: Sequence[str]) -> str:
    """The line Ctrl-C prints for the command line ``args`` (without the program name)."""
    words = tuple(args[:2])
    return _BY_COMMAND.get(words, _BY_COMMAND.get(words[:1], OTHER_INTERRUPTED_MESSAGE))


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


class sigterm_as_ctrl_c:  # named as the function it stands for: `with sigterm_as_ctrl_c():`
    """While the block runs, SIGTERM raises ``KeyboardInterrupt`` in the main thread, as SIGINT does.

    A scheduler's stop (systemd, a CI runner's timeout, ``kill PID``) sends SIGTERM to the main
    process alone; handled as Ctrl-C it stops the whole tree the command started (each sandboxed
    command's session is killed as the interrupt unwinds), keeps what is finished, prints one
    line and exits 130, instead of dying at once with 143 and leaving that tree running. The
    previous handler is back when the block ends (a caller in the same process, such as a test
    runner calling :func:`repogate.cli.main`, keeps its own). Off the main thread, where Python
    installs no handler, it does nothing. ``signal`` and ``threading`` are imported on entry, not
    with the module: a Ctrl-C while they load is then inside the console script's guard.
    """

    def __init__(self) -> None:
        self._previous: object = None
        self._installed = False

    def __enter__(self) -> None:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, _interrupt)
            self._installed = True

    def __exit__(self, *exc_info: object) -> None:
        import signal

        if self._installed:
            signal.signal(signal.SIGTERM, self._previous)  # type: ignore[arg-type]
            self._installed = False
