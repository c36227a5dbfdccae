"""The digest chain over one attempt's evidence: receipt files -> ``decision.json`` -> store row.

The evidence files are the canonical copy (what an auditor reads and what a signature would cover):
each receipt is an in-toto statement file, and ``decision.json`` lists every receipt file with its
sha256. The SQLite index is a queryable copy: its receipt rows repeat each receipt with the file's
sha256, and the attempt's row repeats the decision with the sha256 of ``decision.json``. Checking
one attempt means::

    sha256(decision.json)        == the row's decision_sha256
    decision.json                == the row's decision        (the copies agree)
    sha256(receipts/<file>)      == the digest decision.json lists for it, for every file listed
    receipts/ holds no file the decision does not list
    each receipt row             == its file's predicate, and carries the same sha256

This finds any copy changed alone (a receipt, ``decision.json``, a row). It cannot find a rewrite
of every copy made consistently by someone with write access to the run directory; that needs a
signature over the decision with a key the writer does not hold.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from repogate._counted import counted
from repogate.decision import Decision
from repogate.errors import RunDirError
from repogate.receipt import Receipt

DECISION_FILE = "decision.json"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class StoredReceipt:
    """One receipt row of the index: its file (relative to the attempt folder), digest and body."""

    path: str
    sha256: str
    body: str


def file_sha256(path: Path) -> str | None:
    """Return the sha256 (hex) of ``path``'s bytes read in chunks, or None when it is not a file.

    A symbolic link is never followed: it counts as absent.
    """
    if path.is_symlink() or not path.is_file():
        return None
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _receipt_problems(folder: Path, decision: Decision, rows: list[StoredReceipt]) -> list[str]:
    problems = []
    listed = {d.path: d.sha256 for d in decision.receipt_digests}
    for path, recorded in listed.items():
        actual = file_sha256(folder / path)
        if actual is None:
            problems.append(f"{path} is missing")
        elif actual != recorded:
            problems.append(f"{path} changed")
    receipts = folder / "receipts"
    present = sorted(receipts.iterdir()) if receipts.is_dir() else []
    problems += [
        f"receipts/{p.name} is not in the decision"
        for p in present
        if f"receipts/{p.name}" not in listed and not p.name.endswith(".tmp")
    ]
    if sorted(r.path for r in rows) != sorted(listed):
        problems.append("store rows of receipts differ from the decision's list")
    for row in rows:
        if listed.get(row.path) != row.sha256 or not _row_matches_file(row, folder / row.path):
            problems.append(f"store row of {row.path} differs from its file")
    return problems


def _row_matches_file(row: StoredReceipt, path: Path) -> bool:
    try:
        predicate = json.loads(path.read_text(encoding="utf-8"))["predicate"]
        if not isinstance(predicate, dict):  # valid JSON of another shape is a changed file
            return False
        predicate.pop("state", None)
        return Receipt.model_validate(predicate) == Receipt.model_validate_json(row.body)
    except (OSError, ValueError, KeyError, TypeError, RecursionError, ValidationError):
        return False


def attempt_problems(
    folder: Path, row_decision: str | None, decision_sha256: str | None, rows: list[StoredReceipt]
) -> tuple[str, ...]:
    """Check one finished attempt's digest chain; return what changed (empty when intact).

    Args:
        folder: the attempt's evidence folder.
        row_decision: the decision JSON its store row holds.
        decision_sha256: the sha256 of ``decision.json`` its store row holds.
        rows: its receipt rows.

    Returns:
        One short phrase per problem, naming the file (relative to ``folder``) or the store row.
    """
    path = folder / DECISION_FILE
    actual = file_sha256(path)
    if actual is None:
        return (f"{DECISION_FILE} is missing",)
    problems = [] if actual == decision_sha256 else [f"{DECISION_FILE} changed"]
    try:
        decision = Decision.model_validate_json(path.read_bytes())
    except ValidationError:
        return (*problems, f"{DECISION_FILE} is not a decision")
    try:
        same = row_decision is not None and Decision.model_validate_json(row_decision) == decision
    except ValidationError:
        same = False
    if not same:
        problems.append(f"store row of the decision differs from {DECISION_FILE}")
    return tuple(problems + _receipt_problems(folder, decision, rows))


def refuse_changed(run_dir: Path, changed: dict[str, tuple[str, ...]]) -> None:
    """Refuse to resume ``run_dir`` when any finished attempt's evidence ``changed``.

    Resume refuses rather than redoes: a changed file means someone other than the harness wrote
    the run directory, so none of its attempts can be vouched for, and redoing the changed one
    would overwrite the only trace of the change. The folder is left as found.

    Raises:
        RunDirError: naming the first changed attempt and what changed, and how many more.
    """
    if not changed:
        return
    first, problems = next(iter(changed.items()))
    more = f" (and {counted(len(changed) - 1, 'more attempt')})" if len(changed) > 1 else ""
    raise RunDirError(
        f"{run_dir}: evidence of attempt {first} changed since it was stored "
        f"({', '.join(problems)}){more}",
        "`repogate show` lists every changed attempt; rerun into a new --out folder",
    )
