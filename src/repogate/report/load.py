"""Read run directories for a report: the store's attempts and the manifest, nothing re-run.

A report reads only what a run wrote: ``store.sqlite`` (attempts and decisions) and
``manifest.json`` (cohort tags, isolation, budgets). Several run directories are read as one set
of attempts, each keeping the run it came from. Folders holding the same run (one run id: a copy
of a run, or one folder given twice) are one run, each attempt counted once (see :class:`Run`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from repogate.agent_spec import agent_labels
from repogate.decision import Decision
from repogate.errors import ChangedEvidenceError, RunDirError, UserInputError
from repogate.receipt import Crash
from repogate.store import AttemptRecord, RunManifest, Store, is_held
from repogate.vocabulary import UNFINISHED, AttemptStatus

UNSET = "(unset)"


@dataclass(frozen=True)
class Attempt:
    """One attempt as a report sees it.

    Attributes:
        run: the run directory it was read from.
        attempt_id: its id in that run's store; ``evidence`` its folder relative to ``run``.
        contract: the contract (task) id; ``agent`` the agent's short name; ``spec`` its full spec.
        status: as stored (:data:`repogate.vocabulary.AttemptStatus`).
        live: a run holds the run folder it was read from (a ``running`` attempt is under way,
            not interrupted: :func:`repogate.vocabulary.attempt_state`).
        decision: the decision, when one was made.
        crash: what the attempt raised, for a crashed attempt.
        cohort: the contract's cohort tags.
    """

    run: Path
    attempt_id: str
    contract: str
    agent: str
    spec: str
    epoch: int
    status: AttemptStatus
    decision: Decision | None
    crash: Crash | None
    cohort: dict[str, str] = field(default_factory=dict)
    live: bool = False

    @property
    def evidence(self) -> str:
        """The attempt's evidence folder, relative to its run directory."""
        return f"attempts/{self.attempt_id}"


@dataclass(frozen=True)
class Run:
    """One run directory: its manifest (None if it has none), its attempts, whether it is written to.

    Attributes:
        writing: a process holds the run directory's lock (a run in progress).
        run_id: the run's id (:attr:`repogate.store.Store.run_id`).
        copies: other folders given that hold the same run (its id): a copy, or ``path`` given
            again. Their attempts are merged into ``attempts``, each attempt id once (a
            finished copy of it preferred, else the first given), never counted twice.
    """

    path: Path
    manifest: RunManifest | None
    attempts: tuple[Attempt, ...]
    writing: bool
    run_id: str = ""
    copies: tuple[Path, ...] = ()

    @property
    def planned(self) -> int | None:
        """Attempts the run planned, from its manifest (None for a manifest without the count)."""
        return self.manifest.planned_attempts if self.manifest is not None else None

    @property
    def done(self) -> int:
        """Finished attempts: decided or crashed."""
        return sum(a.status not in UNFINISHED for a in self.attempts)

    @property
    def complete(self) -> bool:
        """Every planned attempt finished and no run holds the folder."""
        planned = self.planned if self.planned is not None else len(self.attempts)
        return not self.writing and self.done >= planned


@dataclass(frozen=True)
class _Folder:
    """One run directory as read, before folders holding the same run are merged."""

    path: Path
    run_id: str
    manifest: RunManifest | None
    records: tuple[AttemptRecord, ...]
    writing: bool


def _read(run_dir: Path) -> _Folder:
    """Read one run directory, refusing it when any attempt's evidence chain is broken.

    Raises:
        RunDirError: it does not exist or is not a repogate run.
        ChangedEvidenceError: an attempt's evidence changed since it was stored.
    """
    with Store.open(run_dir) as store:
        changed = store.changed_evidence()
        folder = _Folder(
            run_dir, store.run_id, store.manifest(), tuple(store.attempts()), is_held(run_dir)
        )
    if changed:  # a report never counts a verdict whose evidence chain is broken
        raise ChangedEvidenceError(
            f"run {run_dir}: the evidence of {len(changed)} attempt(s) changed since it was "
            f"stored ({', '.join(sorted(changed))})",
            "`repogate show` names what changed; rerun those attempts into a new --out folder",
        )
    return folder


