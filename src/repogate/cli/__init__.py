"""The ``repogate`` command line: commands, their arguments and what they print.

Public face of the package; the modules behind it are one per command group (``run``, ``tasks``,
``report``, ``gate``, ``reviews``, ``provenance``), ``_app`` (the typer application and the
single-command verbs) and the terminal display (``terminal``: tables; ``progress``: the live run
view). Importing it loads none of the heavy modules: each command loads what it uses.
"""

from repogate._interrupted import (
    CHECK_INTERRUPTED_MESSAGE,
    INTERRUPTED_MESSAGE,
    TASKS_INTERRUPTED_MESSAGE,
)
from repogate.cli._app import app, load_evidence, main
from repogate.errors import ExitCode

__all__ = [
    "CHECK_INTERRUPTED_MESSAGE",
    "INTERRUPTED_MESSAGE",
    "TASKS_INTERRUPTED_MESSAGE",
    "ExitCode",
    "app",
    "load_evidence",
    "main",
]
