"""Verify signed verdicts: signatures, every evidence file's digest, every receipt's state id.

``in-toto-verify`` checks layouts, not these Statements, so the verifier is ours. For one
decision (an attempt folder, or its ``decision.json``) it checks:

* ``decision.intoto.dsse.json`` is a DSSE envelope whose signature verifies with the public key
  (over DSSE's pre-authentication encoding) and whose payload is a repogate decision Statement;
* every subject file (``decision.json``, each receipt, the patch, every JUnit report, test log
  and agent output in the folder) has the sha256 the Statement names, and the folder holds no
  file, link or other entry the Statement does not name;
* ``decision.json``'s own receipt digests agree with the signed ones, and its state id and
  outcome are the signed ones;
* every receipt's predicate names the decision's state id;
* the signed attempt id is the folder's name and the signed run id the one its run's manifest
  names (a verdict signed elsewhere and copied in, from another attempt or another run of the
  same tasks, whose attempt ids repeat, does not verify).
* ``patch.diff``, when present, is a regular file whose patch digest is the one the signed
  receipts name (the patch is not a subject, but every receipt binds its digest).

For a run folder it checks every decided attempt so, then ``run.intoto.dsse.json``: its
signature, every subject's digest, and that no decided attempt is missing from it. Each problem is
reported with the file it concerns, relative to the folder given; nothing stops at the first.
"""

from __future__ import annotations

import binascii
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import FormatError, VerificationError
from securesystemslib.signer import SSlibKey

from repogate._files import read_bytes_nofollow
from repogate.decision import Decision
from repogate.errors import RunDirError
from repogate.provenance.sign import (
    DECISION_ENVELOPE,
    DECISION_PREDICATE,
    PAYLOAD_TYPE,
    RUN_ENVELOPE,
    RUN_PREDICATE,
    attempt_entries,
    decided_attempts,
    receipt_files,
    run_id_of_folder,
)
from repogate.receipt import IN_TOTO_STATEMENT
from repogate.state import patch_digest
from repogate.store import DECISION_FILE, file_sha256

__all__ = ["NOT_SIGNED", "Problem", "Verified", "verify_target"]

PATCH_FILE = "patch.diff"


@dataclass(frozen=True)
class Problem:
    """One failed check: the file it concerns (relative to the folder verified) and what is wrong."""

    file: str
    message: str


@dataclass(frozen=True)
class Verified:
    """What :func:`verify_target` found.

    Attributes:
        decisions: decisions whose every check passed.
        run_summary: whether a run summary was verified (a run folder only).
        problems: every failed check; empty when all is intact.
        unsigned: nothing in the target is signed (no decision envelope, no run summary): each
            of them is a :data:`NOT_SIGNED` problem, said once as the target's.
    """

    decisions: int
    run_summary: bool
    problems: tuple[Problem, ...]
    unsigned: bool = False


NOT_SIGNED = "missing: this verdict is not signed"
"""The problem of an envelope that is not there (or is a link, never followed)."""


def _signed(path: Path) -> bool:
    """Whether the envelope at ``path`` is there to be checked: a regular file, not a link."""
    return path.is_file() and not path.is_symlink()


def _statement(
    path: Path, shown: str, key: SSlibKey, predicate_type: str
) -> tuple[dict[str, Any] | None, list[Problem]]:
    """Open the envelope at ``path``, check its signature and return its Statement."""
    if not _signed(path):
        return None, [Problem(shown, NOT_SIGNED)]
    try:
        envelope = Envelope.from_dict(json.loads(path.read_bytes()))
    except (ValueError, KeyError, TypeError, AttributeError, FormatError, binascii.Error):
        return None, [Problem(shown, "not a DSSE envelope")]
    try:
        envelope.verify([key], 1)
    except VerificationError:
        return None, [Problem(shown, f"signature does not verify with key {key.keyid[:16]}")]
    try:
        statement = json.loads(envelope.payload)
    except ValueError:
        statement = None
    if (
        envelope.payload_type != PAYLOAD_TYPE
        or not isinstance(statement, dict)
        or statement.get("_type") != IN_TOTO_STATEMENT
        or statement.get("predicateType") != predicate_type
    ):
        return None, [Problem(shown, f"payload is not a {predicate_type} in-toto Statement")]
    return statement, []


