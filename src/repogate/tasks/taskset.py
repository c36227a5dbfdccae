"""A task set: a folder of validated contracts, the candidates it rejected, and its selection rule.

Layout of a task-set folder (written by ``repogate tasks import`` and ``repogate tasks mine``)::

    taskset.json             the selection rule, written before the first candidate is validated
    tasks.jsonl              one :class:`TaskEntry` per validated task, appended as each finishes
    rejected.jsonl           one :class:`RejectedEntry` per rejected candidate (the denominator)
    contracts/<id>/contract.toml   the contract (and, for imported instances, its patch files)
    validation/<id>/         the gold attempt's run store (receipts of the hermetic check)

A candidate listed in either ``.jsonl`` file is finished: rerunning the same command on the same
folder skips it, so no candidate is validated twice. A crash mid-candidate leaves it in neither,
and the rerun validates it again from scratch. The selection rule is fixed before any candidate
runs (the seed: record selection rules before running the systems); a rerun with another rule is
refused rather than mixed into the same folder.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from repogate._counted import listed
from repogate._folders import not_a_folder
from repogate._model import FrozenModel, SchemaVersion
from repogate.errors import ContractError, UserInputError
from repogate.receipt import visible
from repogate.tasks.validate import RejectionReason, Validation
from repogate.vocabulary import is_task_id

TASKS_FILE = "tasks.jsonl"
REJECTED_FILE = "rejected.jsonl"
RETRIED_ON_RESUME = frozenset({"repository_missing"})
"""Rejection reasons a resumed ``tasks import`` / ``tasks mine`` tries again (:meth:`TaskSet.finished`)."""
SELECTION_FILE = "taskset.json"
CONTRACTS_DIR = "contracts"
CONTRACT_NAME = "contract.toml"


class Selection(FrozenModel):
    """The rule that chose a task set's candidates, fixed before any of them is validated.

    Attributes:
        source: ``swebench-import`` or ``mined``.
        origin: the instance file, or the repository mined.
        rule: the selection in words (range, path globs, limit, ids).
        repeats: runs of each state per candidate (N of N must agree).
        flags: the command line's choices the selection was made with, by option as the user
            writes it (``--repeats``: ``2``, ``--as``: ``lifecycle``; the input file or
            repository under its metavar): a resumption with other ones names each that
            differs (:func:`selection_changes`). Empty in a task set made before it.
    """

    schema_version: SchemaVersion = 1
    source: Literal["swebench-import", "mined"]
    origin: str
    rule: str
    repeats: int = Field(ge=1)
    flags: dict[str, str] = Field(default_factory=dict)


MAX_CHANGES_SAID = 4
"""Options a refused resumption names at most; the others are counted (``and 2 more``)."""


def selection_changes(before: Selection, now: Selection) -> list[str]:
    """Say what differs between the selection a task set was made with and this command's.

    Args:
        before: the selection stored in the task set (``taskset.json``).
        now: the one this command asks for.

    Returns:
        One phrase per option whose value differs, in the order the command line names them
        (``--repeats 2 (the task set has 1)``; an option one side lacks reads ``not given``);
        when the stored one has no :attr:`Selection.flags` (made before them) or no option
        differs (a ``--range`` whose branch moved since), the fields that differ (``rule ...``).
        Empty when the two are equal. Values are escaped (:func:`repogate.receipt.visible`).
    """

    def shown(value: object) -> str:
        return "not given" if value is None else visible(str(value))

    def phrase(what: str, new: object, old: object) -> str:
        return f"{what} {shown(new)} (the task set has {shown(old)})"

    if before.flags:
        keys = list(dict.fromkeys([*now.flags, *before.flags]))
        changed = [
            phrase(key, now.flags.get(key), before.flags.get(key))
            for key in keys
            if now.flags.get(key) != before.flags.get(key)
        ]
        if changed:
            return changed
    return [
        phrase(field, getattr(now, field), getattr(before, field))
        for field in ("source", "origin", "rule", "repeats")
        if getattr(now, field) != getattr(before, field)
    ]


class TaskEntry(FrozenModel):
    """One validated task in ``tasks.jsonl``.

    Attributes:
        id: the contract id (the instance id, or ``<repo>-<short sha>`` for a mined commit).
        source: where the candidate came from (instance file and id, or repository and commit).
        contract: the contract file, relative to the task-set folder.
        contract_digest: the contract's policy digest (sha256 hex).
        validation: what validation observed (ids, flaky and dropped tests, timings).
    """

    id: str
    source: dict[str, str]
    contract: str
    contract_digest: str
    validation: Validation


class RejectedEntry(FrozenModel):
    """One rejected candidate in ``rejected.jsonl``: its reason from the closed vocabulary.

    Attributes:
        id: the candidate id.
        source: where it came from.
        reason: one of :data:`~repogate.tasks.validate.RejectionReason`.
        detail: one sentence on what was seen.
        validation: what validation observed before it stopped, with its timings (None when
            it never ran).
        log: the failing command's whole output kept as a file, its path relative to the task
            set (``validation/<id>/rejection.log``); None when there was none.
    """

    id: str
    source: dict[str, str]
    reason: RejectionReason
    detail: str
    validation: Validation | None = None
    log: str | None = None


def _read_jsonl(path: Path, model: type[BaseModel]) -> list[Any]:
    if not path.is_file():
        return []
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(model.model_validate_json(line))
        except ValidationError:
            raise UserInputError(
                f"{path}:{number}: not a {model.__name__} record",
                "restore the file or start a new task set with another --out",
            ) from None
    return rows


def _without_flags(selection: Selection) -> Selection:
    return selection.model_copy(update={"flags": {}})


def _folder_name(task_id: str) -> str:
    if not is_task_id(task_id):
        raise ValueError(f"{task_id!r} is not a task id; it cannot name a folder")
    return task_id


class TaskSet:
    """A task-set folder opened for writing (import, mine) or reading (run, check).

    Args:
        root: the folder.
    """

    def __init__(self, root: Path) -> None:
        self.root = root.absolute()  # its work folders are handed to git commands run elsewhere

    @classmethod
    def create(cls, root: Path, selection: Selection) -> TaskSet:
        """Open ``root`` for a new or resumed task set with ``selection``.

        Raises:
            UserInputError: ``root`` is a file or lies below one, holds a task set made with
                another selection, or holds other files and no task set.
        """
        where = not_a_folder(root)
        if where is not None:
            raise UserInputError(f"--out {root} {where}", "give a folder")
        path = root / SELECTION_FILE
        if root.is_dir() and not path.is_file() and any(root.iterdir()):
            raise UserInputError(  # a run folder, a source tree: nothing is adopted
                f"--out {root} holds other files and no task set ({SELECTION_FILE})",
                "give a new or empty folder, or the --out of an earlier tasks command to resume",
            )
        root.mkdir(parents=True, exist_ok=True)
        if path.is_file():
            try:
                before = Selection.model_validate_json(path.read_text(encoding="utf-8"))
            except ValidationError:
                before = None
            # a task set made before flags were recorded resumes on the rest alike
            wanted = selection if before is None or before.flags else _without_flags(selection)
            if before != wanted:
                said = (
                    "; it cannot be read"
                    if before is None
                    else ": " + listed(selection_changes(before, selection), MAX_CHANGES_SAID)
                )
                raise UserInputError(
                    f"the task set in {root} was made with another selection ({path}){said}",
                    "rerun with the same arguments to resume, or give a new --out",
                )
        else:
            _append(path, selection.model_dump_json(indent=2), mode="w")
        for name in (TASKS_FILE, REJECTED_FILE):
            (root / name).touch()
        return cls(root)

    @classmethod
    def open(cls, root: Path) -> TaskSet:
        """Open an existing task set.

        Raises:
            UserInputError: ``root`` holds no ``tasks.jsonl``.
        """
        if not (root / TASKS_FILE).is_file():
            raise UserInputError(
                f"{root} is not a task set (no {TASKS_FILE})",
                "give a folder written by `repogate tasks import` or `repogate tasks mine`",
            )
        return cls(root)

    def selection(self) -> Selection | None:
        """The selection rule, or None when the folder has none."""
        path = self.root / SELECTION_FILE
        if not path.is_file():
            return None
        return Selection.model_validate_json(path.read_text(encoding="utf-8"))

    def tasks(self) -> list[TaskEntry]:
        """The validated tasks, in the order they finished."""
        rows: list[TaskEntry] = _read_jsonl(self.root / TASKS_FILE, TaskEntry)
        return rows

    def rejected(self) -> list[RejectedEntry]:
        """Return the rejected candidates, in the order they finished.

        Each id's last rejection only, and none of an id validated since (a retried
        ``repository_missing``, see :meth:`finished`).
        """
        rows: list[RejectedEntry] = _read_jsonl(self.root / REJECTED_FILE, RejectedEntry)
        validated = {t.id for t in self.tasks()}
        last = {r.id: r for r in rows if r.id not in validated}
        return [r for r in rows if last.get(r.id) is r]

    def finished(self) -> set[str]:
        """Ids of every candidate already validated or rejected (skipped on resume).

        A ``repository_missing`` rejection is not finished: the mirror was missing on the
        user's side, not in the task, so a rerun with the mirror in place tries it again (new
        user: it stayed rejected until its line was deleted by hand). Its new result is appended;
        :meth:`rejected` keeps each id's last one.
        """
        kept = {r.id for r in self.rejected() if r.reason not in RETRIED_ON_RESUME}
        return {t.id for t in self.tasks()} | kept

    def contract_dir(self, task_id: str) -> Path:
        """The folder of one task's contract (and its patch files).

        Raises:
            ValueError: ``task_id`` is not a task id (:func:`repogate.vocabulary.is_task_id`):
                it could name a folder outside the task set.
        """
        return self.root / CONTRACTS_DIR / _folder_name(task_id)

    def validation_dir(self, task_id: str) -> Path:
        """The run store of one candidate's gold attempt (``ValueError`` as :meth:`contract_dir`)."""
        return self.root / "validation" / _folder_name(task_id)

    def contract_paths(self) -> list[Path]:
        """The contract files of every validated task, in ``tasks.jsonl`` order."""
        return [self.root / t.contract for t in self.tasks()]

    def add_task(self, entry: TaskEntry) -> None:
        """Append a validated task (one line, flushed and synced)."""
        _append(self.root / TASKS_FILE, entry.model_dump_json())

    def add_rejected(self, entry: RejectedEntry) -> None:
        """Append a rejected candidate (one line, flushed and synced)."""
        _append(self.root / REJECTED_FILE, entry.model_dump_json())

    def tally(self) -> dict[str, int]:
        """Count rejected candidates by reason, and validated tasks under ``validated``."""
        counts: dict[str, int] = {"validated": len(self.tasks())}
        for entry in self.rejected():
            counts[entry.reason] = counts.get(entry.reason, 0) + 1
        return counts


