"""Resolve a contract's patch sources (hidden tests, reference patch) to exact bytes.

A patch is a file (relative to the contract) or ``git diff <base> <commit> -- <paths>`` minus
``exclude``, taken from the harness's full-history copy of the repository (never the agent's).
"""

from __future__ import annotations

from pathlib import Path

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
