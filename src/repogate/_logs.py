"""Failure logs: the full output kept as a file, one line of it shown.

A failing install or test command can print hundreds of lines (a compiler's notes, a traceback).
The whole output belongs in the attempt folder; the table, receipts and decisions get one line:
the cause and the log's path.
"""

from __future__ import annotations

import re
from pathlib import Path

from repogate._files import write_bytes_nofollow

_CAUSE = re.compile(r"error|exception|fatal|failed|cannot|not found|no such", re.IGNORECASE)
MAX_CAUSE_CHARS = 300


def cause_line(output: str) -> str:
    """Return the line of ``output`` most likely to name the cause, stripped, on one line.

    That is the last line that reads like an error (``error``, ``Exception``, ``fatal``, ...),
    else the last non-blank line; cut to ``MAX_CAUSE_CHARS`` characters. Empty for no output.
    """
    lines = [" ".join(line.split()) for line in output.splitlines() if line.strip()]
    found = next((line for line in reversed(lines) if _CAUSE.search(line)), None)
    chosen = found or (lines[-1] if lines else "")
    return chosen[:MAX_CAUSE_CHARS]


def keep_log(path: Path, text: str) -> Path:
    """Write ``text`` (a command's whole output) to ``path`` and return it.

    Written with :func:`repogate._files.write_bytes_nofollow` under ``path``'s folder (made if
    missing): the folder may be one untrusted code could write, and a link planted at ``path``
    is replaced, never written through.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_nofollow(path.parent, path.name, text.encode("utf-8", "replace"))
    return path
