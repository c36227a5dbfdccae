"""What Ctrl-C prints, by command: one line saying what is kept and how to go on.

Imported by the console script's entry point before the rest of repogate loads (so it imports
nothing), and by :mod:`repogate.cli`.
"""

from __future__ import annotations

from collections.abc import Sequence

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
