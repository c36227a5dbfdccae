"""Resolve a contract's patch sources (hidden tests, reference patch) to exact bytes.

A patch is a file (relative to the contract) or ``git diff <base> <commit> -- <paths>`` minus
``exclude``, taken from the harness's full-history copy of the repository (never the agent's).
"""

from __future__ import annotations

import codecs
from pathlib import Path

from unidiff.patch import PatchSet

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


def _unquote(path: str) -> str:
    r"""Undo git's C-style quoting of unusual paths (``"dir/caf\303\251.md"``)."""
    if len(path) >= 2 and path.startswith('"') and path.endswith('"'):
        raw, _ = codecs.escape_decode(path[1:-1].encode("ascii", "backslashreplace"))
        path = raw.decode("utf-8", "surrogateescape")
    return path.removeprefix("b/")


def added_lines(diff: bytes) -> dict[str, tuple[str, ...]]:
    """Return the lines each file of ``diff`` gains, parsed with ``unidiff``.

    Args:
        diff: a unified diff as ``git diff --binary --full-index`` prints it.

    Returns:
        Repository-relative path (the new side; the old side for a deletion) to its added lines,
        without the leading ``+``. Binary files gain no lines.
    """
    found: dict[str, tuple[str, ...]] = {}
    for patched in PatchSet(diff.decode("utf-8", "surrogateescape")):
        name = patched.source_file if patched.is_removed_file else patched.path
        path = _unquote(name).removeprefix("a/") if patched.is_removed_file else _unquote(name)
        found[path] = tuple(line.value for hunk in patched for line in hunk if line.is_added)
    return found


def touched_paths(patch: bytes) -> tuple[str, ...]:
    """Return the repository paths a ``git diff`` patch touches (both sides of renames), sorted."""
    paths: set[str] = set()
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            parts = line[len(b"diff --git ") :].decode("utf-8", "surrogateescape").split(" b/", 1)
            paths.add(parts[0].removeprefix("a/"))
            if len(parts) == 2:
                paths.add(parts[1])
    return tuple(sorted(paths))
