"""Which dependency projects a patch touches: manifests, lockfiles, their manager; declared names.

Private to :mod:`repogate.gates.dependency`. A *project* is one lockfile with its manifest and the
manager that writes it: uv (``uv.lock``), poetry (``poetry.lock``) or pip-tools (a
``requirements*.txt`` whose header says ``pip-compile``, https://pip-tools.readthedocs.io).
"""

from __future__ import annotations

import posixpath
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

from repogate._files import read_bytes_nofollow
from repogate.contract import Lockfile
from repogate.git import ChangedPath

MANIFEST_NAMES = ("pyproject.toml", "setup.cfg", "setup.py")
_REQ_IN = re.compile(r"^requirements.*\.in$")
_REQ_TXT = re.compile(r"^requirements.*\.txt$")
_PIP_COMPILE = re.compile(r"^#\s+(pip-compile\b.*)$", re.MULTILINE)
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_DEFAULT_LOCK = {"uv": "uv.lock", "poetry": "poetry.lock", "pip-tools": "requirements.txt"}
_LOCK_MANAGERS = {"uv.lock": "uv", "poetry.lock": "poetry"}
"""Lockfiles known by name, and the manager that writes each (:func:`_by_name`,
:func:`touches_dependencies`: one list, so the two never disagree)."""


@dataclass(frozen=True)
class Project:
    """One lockfile, its manifest and its manager; paths are repository-relative."""

    manager: str
    manifest: str
    lockfile: str

    @property
    def folder(self) -> str:
        """The folder holding the lockfile (``""`` for the repository root)."""
        return posixpath.dirname(self.lockfile)


def _read(root: Path, path: str) -> str | None:
    """Return ``root/path``'s text; None when absent, unreadable or a link (never followed)."""
    try:
        data = read_bytes_nofollow(root, path)
        return None if data is None else data.decode("utf-8")
    except (OSError, ValueError):
        return None


def pip_compile_command(text: str | None) -> str | None:
    """Return the ``pip-compile ...`` command a compiled requirements file's header records."""
    found = _PIP_COMPILE.search(text or "")
    return found.group(1).strip() if found else None


def is_manifest(path: str) -> bool:
    """True for a file that declares dependencies (pyproject, setup.cfg/py, requirements*.in)."""
    name = posixpath.basename(path)
    return name in MANIFEST_NAMES or bool(_REQ_IN.match(name))


def _declared(lock: Lockfile) -> Project:
    lockfile = lock.lockfile
    if lock.manager != "uv" and lockfile == "uv.lock":  # the model's default is uv's name
        lockfile = _DEFAULT_LOCK[lock.manager]
    return Project(lock.manager, lock.manifest, lockfile)


def _by_name(path: str, roots: Sequence[Path]) -> Project | None:
    """The project a changed lockfile or manifest belongs to, found by file names."""
    folder, name = posixpath.split(path)
    manifest = posixpath.join(folder, "pyproject.toml")
    if name in _LOCK_MANAGERS:
        return Project(_LOCK_MANAGERS[name], manifest, path)
    if _REQ_TXT.match(name):
        command = next(filter(None, (pip_compile_command(_read(r, path)) for r in roots)), None)
        if command is None:
            return None
        sources = [a for a in command.split()[1:] if not a.startswith("-")]
        return Project(
            "pip-tools", posixpath.join(folder, sources[0]) if sources else manifest, path
        )
    if is_manifest(path):
        for lock_name, manager in _LOCK_MANAGERS.items():
            lockfile = posixpath.join(folder, lock_name)
            if any((r / lockfile).is_file() for r in roots):
                return Project(manager, manifest, lockfile)
    return None


def touches_dependencies(changed: Sequence[ChangedPath], lock: Lockfile | None) -> bool:
    """True when a changed path could belong to a project :func:`touched_projects` reports.

    That is a manifest (:func:`is_manifest`), a lockfile by name (``uv.lock``, ``poetry.lock``,
    ``requirements*.txt``) or the contract's declared manifest or lockfile. When False,
    :func:`touched_projects` finds nothing without reading a tree, so no checkout is needed.
    """
    declared = _declared(lock) if lock is not None else None
    named = (declared.manifest, declared.lockfile) if declared is not None else ()
    for change in changed:
        name = posixpath.basename(change.path)
        if change.path in named or is_manifest(change.path):
            return True
        if name in _LOCK_MANAGERS or _REQ_TXT.match(name):
            return True
    return False


