"""Pure checks behind :mod:`repogate.git`: the paths a patch names, a workspace's git configuration.

Nothing here runs git; :mod:`repogate.git` feeds it git's output.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from repogate.errors import PatchApplyError

# Keys `git init`, `git fetch` and ordinary agent use (`git config user.email`, `git remote add`,
# `git branch -u`) write. Anything else in a workspace's .git/config (filter drivers, textconv or
# diff commands, core.worktree, include.path, core.sshCommand ...) could make the harness's own git
# calls run commands or read files of the agent's choosing, so it is refused.
_ALLOWED_CONFIG = re.compile(
    r"^(core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase"
    r"|precomposeunicode|symlinks)"
    r"|user\.(name|email)"
    r"|branch\.[^\n]*\.(remote|merge|rebase)"
    r"|remote\.[^\n]*\.(url|fetch))$",
    re.IGNORECASE,
)


def check_local_config(listing: bytes) -> None:
    r"""Refuse a workspace whose repository configuration could run commands in the harness.

    Args:
        listing: output of ``git config --local --list -z`` (``key\\nvalue\\0`` entries).

    Raises:
        PatchApplyError: a key outside the allowlist is set; the message names it.
    """
    for entry in listing.split(b"\0"):
        key = entry.partition(b"\n")[0].decode("utf-8", "replace")
        if key and not _ALLOWED_CONFIG.match(key):
            raise PatchApplyError(
                f"the workspace's .git/config sets {key!r}, which the harness does not allow "
                "(it could make the harness's git run commands); the agent must not configure git"
            )


def parse_numstat_paths(numstat: bytes) -> tuple[str, ...]:
    """Return every path named in ``git apply --numstat -z`` output, both sides of renames."""
    fields = numstat.split(b"\0")
    paths: list[str] = []
    i = 0
    while i < len(fields):
        field = fields[i]
        i += 1
        if not field:
            continue
        _, _, path = field.split(b"\t", 2)
        if path:
            paths.append(os.fsdecode(path))
        else:  # rename or copy: the two paths follow as their own fields
            paths += [os.fsdecode(p) for p in fields[i : i + 2]]
            i += 2
    return tuple(paths)


def path_problem(path: str) -> str | None:
    """Return why a patch may not touch ``path`` (``/``-separated), or None when it may."""
    if not path or path.startswith("/") or "\\" in path or re.match(r"^[A-Za-z]:", path):
        return "absolute or malformed path"
    parts = PurePosixPath(path).parts
    if any(part in (".", "..") for part in path.split("/")):
        return "path with '.' or '..' component"
    if any(part.rstrip(". ").casefold() == ".git" for part in parts):
        return "path inside .git"
    return None


def check_patch_paths(repo: Path, paths: tuple[str, ...]) -> None:
    """Refuse a patch touching a forbidden path or writing through a symbolic link.

    Args:
        repo: the work tree the patch is for.
        paths: every path the patch names (see :func:`parse_numstat_paths`).

    Raises:
        PatchApplyError: naming the first bad path and why.
    """
    for path in paths:
        problem = path_problem(path)
        if problem is None:
            parts = PurePosixPath(path).parts
            for depth in range(1, len(parts)):
                if repo.joinpath(*parts[:depth]).is_symlink():
                    problem = f"'{'/'.join(parts[:depth])}' is a symbolic link"
                    break
        if problem is not None:
            raise PatchApplyError(f"patch refused: {path!r}: {problem}")
