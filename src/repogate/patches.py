"""Resolve a contract's patch sources (hidden tests, reference patch) to exact bytes.

A patch is a file (relative to the contract) or ``git diff <base> <commit> -- <paths>`` minus
``exclude``, taken from the harness's full-history copy of the repository (never the agent's).
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import NamedTuple

from repogate import git
from repogate.contract import PatchSource, TransitionContract
from repogate.errors import ContractError


def load_patch(source: PatchSource, contract: TransitionContract, repo: Path) -> bytes:
    """Return the patch bytes ``source`` names.

    Args:
        source: the contract's patch source.
        contract: the contract (for relative paths and the base commit).
        repo: the harness's full-history repository.

    Raises:
        ContractError: the file is missing, or the commit is not in ``repo``.
    """
    if source.file is not None:
        path = contract.resolve(source.file)
        try:
            return path.read_bytes()
        except OSError as exc:
            raise ContractError(
                f"contract {contract.id}: patch file {path} cannot be read ({exc.strerror})",
                "fix the path (it is relative to the contract file)",
            ) from None
    assert source.commit is not None
    if not git.has_object(repo, source.commit):
        raise ContractError(
            f"contract {contract.id}: patch commit {source.commit} is not in {contract.repo}",
            "check the SHA, or refresh the mirror given with --repo-cache",
        )
    return git.diff_binary(repo, contract.base_commit, source.commit, source.paths, source.exclude)


def _side(header: str) -> str | None:
    r"""Return the path of a ``---``/``+++`` header line's value, or None for ``/dev/null``.

    git ends a path that holds a space with a tab and C-quotes unusual paths
    (``"b/caf\303\251.md"``); both are undone here.
    """
    value = header.rstrip("\t")
    if value == "/dev/null":
        return None
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        raw, _ = codecs.escape_decode(value[1:-1].encode("ascii", "backslashreplace"))
        value = raw.decode("utf-8", "surrogateescape")
    return value[2:] if value[:2] in ("a/", "b/") else value


def added_lines(diff: bytes) -> dict[str, tuple[str, ...]]:
    """Return the lines each text file of ``diff`` gains.

    Read straight from ``git diff`` output (unidiff cannot read git's headers of paths that hold
    spaces): each file's ``---``/``+++`` headers name it, and its hunks' ``+`` lines are its
    added lines. Binary files gain no lines and are not listed.

    Args:
        diff: a unified diff as ``git diff --binary --full-index`` prints it.

    Returns:
        Repository-relative path (the new side; the old side for a deletion) to its added lines,
        without the leading ``+``.
    """
    found: dict[str, list[str]] = {}
    old: str | None = None
    current: str | None = None
    in_hunk = False
    for raw in diff.split(b"\n"):
        line = raw.decode("utf-8", "surrogateescape")
        if line.startswith("diff --git "):
            old, current, in_hunk = None, None, False
        elif not in_hunk and line.startswith("--- "):
            old = _side(line[4:])
        elif not in_hunk and line.startswith("+++ "):
            current = _side(line[4:]) or old
            if current is not None:
                found.setdefault(current, [])
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and current is not None and line.startswith("+"):
            found[current].append(line[1:])
    return {path: tuple(lines) for path, lines in found.items()}


def touched_paths(patch: bytes) -> tuple[str, ...]:
    """Return the repository paths a ``git diff`` patch touches (both sides of renames), sorted.

    Read by git itself (:func:`repogate.git.patch_paths`), so quoted, unicode and
    space-containing names come out exactly as the repository spells them.
    """
    return git.patch_paths(patch)


class FileChange(NamedTuple):
    """One file of a ``git diff`` patch, as its headers describe it (paths and kind only).

    Attributes:
        path: the new side's path (the old side's for a deletion).
        added: the file is new.
        deleted: the file is removed.
    """

    path: str
    added: bool
    deleted: bool


def file_changes(patch: bytes) -> tuple[FileChange, ...]:
    """Return each file of a ``git diff`` patch, in the patch's order.

    Read from the headers only (``diff --git``, ``new file mode``, ``deleted file mode``,
    ``---``/``+++``), so a patch whose hunks would not apply still has its files
    named; a file without ``---``/``+++`` lines (binary, mode only) is named by its
    ``diff --git`` line.
    """
    found: list[FileChange] = []
    entry: dict[str, str] = {}

    def close() -> None:
        path = entry.get("new") or entry.get("old") or entry.get("git")
        if path:
            found.append(
                FileChange(
                    path=path,
                    added="added" in entry,
                    deleted="deleted" in entry,
                )
            )

    for raw in patch.split(b"\n"):
        line = raw.decode("utf-8", "surrogateescape")
        if line.startswith("diff --git "):
            close()
            entry = {"git": line[11:].rsplit(" b/", 1)[-1]}
        elif not entry or "hunks" in entry:
            continue
        elif line.startswith("new file mode"):
            entry["added"] = "1"
        elif line.startswith("deleted file mode"):
            entry["deleted"] = "1"
        elif line.startswith("--- "):
            entry["old"] = _side(line[4:]) or ""
        elif line.startswith("+++ "):
            entry["new"] = _side(line[4:]) or ""
        elif line.startswith(("@@", "GIT binary patch")):
            entry["hunks"] = "1"
    close()
    return tuple(found)


def per_file(patch: bytes) -> dict[str, bytes]:
    """Split a ``git diff`` patch into its files' parts, keyed by each part's path(s).

    Each part runs from its ``diff --git`` line to the next; a rename's part is listed under both
    of its paths. The parts are byte-exact slices of ``patch``, so a part equals what
    ``git diff --binary --full-index A B -- PATH`` prints for that one path. No line inside a
    part starts with ``diff --git ``: hunk lines start with `` ``, ``+``, ``-`` or a backslash, and
    git's base85 binary lines hold no space.
    """
    starts = [0] if patch.startswith(b"diff --git ") else []
    at = patch.find(b"\ndiff --git ")
    while at != -1:
        starts.append(at + 1)
        at = patch.find(b"\ndiff --git ", at + 1)
    parts: dict[str, bytes] = {}
    for begin, end in zip(starts, [*starts[1:], len(patch)][: len(starts)], strict=True):
        part = patch[begin:end]
        for path in touched_paths(part):
            parts[path] = part
    return parts