def _append(path: Path, line: str, mode: str = "a") -> None:
    with path.open(mode, encoding="utf-8") as handle:
        handle.write(line + "\n")
        handle.flush()
        with contextlib.suppress(OSError):
            os.fsync(handle.fileno())


def is_task_set(path: Path) -> bool:
    """True when ``path`` is a folder holding a ``tasks.jsonl``."""
    return path.is_dir() and (path / TASKS_FILE).is_file()


def contract_files(paths: Iterable[Path]) -> list[tuple[Path, str]]:
    """Return (contract file, source label) for contract files and task-set folders.

    A task-set folder (one holding ``tasks.jsonl``) stands for each of its validated contracts.

    Raises:
        ContractError: a folder that is not a task set, a task set that holds no validated
            task (every candidate rejected, or none finished), or one whose validated tasks'
            contracts are not in it (a shipped manifest): named, with what to give instead.
    """
    files: list[tuple[Path, str]] = []
    for path in paths:
        if is_task_set(path):
            found = [(p, str(p)) for p, _ in iter_sources(path)]
            if not found:
                raise _no_task(TaskSet(path))
            absent = [p for p, _ in found if not p.exists()]
            if absent:
                raise _no_contracts(TaskSet(path), absent)
            files += found
        elif path.is_dir():
            raise ContractError(
                f"{path} is a folder without {TASKS_FILE}, so not a task set",
                "give contract .toml files, or a task-set folder written by "
                "`repogate tasks import` or `repogate tasks mine`",
            )
        else:
            files.append((path, str(path)))
    return files