def _merged(folders: list[_Folder], names: dict[str, str]) -> Run:
    """One run from the folders holding it (the first given, then its copies).

    An attempt finished in several of them must have one decision: copies that went on apart
    (an unfinished run copied, then each resumed) and decided it differently are refused, since
    which one counts would depend on the order they were given.

    Raises:
        RunDirError: two folders decided one attempt differently.
    """
    first = folders[0]
    cohorts = {c.id: c.cohort for c in first.manifest.contracts} if first.manifest else {}
    chosen: dict[str, Attempt] = {}
    for folder in folders:
        for r in folder.records:
            kept = chosen.get(r.attempt_id)
            if (
                kept is not None
                and kept.status == r.status == "done"
                and kept.decision != r.decision
            ):
                raise RunDirError(
                    f"{kept.run} and {folder.path} hold the same run (run id {first.run_id}) but "
                    f"decided attempt {r.attempt_id} differently: they went on apart after a copy",
                    "report one of them, or rerun that attempt into a new --out folder",
                )
            if kept is not None and (kept.status == "done" or r.status != "done"):
                continue
            chosen[r.attempt_id] = Attempt(
                run=folder.path,
                attempt_id=r.attempt_id,
                contract=r.contract_id,
                agent=names[r.agent],
                spec=r.agent,
                epoch=r.epoch,
                status=r.status,
                decision=r.decision,
                crash=r.crash,
                cohort=cohorts.get(r.contract_id, {}),
                live=folder.writing,
            )
    return Run(
        first.path,
        first.manifest,
        tuple(chosen.values()),
        any(f.writing for f in folders),
        first.run_id,
        tuple(f.path for f in folders[1:]),
    )


def load_runs(run_dirs: list[Path]) -> list[Run]:
    """Read every run directory; folders holding the same run (run id) are read as one run.

    Raises:
        RunDirError: a directory does not exist or is not a repogate run, or no run holds a
            finished attempt.
        ChangedEvidenceError: an attempt's evidence changed since it was stored (the store's
            digest chain).
    """
    if not run_dirs:
        raise RunDirError("no run directory given", "give the --out folder of a repogate run")
    folders = [_read(run_dir) for run_dir in run_dirs]
    names = agent_labels(r.agent for f in folders for r in f.records)
    by_id: dict[str, list[_Folder]] = {}
    for folder in folders:
        by_id.setdefault(folder.run_id, []).append(folder)
    runs = [_merged(same, names) for same in by_id.values()]
    if not any(run.done for run in runs):
        begun = sum(len(run.attempts) for run in runs)
        what = f"{begun} begun, none finished" if begun else "no attempt"
        fix = (
            "rerun the `repogate run` command that made it (the same contracts and agents) to "
            "resume, or wait for its first attempt to finish"
            if begun
            else "run `repogate run ... --out DIR` first"
        )
        raise RunDirError(f"{', '.join(map(str, run_dirs))}: {what}", fix)
    return runs


def cohort_of(attempt: Attempt, by: str | None) -> str:
    """The attempt's value of cohort key ``by`` (``all`` when not grouping, ``(unset)`` if missing)."""
    if by is None:
        return "all"
    return attempt.cohort.get(by, UNSET)


def check_cohort_key(runs: list[Run], by: str | None) -> None:
    """Refuse a cohort key no contract of the runs carries.

    Raises:
        UserInputError: naming the key and the keys the contracts do carry.
    """
    if by is None:
        return
    keys = sorted({k for run in runs for a in run.attempts for k in a.cohort})
    if by not in keys:
        raise UserInputError(
            f"unknown cohort key {by!r}",
            f"choose one of: {', '.join(keys)}"
            if keys
            else "these runs' contracts carry no cohort tags",
        )
