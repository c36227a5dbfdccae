"""Sign verdicts: a DSSE envelope over an in-toto Statement for each decision and for the run.

Each receipt is already an in-toto Statement v1 file (:meth:`repogate.receipt.Receipt.to_in_toto`).
A decision's Statement names as its subjects ``decision.json``, every receipt file, and every
other file of the attempt folder (the patch, the JUnit reports and test logs the receipts were made
from, the agent's outputs), each with its sha256, so one signature covers the whole chain and the
evidence under it; its predicate repeats the attempt, task, state id
and outcome. The run's Statement names ``manifest.json`` and every attempt's ``decision.json`` and
decision envelope. Both are wrapped in DSSE envelopes (https://github.com/secure-systems-lab/dsse,
payload type ``application/vnd.in-toto+json``) signed with ed25519 through securesystemslib,
offline. Layout::

    RUN_DIR/run.intoto.dsse.json                        the run summary's envelope
    RUN_DIR/attempts/<id>/decision.intoto.dsse.json     one decision's envelope
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from securesystemslib.dsse import Envelope
from securesystemslib.signer import Signer

from repogate._locks import write_atomic
from repogate.decision import Decision
from repogate.receipt import IN_TOTO_STATEMENT
from repogate.store import DECISION_FILE, MANIFEST_FILE, file_sha256

__all__ = [
    "DECISION_ENVELOPE",
    "DECISION_PREDICATE",
    "PAYLOAD_TYPE",
    "RUN_ENVELOPE",
    "RUN_PREDICATE",
    "Entries",
    "attempt_entries",
    "decided_attempts",
    "decision_statement",
    "receipt_files",
    "run_id_of_folder",
    "run_statement",
    "sign_attempt",
    "sign_run",
    "signed_envelope",
]

PAYLOAD_TYPE = "application/vnd.in-toto+json"
DECISION_ENVELOPE = "decision.intoto.dsse.json"
RUN_ENVELOPE = "run.intoto.dsse.json"
DECISION_PREDICATE = "https://repogate.dev/decision/v1"
RUN_PREDICATE = "https://repogate.dev/run-summary/v1"


def _subject(root: Path, relative: str) -> dict[str, Any]:
    digest = file_sha256(root / relative)
    if digest is None:
        msg = f"{root / relative} is not a file"
        raise FileNotFoundError(msg)
    return {"name": relative, "digest": {"sha256": digest}}


def receipt_files(folder: Path) -> list[str]:
    """Return the receipt files of an attempt folder, relative to it, sorted."""
    receipts = folder / "receipts"
    if not receipts.is_dir():
        return []
    return sorted(
        f"receipts/{p.name}" for p in receipts.iterdir() if p.name.endswith(".intoto.json")
    )


class Entries(NamedTuple):
    """An attempt folder's entries, relative to it, each list sorted.

    Attributes:
        files: its regular files (the decision envelope left out).
        others: what cannot be signed: links (to files or folders), FIFOs, sockets, devices.
        unlisted: ``(folder, why)`` for each folder that could not be listed (``.`` for the
            attempt folder itself; ``why`` is the system's message, ``Permission denied``):
            nothing in it is in the other lists.
    """

    files: list[str]
    others: list[str]
    unlisted: list[tuple[str, str]]


def attempt_entries(folder: Path) -> Entries:
    """Return an attempt folder's regular files, its other entries and the folders it could not list.

    Walks the whole folder without following links, leaving out the decision envelope. Files:
    ``decision.json``, ``patch.diff``, ``receipts/*``, ``tests-*/**`` (JUnit reports, test output
    logs, guard records), ``agent/**`` (the agent's outputs and logs). A folder that cannot be
    listed (no permission, a path past the system's length limit) is named in ``unlisted``,
    never left out without a word.
    """
    files: list[str] = []
    others: list[str] = []
    unlisted: list[tuple[str, str]] = []
    pending = [folder]
    while pending:
        here = pending.pop()
        try:
            with os.scandir(here) as listing:
                entries = list(listing)
        except OSError as exc:
            unlisted.append((here.relative_to(folder).as_posix(), exc.strerror or str(exc)))
            continue
        for entry in entries:
            path = here / entry.name
            relative = path.relative_to(folder).as_posix()
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file(follow_symlinks=False)
            except OSError:
                is_dir = is_file = False
            if is_dir:
                pending.append(path)
            elif relative != DECISION_ENVELOPE:
                (files if is_file else others).append(relative)
    return Entries(sorted(files), sorted(others), sorted(unlisted))


def run_id_of_folder(folder: Path) -> str | None:
    """Return the run id the manifest of attempt ``folder``'s run names, or None.

    The run folder is ``folder/../..`` (``RUN_DIR/attempts/<id>``); None when it holds no
    readable manifest or the manifest names no run id (written before run ids).
    """
    try:
        manifest = json.loads((folder.parent.parent / MANIFEST_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    run_id = manifest.get("run_id") if isinstance(manifest, dict) else None
    return run_id if isinstance(run_id, str) else None


def decision_statement(folder: Path) -> dict[str, Any]:
    """Return the in-toto Statement v1 of the decision in attempt ``folder``.

    Subjects: ``decision.json``, every receipt file, then every other regular file of the folder
    (:func:`attempt_entries`), each with its sha256. Predicate: the
    attempt id (the folder's name), the run id (:func:`run_id_of_folder`), task id, state id,
    outcome and ``accepted``; the verifier holds the first two to where it finds the envelope,
    so a signed verdict moved to another attempt or run does not verify there.

    Raises:
        FileNotFoundError: the folder holds no ``decision.json``.
        pydantic.ValidationError: ``decision.json`` is not a decision.
    """
    decision = Decision.model_validate_json((folder / DECISION_FILE).read_bytes())
    names = [DECISION_FILE, *receipt_files(folder)]
    names += [name for name in attempt_entries(folder).files if name not in names]
    return {
        "_type": IN_TOTO_STATEMENT,
        "subject": [_subject(folder, name) for name in names],
        "predicateType": DECISION_PREDICATE,
        "predicate": {
            "attempt_id": folder.name,
            "run_id": run_id_of_folder(folder),
            "task_id": decision.task_id,
            "state_id": decision.state_id,
            "outcome": decision.outcome,
            "accepted": decision.accepted,
        },
    }


def signed_envelope(statement: dict[str, Any], signer: Signer) -> bytes:
    """Return the JSON bytes of a DSSE envelope over ``statement`` signed by ``signer``."""
    payload = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    envelope = Envelope(payload=payload, payload_type=PAYLOAD_TYPE, signatures={})
    envelope.sign(signer)
    return json.dumps(envelope.to_dict(), indent=2).encode() + b"\n"


def sign_attempt(folder: Path, signer: Signer) -> Path:
    """Sign the decision of attempt ``folder``; write and return ``decision.intoto.dsse.json``.

    Written whole or not at all (a rename); signing again replaces the envelope.
    """
    path = folder / DECISION_ENVELOPE
    write_atomic(path, signed_envelope(decision_statement(folder), signer))
    return path


def decided_attempts(run_dir: Path) -> list[Path]:
    """Return the attempt folders of ``run_dir`` that hold a ``decision.json``, sorted by name."""
    attempts = run_dir / "attempts"
    if not attempts.is_dir():
        return []
    return sorted(p for p in attempts.iterdir() if (p / DECISION_FILE).is_file())


def run_statement(run_dir: Path) -> dict[str, Any]:
    """Return the in-toto Statement v1 of the run summary.

    Subjects: ``manifest.json`` (when there is one) and each decided attempt's ``decision.json``
    and decision envelope. Predicate: the outcome of each attempt and their counts.
    """
    folders = decided_attempts(run_dir)
    names = [MANIFEST_FILE] if (run_dir / MANIFEST_FILE).is_file() else []
    outcomes: dict[str, str] = {}
    for folder in folders:
        relative = folder.relative_to(run_dir).as_posix()
        names += [f"{relative}/{DECISION_FILE}", f"{relative}/{DECISION_ENVELOPE}"]
        decision = Decision.model_validate_json((folder / DECISION_FILE).read_bytes())
        outcomes[folder.name] = decision.outcome
    counts = {
        kind: sum(1 for o in outcomes.values() if o == kind)
        for kind in sorted(set(outcomes.values()))
    }
    return {
        "_type": IN_TOTO_STATEMENT,
        "subject": [_subject(run_dir, name) for name in names],
        "predicateType": RUN_PREDICATE,
        "predicate": {"attempts": outcomes, "counts": counts},
    }


def sign_run(run_dir: Path, signer: Signer, *, force: bool = False) -> Path:
    """Sign every decided attempt lacking an envelope, then the run summary; return its path.

    An attempt decided by an earlier, unsigned command on the same folder is signed here, so a
    signed run has no unsigned decision. ``force`` signs every decision again.
    """
    for folder in decided_attempts(run_dir):
        if force or not (folder / DECISION_ENVELOPE).is_file():
            sign_attempt(folder, signer)
    path = run_dir / RUN_ENVELOPE
    write_atomic(path, signed_envelope(run_statement(run_dir), signer))
    return path
