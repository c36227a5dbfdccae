"""The run directory's own rules: its lock and its inputs.

Who may write it (one process, holding the lock) and what it is a run of (its inputs). Files in
it are written whole or not at all (:func:`repogate._locks.write_atomic`).

A run directory belongs to the inputs it was made with: the contracts (by policy digest), the
agents (by fingerprint: the spec and the content of every file it names) and the number of
epochs. A rerun may resume it, or extend it with new agents (the same contracts, the same epochs,
every agent it had unchanged); anything else would let finished attempts answer for other inputs.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO

from pydantic import Field

from repogate._counted import counted
from repogate._model import FrozenModel
from repogate.errors import RunDirError

LOCK_NAME = ".lock"
_NEW_FOLDER = "give a new --out folder, or delete this one to start over"


class RunInputs(FrozenModel):
    """What a run is made of.

    Attributes:
        contracts: contract id to its policy digest.
        agents: agent spec to its fingerprint (sha256 over the spec and the files it names).
        epochs: repeats of every attempt.
    """

    contracts: dict[str, str] = Field(default_factory=dict)
    agents: dict[str, str] = Field(default_factory=dict)
    epochs: int = 1

    def extend(self, recorded: RunInputs, run_dir: Path) -> RunInputs:
        """Return the run's inputs once these are added to ``recorded`` (the run so far).

        New agents extend the run; agents already in it must be unchanged; agents it had and
        these do not name stay in it (their attempts are kept, not rerun).

        Raises:
            RunDirError: the contracts or epochs differ, or an agent of the run has changed.
        """
        where = f"{run_dir} holds a run of other inputs"
        if self.contracts != recorded.contracts:
            changed = sorted(set(self.contracts.items()) ^ set(recorded.contracts.items()))
            raise RunDirError(
                f"{where}: its contracts differ ({', '.join(sorted({c for c, _ in changed}))})",
                "give the same contracts to resume or add agents; " + _NEW_FOLDER,
            )
        if self.epochs != recorded.epochs:
            raise RunDirError(
                f"{where}: it has {counted(recorded.epochs, 'epoch')}, not {self.epochs}",
                f"give --epochs {recorded.epochs} to resume or add agents; " + _NEW_FOLDER,
            )
        for spec, fingerprint in self.agents.items():
            if recorded.agents.get(spec, fingerprint) != fingerprint:
                raise RunDirError(
                    f"{where}: agent {spec} changed (a file it names, or a model-driven "
                    "agent's configuration: endpoint, sampling, prompts, version, differs)",
                    _NEW_FOLDER,
                )
        return recorded.model_copy(update={"agents": {**recorded.agents, **self.agents}})


def hold(run_dir: Path) -> IO[str]:
    """Take the run directory's lock (``flock``), or say who holds it.

    Raises:
        RunDirError: another process holds it.
    """
    handle = (run_dir / LOCK_NAME).open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise RunDirError(
            f"another repogate run is writing to {run_dir}",
            "wait for it to finish, or give another --out folder",
        ) from None
    return handle


def is_held(run_dir: Path) -> bool:
    """Return True while some process holds the run directory's lock (a run is writing it)."""
    try:
        handle = (run_dir / LOCK_NAME).open("rb")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False