def _subjects(statement: dict[str, Any]) -> dict[str, str]:
    found = {}
    for subject in statement.get("subject") or []:
        if isinstance(subject, dict) and isinstance(subject.get("digest"), dict):
            found[str(subject.get("name"))] = str(subject["digest"].get("sha256"))
    return found


def _digest_problems(root: Path, prefix: str, signed: dict[str, str]) -> list[Problem]:
    problems = []
    for name, digest in signed.items():
        try:
            actual = file_sha256(root / name)
        except OSError as exc:  # in a folder that cannot be listed, or no permission to read
            problems.append(Problem(prefix + name, f"cannot be read ({exc.strerror or exc})"))
            continue
        if actual is None:
            problems.append(Problem(prefix + name, "missing"))
        elif actual != digest:
            problems.append(Problem(prefix + name, "changed since it was signed"))
    return problems


def _receipt_state(path: Path) -> str | None:
    try:
        predicate = json.loads(path.read_bytes())["predicate"]
        return str(predicate["state_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _placement_problems(folder: Path, shown: str, statement: dict[str, Any]) -> list[Problem]:
    """Whether the envelope was signed for this attempt folder of this run."""
    predicate = statement.get("predicate")
    predicate = predicate if isinstance(predicate, dict) else {}
    problems = []
    attempt = predicate.get("attempt_id")
    if attempt != folder.name:
        problems.append(Problem(shown, f"signed for attempt {attempt}, found in {folder.name}"))
    run_id, here = predicate.get("run_id"), run_id_of_folder(folder)
    if run_id != here:
        problems.append(Problem(shown, f"signed in run {run_id}, found in {here}"))
    return problems


def _receipt_patch_digest(path: Path) -> str | None:
    try:
        return str(json.loads(path.read_bytes())["predicate"]["state"]["patch_digest"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _patch_problems(folder: Path, prefix: str, receipts: list[str]) -> list[Problem]:
    """``patch.diff`` against the patch digest the (signed) receipts name; absent is no problem."""
    named = {d for name in receipts if (d := _receipt_patch_digest(folder / name)) is not None}
    try:
        stored = read_bytes_nofollow(folder, PATCH_FILE)
    except OSError:  # a link (never followed), a folder, a FIFO: nothing that can be checked
        return [Problem(prefix + PATCH_FILE, "not a regular file (a link or a special file)")]
    if stored is None or not named:
        return []
    if named != {patch_digest(stored)}:
        shown = ", ".join(sorted(d[:12] for d in named))
        return [Problem(prefix + PATCH_FILE, f"differs from the signed patch digest {shown}")]
    return []


def _unlisted(prefix: str, name: str, why: str) -> Problem:
    """The problem of a folder the verifier could not list (``.``: the folder ``prefix`` names)."""
    shown = prefix + name if name != "." else prefix.rstrip("/") or "."
    return Problem(shown, f"cannot be listed ({why}): nothing in it was checked")


def _receipts(folder: Path) -> list[str]:
    """:func:`receipt_files`, or none when ``receipts/`` cannot be listed (already a problem)."""
    try:
        return receipt_files(folder)
    except OSError:
        return []


def _unlisted_attempts(run_dir: Path) -> list[Problem]:
    """Folders in ``run_dir/attempts`` (or that folder itself) that cannot be listed.

    :func:`decided_attempts` sees a ``decision.json`` it cannot reach as no decision: such an
    attempt would be left out of the check without a word.
    """
    attempts = run_dir / "attempts"
    try:
        with os.scandir(attempts) as listing:
            folders = [Path(e.path) for e in listing if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return []
    except OSError as exc:
        return [_unlisted("", "attempts", exc.strerror or str(exc))]
    problems = []
    for folder in sorted(folders):
        try:
            next(folder.iterdir(), None)  # lists it (the generator is lazy)
        except OSError as exc:
            problems.append(_unlisted("attempts/", folder.name, exc.strerror or str(exc)))
    return problems


def _check_decision(folder: Path, prefix: str, key: SSlibKey) -> list[Problem]:
    statement, problems = _statement(
        folder / DECISION_ENVELOPE, prefix + DECISION_ENVELOPE, key, DECISION_PREDICATE
    )
    if statement is None:
        return problems
    signed = _subjects(statement)
    problems += _digest_problems(folder, prefix, signed)
    problems += _placement_problems(folder, prefix + DECISION_ENVELOPE, statement)
    files, others, unlisted = attempt_entries(folder)
    problems += [
        Problem(prefix + name, "not covered by the signature")
        for name in files
        if name not in signed
    ]
    problems += [
        Problem(prefix + name, "not covered by the signature (a link or a special file)")
        for name in others
    ]
    problems += [_unlisted(prefix, name, why) for name, why in unlisted]
    try:
        decision = Decision.model_validate_json((folder / DECISION_FILE).read_bytes())
    except (OSError, ValidationError):
        return [*problems, Problem(prefix + DECISION_FILE, "not a decision")]
    predicate = statement.get("predicate") or {}
    if (
        predicate.get("state_id") != decision.state_id
        or predicate.get("outcome") != decision.outcome
    ):
        problems.append(
            Problem(prefix + DECISION_FILE, "differs from the signed state id or outcome")
        )
    problems += [
        Problem(prefix + DECISION_FILE, f"lists {d.path} with another digest than the signed one")
        for d in decision.receipt_digests
        if signed.get(d.path) != d.sha256
    ]
    receipts = _receipts(folder)
    for name in receipts:
        state = _receipt_state(folder / name)
        if state != decision.state_id:
            said = "names no state id" if state is None else f"names state {state[:12]}"
            problems.append(
                Problem(prefix + name, f"{said}, the decision names {decision.state_id[:12]}")
            )
    problems += _patch_problems(folder, prefix, [n for n in receipts if n in signed])
    return list(dict.fromkeys(problems))


def _check_run(run_dir: Path, key: SSlibKey, folders: list[Path]) -> list[Problem]:
    statement, problems = _statement(run_dir / RUN_ENVELOPE, RUN_ENVELOPE, key, RUN_PREDICATE)
    if statement is None:
        return problems
    signed = _subjects(statement)
    problems += _digest_problems(run_dir, "", signed)
    for folder in folders:
        name = f"{folder.relative_to(run_dir).as_posix()}/{DECISION_FILE}"
        if name not in signed:
            problems.append(Problem(name, "not in the signed run summary"))
    return problems


def verify_target(target: Path, key: SSlibKey) -> Verified:
    """Verify a run folder, an attempt folder or a ``decision.json`` with ``key``.

    Args:
        target: a run folder (holding ``attempts/``), an attempt folder, or a ``decision.json``.
        key: the signer's public key (:func:`repogate.provenance.keys.load_public_key`).

    Returns:
        How many decisions verified, whether a run summary did, every problem found, and
        whether nothing in ``target`` is signed at all.

    Raises:
        RunDirError: ``target`` does not exist or is none of those (nothing to verify).
    """
    fix = "give a run folder, an attempt folder or a decision.json written by `repogate run`"
    if not target.exists():
        raise RunDirError(f"{target} does not exist", fix)
    if not target.is_dir() and target.name != DECISION_FILE:
        raise RunDirError(f"{target} is a file, not a {DECISION_FILE}", fix)
    if target.is_file() and target.name == DECISION_FILE:
        target = target.parent
    if (target / DECISION_FILE).is_file():
        problems = _check_decision(target, "", key)
        unsigned = not _signed(target / DECISION_ENVELOPE)
        return Verified(0 if problems else 1, False, tuple(problems), unsigned)
    unlisted = _unlisted_attempts(target)
    try:
        folders = decided_attempts(target)
    except OSError:  # ``attempts`` itself cannot be listed: named in ``unlisted``
        folders = []
    if not folders and not unlisted and not (target / RUN_ENVELOPE).is_file():
        raise RunDirError(f"{target} holds no decision.json and no decided attempts", fix)
    problems = unlisted
    good = 0
    for folder in folders:
        prefix = folder.relative_to(target).as_posix() + "/"
        found = _check_decision(folder, prefix, key)
        good += not found
        problems += found
    run_problems = _check_run(target, key, folders)
    envelopes = [target / RUN_ENVELOPE, *(f / DECISION_ENVELOPE for f in folders)]
    unsigned = not any(map(_signed, envelopes))
    return Verified(good, not run_problems, tuple(dict.fromkeys(problems + run_problems)), unsigned)
