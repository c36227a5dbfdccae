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
# A Python exception's last line (``ModuleNotFoundError: No module named 'x'``), also as pytest
# prints it (``E   ImportError: ...``) or inside a tool's framing (``│ KeyError: ...``).
_EXCEPTION = re.compile(r"^(?:E\s+|[^\w\s]\s*)?(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit): ")
# A tool's closing advice, never the cause: uv's ``hint:``, pip's ``note:``/``hint:``.
_ADVICE = re.compile(r"^(?:[^\w\s]\s*)?(?:hint|note|help):", re.IGNORECASE)
MAX_CAUSE_CHARS = 300


def cause_line(output: str) -> str:
    """Return the line of ``output`` most likely to name the cause, stripped, on one line.

    That is the last line naming a Python exception (``ModuleNotFoundError: No module named
    'pkg_resources'``), else the last line that reads like an error (``error``, ``Exception``,
    ``fatal``, ...), else the last non-blank line; a tool's closing advice (uv's ``hint:``, pip's
    ``note:``) is never chosen while another line is left. Cut to ``MAX_CAUSE_CHARS`` characters.
    Empty for no output.
    """
    every = [" ".join(line.split()) for line in output.splitlines() if line.strip()]
    lines = [line for line in every if not _ADVICE.match(line)] or every
    found = next((line for line in reversed(lines) if _EXCEPTION.match(line)), None)
    found = found or next((line for line in reversed(lines) if _CAUSE.search(line)), None)
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