_MADE_BY = {"mined": "repogate tasks mine", "swebench-import": "repogate tasks import"}


def _made_by(taskset: TaskSet) -> str:
    """The command that made ``taskset``, from its selection (either, when it has none)."""
    selection = taskset.selection()
    made = _MADE_BY.get(selection.source) if selection is not None else None
    return f"`{made}`" if made else "`repogate tasks import` or `repogate tasks mine`"


def _no_task(taskset: TaskSet) -> ContractError:
    """The error for a task set that stands for no task: what it holds, and where to look."""
    tally = taskset.tally()
    rejected = sum(tally.values()) - tally["validated"]
    if not rejected:
        selection = taskset.selection()
        rule = f" (its selection: {selection.rule})" if selection is not None else ""
        verb = "mine" if selection is not None and selection.source == "mined" else "import"
        return ContractError(
            f"{taskset.root} holds no validated task: no candidate finished{rule}",
            f"if the {_made_by(taskset)} command that made it was stopped, rerun it to resume; "
            f"if its selection chose no candidate, {verb} another selection into a new --out",
        )
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(tally.items()) if k != "validated")
    return ContractError(
        f"{taskset.root} holds no validated task ({rejected} rejected: {reasons})",
        f"see {taskset.root / REJECTED_FILE} for why, and give a task set with validated tasks",
    )


def _no_contracts(taskset: TaskSet, absent: list[Path]) -> ContractError:
    """The error for a task set listing validated tasks whose contract files are not in it.

    ``examples/tasks/*`` are such manifests: ``tasks.jsonl`` without the contracts, which the
    command that made the task set writes (resuming the same folder would skip them, finished).
    """
    more = ", ..." if len(absent) > 1 else ""
    many = (
        f"{len(absent)} validated tasks whose contracts are" if more else "a task whose contract is"
    )
    return ContractError(
        f"{taskset.root} lists {many} not in it ({absent[0]}{more}): a task-set manifest "
        "without its contracts",
        f"make them with the {_made_by(taskset)} command that made it (its selection is in "
        f"{taskset.root / SELECTION_FILE}) and a new --out, then give that folder",
    )


def iter_sources(path: Path) -> Iterator[tuple[Path, str]]:
    """Yield (contract file, source label) for each validated task of the task set at ``path``."""
    taskset = TaskSet.open(path)
    for entry in taskset.tasks():
        yield path / entry.contract, json.dumps(entry.source, sort_keys=True)
