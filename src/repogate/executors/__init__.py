"""Executors: where attempts run. A name-to-class map, not a registry.

``local`` runs them on this machine (in this process with one worker, else in worker processes);
``ray`` runs them as tasks on a Ray cluster (the optional extra ``repogate[ray]``). Both hand each
event back to the head process, the run store's one writer. Ray is imported only when chosen.
"""

from __future__ import annotations

from repogate.errors import UserInputError
from repogate.executors.local import LocalExecutor
from repogate.jobs import Executor

__all__ = ["EXECUTORS", "LocalExecutor", "make_executor"]

EXECUTORS = ("local", "ray")
"""The names ``--executor`` takes."""


def make_executor(name: str, workers: int | None) -> Executor:
    """Build the executor ``name`` with ``workers`` attempts at once.

    Args:
        name: ``local`` or ``ray``.
        workers: attempts at once; None is 1 for ``local`` and no cap (the cluster's CPUs) for
            ``ray``.

    Raises:
        UserInputError: an unknown name, a ``workers`` below 1, or ``ray`` without Ray installed.
    """
    if workers is not None and workers < 1:
        raise UserInputError(f"--workers {workers} is below 1", "give 1 or more workers")
    if name == "local":
        return LocalExecutor(workers or 1)
    if name == "ray":
        try:
            from repogate.executors.ray import RayExecutor
        except ImportError as exc:
            if exc.name is None or exc.name.split(".")[0] != "ray":
                raise
            raise UserInputError(
                "--executor ray needs Ray, which is not installed",
                "install the extra: uv pip install 'repogate[ray]' (or uv sync --extra ray)",
            ) from None
        return RayExecutor(workers)
    raise UserInputError(f"unknown executor {name!r}", f"use one of: {', '.join(EXECUTORS)}")
