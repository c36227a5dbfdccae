"""Gate check ``release_receipt_present``: the patch adds an entry where release notes are kept.

The contract names the release-notes paths (``oracles.release_notes``): a changelog file, a folder
of towncrier fragments (``changelog.d/``, https://towncrier.readthedocs.io), a migration note. The
patch must *add* at least one non-blank line to a file under one of them: editing a changelog only
by removing lines, or adding an empty fragment, is not an entry. Lines are counted from the patch
itself (``git diff --binary`` output, parsed with ``unidiff``), so the check reads the same bytes
the patch digest is computed over.

A contract that names no release-notes path cannot be shown to have a receipt: the check fails
with that reason (the contract, not the patch, must be fixed to make the lifecycle profile
meaningful), rather than erroring, since nothing about the environment could change the outcome.

The contract's ``oracles.release_policy`` says what the project practises: ``none`` (it keeps no
per-change release notes, as many projects do: the check passes as "not required", never failing a
change for a practice the project does not have), ``fragments`` (an entry is a new file under the
globs, as towncrier's fragments are) or ``file`` (an entry is new lines in a changelog file).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from repogate._counted import counted
from repogate.contract import ReleasePolicy
from repogate.globs import matches_any
from repogate.patches import added_lines as added_text
from repogate.receipt import Check, Observation, Status
from repogate.vocabulary import CheckName

CHECK: CheckName = "release_receipt_present"


def added_lines(diff: bytes) -> dict[str, int]:
    """Count the non-blank lines each file of ``diff`` gains.

    Args:
        diff: a unified diff as ``git diff --binary --full-index`` prints it.

    Returns:
        Repository-relative path (the new side; the old side for a deletion) to the number of
        added lines holding more than whitespace. Binary files count 0.
    """
    return {
        path: sum(1 for line in lines if line.strip()) for path, lines in added_text(diff).items()
    }


def new_lines(diff: bytes, read_base: Callable[[str], bytes | None]) -> dict[str, int]:
    """Count, per file, the added lines that are new: non-blank and not already in the base file.

    A line that only gained trailing space, or moved, was in the base already: it is no entry.
    """
    counts: dict[str, int] = {}
    for path, lines in added_text(diff).items():
        raw = read_base(path)
        before = (
            set()
            if raw is None
            else {line.strip() for line in raw.decode("utf-8", "replace").splitlines()}
        )
        counts[path] = sum(1 for line in lines if line.strip() and line.strip() not in before)
    return counts


def check_release_notes(
    diff: bytes,
    release_globs: Sequence[str],
    read_base: Callable[[str], bytes | None] = lambda _path: None,
    policy: ReleasePolicy | None = None,
) -> Observation:
    """Decide ``release_receipt_present``: the patch adds a release-notes entry.

    Args:
        diff: the patch (``git.diff_binary(repo, base, candidate)``).
        release_globs: the contract's ``oracles.release_notes`` paths or globs.
        read_base: a file's bytes at the base (None when absent), so that only lines new to the
            file count as an entry.
        policy: the project's practice (``oracles.release_policy``): ``none`` passes as not
            required; ``fragments`` counts only files new at the base; ``file`` and None count
            new lines.

    Returns:
        One check: ``passed`` naming the files that gained an entry and how many lines; ``failed``
        when no release-notes path is declared, or none gained a non-blank line (the detail says
        whether such a file was touched at all). ``details`` holds ``release_globs`` and
        ``entries`` (path to added lines).
    """
    globs = tuple(release_globs)
    if policy == "none":
        why = "not required: the project keeps no per-change release notes (release_policy none)"
        return _result("passed", why, globs, {})
    if not globs:
        return _result(
            "failed", "contract names no release-notes paths (oracles.release_notes)", globs, {}
        )
    touched = {p: n for p, n in new_lines(diff, read_base).items() if matches_any(p, globs)}
    entries = {p: n for p, n in touched.items() if n > 0}
    if policy == "fragments":
        old = sorted(p for p in entries if read_base(p) is not None)
        entries = {p: n for p, n in entries.items() if p not in old}
        if old and not entries:
            names = ", ".join(old)
            why = f"{names} edited, but the project's entries are new fragment files"
            return _result("failed", why, globs, {})
    if entries:
        named = ", ".join(f"{p} (+{counted(n, 'line')})" for p, n in sorted(entries.items()))
        return _result("passed", f"release-notes entry added: {named}", globs, entries)
    if touched:
        names = ", ".join(sorted(touched))
        return _result("failed", f"{names} changed but gained no line: no entry added", globs, {})
    return _result("failed", f"no entry added under {', '.join(globs)}", globs, {})


def _result(
    status: Status, detail: str, globs: tuple[str, ...], entries: dict[str, int]
) -> Observation:
    check = Check(name=CHECK, status=status, detail=detail)
    return Observation(checks=(check,), details={"release_globs": list(globs), "entries": entries})
