"""The processes a block of code started and left running: found in ``/proc`` and killed.

For starts that fail half-way and drop the handles of what they started: Ray's ``ray.init``
raising while its node starts leaves the GCS server, the raylet and their agents running, with
no object left that could stop them (``ray.shutdown()`` knows only a node that finished
starting). Linux only (``/proc``); elsewhere nothing is found and nothing is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path


def descendants(pid: int | None = None) -> set[int]:
    """Return the live (not zombie) descendants of ``pid`` (default: this process), at any depth.

    A descendant that its parent left (reparented to init or a subreaper) is no longer found:
    call this while the processes' parents still live.
    """
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):  # gone meanwhile, or unreadable
            continue
        if state != "Z":
            children.setdefault(int(parent), []).append(int(stat.parent.name))
    found: set[int] = set()
    todo = [os.getpid() if pid is None else pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


@contextlib.contextmanager
def killed_on_failure() -> Iterator[None]:
    """Kill (SIGKILL) every process the block started, at any depth, when the block raises.

    Processes running before the block are never touched; on success nothing is killed.
    """
    before = descendants()
    try:
        yield
    except BaseException:
        for pid in descendants() - before:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        raise
