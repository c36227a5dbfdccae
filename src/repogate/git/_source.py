"""Where a contract's repository lives on this machine: a local path, or a URL's local mirror.

Nothing here runs git (only :mod:`repogate.git` does); a repository is recognised by its layout
(``HEAD`` file and ``objects/`` folder), bare or not. Re-exported by :mod:`repogate.git`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from repogate.errors import UserInputError

REPO_CACHE_ENV = "REPOGATE_REPO_CACHE"

_SCP_URL = re.compile(r"^[\w.-]+@(?P<host>[\w.-]+):(?P<path>[^\\]+)$")
_SCHEME_URL = re.compile(r"^(https?|ssh|git)://([^@/]+@)?(?P<host>[^/:]+)(:\d+)?/(?P<path>.+)$")


def repo_url_parts(repo: str) -> tuple[str, str, str] | None:
    """Split a repository URL into ``(host, owner, name)``; None when ``repo`` is not a URL.

    Accepts ``https://host/owner/name[.git]``, ``ssh://git@host/owner/name``, ``git://...`` and
    the scp form ``git@host:owner/name.git``. ``file://`` and plain paths are not URLs here.
    """
    match = _SCHEME_URL.match(repo) or _SCP_URL.match(repo)
    if match is None:
        return None
    segments = [s for s in match["path"].split("/") if s]
    if len(segments) < 2:
        return None
    name = segments[-1].removesuffix(".git")
    return match["host"].lower(), segments[-2], name


def is_git_dir(path: Path) -> bool:
    """Return True when ``path`` looks like a git directory (``HEAD`` file, ``objects/`` folder)."""
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def git_dir_of(path: Path) -> Path | None:
    """Return the git directory of a repository at exactly ``path``, else None.

    A normal checkout (``.git/``), a bare repository, or a linked worktree (``git worktree add``:
    ``.git`` is a file ``gitdir: DIR`` naming its folder under the main repository's, whose
    ``commondir`` names the folder holding the objects).
    """
    for candidate in (path / ".git", path):
        if candidate.is_dir() and is_git_dir(candidate):
            return candidate
    link = path / ".git"
    try:
        text = link.read_text(encoding="utf-8") if link.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir: "):
        return None
    linked = path / text.removeprefix("gitdir: ").strip()
    try:
        common = linked / (linked / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return linked if (linked / "HEAD").is_file() and is_git_dir(common) else None


def _cache_names(host: str, owner: str, name: str) -> tuple[str, ...]:
    return (
        f"{owner}+{name}",
        f"{owner}+{name}.git",
        f"{owner}+{name}/repo",
        f"{host}/{owner}/{name}",
        f"{host}/{owner}/{name}.git",
        f"{owner}/{name}",
        f"{owner}/{name}.git",
    )


def _env_cache() -> Path | None:
    value = os.environ.get(REPO_CACHE_ENV, "").strip()
    return Path(value).expanduser() if value else None


def resolve_source(repo: str, base_dir: Path, cache: Path | None) -> Path:
    """Return the local repository a contract's ``repo`` names.

    A URL (``https://host/owner/name``, ``git@host:owner/name.git``, ``ssh://...``) is looked up in
    the repository cache, never on the network. Layouts accepted under the cache:
    ``owner+name``, ``owner+name.git``, ``owner+name/repo``, ``host/owner/name[.git]`` and
    ``owner/name[.git]``, each a bare or a normal repository. Anything else (``file://`` included)
    is a local path, relative to ``base_dir``.

    Args:
        repo: the contract's ``repo`` value.
        base_dir: the folder relative paths are read from (the contract's folder).
        cache: the repository cache; None falls back to ``$REPOGATE_REPO_CACHE``.

    Returns:
        The repository's folder (resolved), bare or with a work tree.

    Raises:
        UserInputError: the path is not a git repository, or the URL has no mirror in the cache.
    """
    parts = repo_url_parts(repo)
    if parts is None:
        path = Path(repo.removeprefix("file://")).expanduser()
        path = path if path.is_absolute() else base_dir / path
        if git_dir_of(path) is None:
            raise UserInputError(
                f"repository {repo!r} ({path}) is not a git repository",
                "give a path to a git clone (bare or not), or a URL with --repo-cache DIR",
            )
        return path.resolve()
    if any(part in ("", ".", "..") or "/" in part or "\\" in part for part in parts):
        raise UserInputError(
            f"repository URL {repo!r} has a host, owner or name that is not a folder name",
            "give host/owner/name of a real repository (no '.' or '..' parts)",
        )
    root = cache if cache is not None else _env_cache()
    if root is not None and root.is_file():
        raise UserInputError(
            f"repository cache {root} is a file, not a folder",
            f"give the folder holding the mirrors (owner+name/ clones) with --repo-cache or {REPO_CACHE_ENV}",
        )
    if root is not None:
        for rel in _cache_names(*parts):
            if git_dir_of(root / rel) is not None:
                return (root / rel).resolve()
    where = f"in repository cache {root}" if root is not None else "(no repository cache given)"
    owner, name = parts[1], parts[2]
    raise UserInputError(
        f"no local mirror of {repo} {where}; repogate never fetches from the network",
        f"pass --repo-cache DIR or set {REPO_CACHE_ENV} to a folder holding {owner}+{name}/ "
        "(a clone or bare mirror)",
    )
