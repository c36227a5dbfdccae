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
import json
from pathlib import Path
from typing import IO, Any

from pydantic import Field

from repogate._counted import counted, listed
from repogate._model import FrozenModel
from repogate.errors import RunDirError
from repogate.receipt import visible

LOCK_NAME = ".lock"
_NEW_FOLDER = "give a new --out folder, or delete this one to start over"


class RunInputs(FrozenModel):
    """What a run is made of.

    Attributes:
        contracts: contract id to its policy digest.
        agents: agent spec to its fingerprint (sha256 over the spec and the files it names).
        epochs: repeats of every attempt.
        policies: contract id to the canonical JSON its digest is taken over
            (:meth:`~repogate.contract.TransitionContract.policy_json`), so a resumption with a
            changed contract names the keys that changed; empty in a run made before it.
    """

    contracts: dict[str, str] = Field(default_factory=dict)
    agents: dict[str, str] = Field(default_factory=dict)
    epochs: int = 1
    policies: dict[str, str] = Field(default_factory=dict)

    def extend(self, recorded: RunInputs, run_dir: Path) -> RunInputs:
        """Return the run's inputs once these are added to ``recorded`` (the run so far).

        New agents extend the run; agents already in it must be unchanged; agents it had and
        these do not name stay in it (their attempts are kept, not rerun).

        Raises:
            RunDirError: the contracts or epochs differ, or an agent of the run has changed.
        """
        where = f"{run_dir} holds a run of other inputs"
        if self.contracts != recorded.contracts:
            raise RunDirError(
                f"{where}: its contracts differ ({contract_changes(recorded, self)})",
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


MAX_NAMED = 3
"""Contracts, and keys of one contract, a refused resumption names at most; the rest counted."""


def contract_changes(recorded: RunInputs, given: RunInputs) -> str:
    """Say how the contracts ``given`` differ from those of the run ``recorded``.

    Each contract named by its id: one the run has not (``new here``), one given no more
    (``not given``), and one changed, with the keys that changed (``t1: permissions.time_budget_s
    60 here, 120 in the run; requirement.statement``; a value longer than a few words is not
    said) when the run kept its policy (:attr:`RunInputs.policies`), and repogate's version
    when that changed (the digest covers it). At most :data:`MAX_NAMED` contracts, and keys of
    one, are named, the rest counted (:func:`repogate._counted.listed`).
    """
    said = []
    for cid in sorted(set(given.contracts) | set(recorded.contracts)):
        if given.contracts.get(cid) == recorded.contracts.get(cid):
            continue
        if cid not in recorded.contracts:
            said.append(f"{cid}: new here")
        elif cid not in given.contracts:
            said.append(f"{cid}: not given")
        else:
            keys = _changed_keys(recorded.policies.get(cid), given.policies.get(cid))
            said.append(f"{cid}: {listed(keys, MAX_NAMED)}" if keys else f"{cid}: changed")
    return "; ".join(said[:MAX_NAMED]) + (
        f"; and {counted(len(said) - MAX_NAMED, 'more contract')}" if len(said) > MAX_NAMED else ""
    )


def _changed_keys(before: str | None, now: str | None) -> list[str]:
    """The dotted keys whose values differ between two ``policy_json`` texts.

    Each with both values when short (``oracles.repeat 3 here, 1 in the run``); none when either
    text is unknown (a run made before policies were kept).
    """
    if before is None or now is None:
        return []
    old, new = _flat(json.loads(before)), _flat(json.loads(now))
    changed = []
    for key in sorted(set(old) | set(new)):
        if old.get(key, _ABSENT) == new.get(key, _ABSENT):
            continue
        name = "repogate's version" if key == "evaluator" else key.removeprefix("contract.")
        values = [_short(new.get(key, _ABSENT)), _short(old.get(key, _ABSENT))]
        shown = "" if None in values else f" {values[0]} here, {values[1]} in the run"
        changed.append(visible(name + shown))
    return changed


_ABSENT = object()
"""A key one side of a comparison lacks."""


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """``value``'s leaves by dotted key (``permissions.time_budget_s``); lists are leaves."""
    if not isinstance(value, dict):
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, inner in value.items():
        flat.update(_flat(inner, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def _short(value: Any) -> str | None:
    """``value`` as JSON writes it when that is short (30 characters), else None."""
    if value is _ABSENT:
        return "not set"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 30 else None