def touched_projects(
    changed: Sequence[ChangedPath], lock: Lockfile | None, base: Path, candidate: Path
) -> tuple[list[Project], list[str]]:
    """Return the projects the patch touches, and manifests it changes that have no lockfile.

    Args:
        changed: the patch's changed paths.
        lock: the contract's lockfile policy, if any; lockfiles are detected by name regardless.
        base: a checkout of the base tree.
        candidate: a checkout of the candidate tree.
    """
    declared = _declared(lock) if lock is not None else None
    projects: dict[str, Project] = {}
    unlocked: list[str] = []
    for change in changed:
        path = change.path
        if declared is not None and (
            path in (declared.manifest, declared.lockfile)
            or (is_manifest(path) and posixpath.dirname(path) == declared.folder)
        ):
            projects.setdefault(declared.lockfile, declared)
            continue
        found = _by_name(path, (candidate, base))
        if found is not None:
            projects.setdefault(found.lockfile, found)
        elif is_manifest(path):
            unlocked.append(path)
    return list(projects.values()), unlocked


def normalise_name(name: str) -> str:
    """Return a distribution name normalised as PEP 503 says (runs of ``-_.`` to ``-``, lower).

    Delegates to :func:`packaging.utils.canonicalize_name`.
    """
    return str(canonicalize_name(name))


def _name_from_url(url: str) -> str | None:
    """The distribution a direct URL names: its ``#egg=`` fragment, or a wheel's or sdist's file name."""
    egg = _EGG.search(url)
    if egg:
        return egg.group(1)
    filename = posixpath.basename(url.split("#", 1)[0].split("?", 1)[0])
    try:
        if filename.endswith(".whl"):
            return str(parse_wheel_filename(filename)[0])
        if filename.endswith((".tar.gz", ".zip")):
            return str(parse_sdist_filename(filename)[0])
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return None


def requirement_name(line: str) -> str | None:
    """Return the normalised name (PEP 503) of the distribution one requirement line names.

    Parsed with :class:`packaging.requirements.Requirement` (PEP 508), as pip parses it; a bare
    direct URL (``git+https://...#egg=name``, a wheel or sdist URL, also after ``-e``) is named by
    its ``egg`` fragment or its file name (the wheel and sdist naming rules of the Python
    Packaging User Guide). Options (``-r``, ``--index-url``, ...), local paths and blank lines
    name nothing.

    Args:
        line: one requirement, e.g. ``"requests>=2"`` or ``"pkg @ https://..."``; a trailing
            ``# comment`` is ignored.

    Returns:
        The normalised name, or None when the line names no distribution.
    """
    text = line.split(" #", 1)[0].strip()
    if text.startswith(("-e ", "--editable ")):
        text = text.split(None, 1)[1].strip()
    if not text or text.startswith("-"):
        return None
    if "://" in text.split("@", 1)[0] or text.startswith(("git+", "hg+", "svn+", "bzr+")):
        found = _name_from_url(text)
        return normalise_name(found) if found else None
    try:
        return normalise_name(Requirement(text).name)
    except InvalidRequirement:
        return None


def _toml_names(data: dict[str, Any]) -> set[str]:
    project = data.get("project", {})
    specs: list[Any] = list(project.get("dependencies", []))
    for group in project.get("optional-dependencies", {}).values():
        specs += group
    for group in data.get("dependency-groups", {}).values():
        specs += [s for s in group if isinstance(s, str)]
    specs += list(data.get("tool", {}).get("uv", {}).get("dev-dependencies", []))
    poetry = data.get("tool", {}).get("poetry", {})
    keys = list(poetry.get("dependencies", {}))
    for group in poetry.get("group", {}).values():
        keys += list(group.get("dependencies", {}))
    names = {requirement_name(str(spec)) for spec in specs}
    names |= {normalise_name(k) for k in keys if k.lower() != "python"}
    return {n for n in names if n}


def declared_names(root: Path, manifest: str) -> set[str]:
    """Return the normalised names (PEP 503) of the dependencies ``manifest`` declares.

    Reads ``[project]`` dependencies and optional dependencies, ``[dependency-groups]``, poetry's
    dependency tables, or the lines of a ``requirements*.in``. A missing or unreadable manifest
    declares nothing.
    """
    text = _read(root, manifest)
    if text is None:
        return set()
    if manifest.endswith(".toml"):
        try:
            return _toml_names(tomllib.loads(text))
        except tomllib.TOMLDecodeError:
            return set()
    return {n for n in map(requirement_name, text.splitlines()) if n}
