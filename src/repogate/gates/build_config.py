"""Edits of the build configuration the environment was installed from, once, at the base.

The environment is built once per base (:mod:`repogate.environments`): its install commands run
in a checkout of the base commit, and every graded tree (the candidate's, the reference's) is
tested in that build. What an install command reads from the repository is therefore the
**base's**: a patch changing it is tested in an environment that does not match it. A patch
adding a dependency to ``pyproject.toml`` runs without it installed, one changing the version or
an entry point is tested against the base's installed metadata, one changing a requirements file
the recipe installs from runs with the base's pins. The harness does not rebuild the environment
per candidate (``docs/tasks.md``, "Compiled extensions": the build is candidate code, and the
environment's digest is part of every state id), so such an edit fails ``edits_permitted``,
naming the file, what changed in it and the build it bypasses, as an edit of a prebuilt
extension's sources does (:mod:`repogate.gates.prebuilt`).

What an install command reads, found from the environment's install commands (split as the
backend splits them, :func:`shlex.split`):

- the project's build files in a folder it installs (``pip install -e .``, ``uv pip install
  .[test]``, ``pip install ./sub``, ``python setup.py develop``, ``uv sync``, ``poetry install``,
  ``pdm install``): ``pyproject.toml``, ``setup.cfg``, ``setup.py``, and the lockfile of the
  manager that installs it (``uv.lock``, ``poetry.lock``, ``pdm.lock``);
- a requirements or constraints file it names (``-r``, ``--requirement``, ``-c``,
  ``--constraint``, ``uv pip sync FILE``, ``pip-sync FILE``), and the files those name in turn
  (read at the base).

Counted as changed: ``setup.py``, requirements and lockfiles, any byte changed (a build script is
code); ``pyproject.toml``, only the tables an install reads (``[build-system]``, the ``[project]``
keys that decide what is installed: name, version, requires-python, dependencies,
optional-dependencies, scripts, gui-scripts, entry-points, dynamic; ``[dependency-groups]``; the
build backends' ``[tool.*]`` tables), compared parsed; ``setup.cfg``, only its setuptools
sections (``[metadata]``, ``[options]``, ``[options.*]``, the build commands'). A file added or
deleted counts; one that does not parse on either side counts. Not counted: a ``pyproject.toml``
edit of ``[tool.ruff]`` or a ``[project]`` description; ``MANIFEST.in`` (it decides what an sdist
or wheel carries, but the environment serves the project from each graded tree's checkout, any
installed copy removed, so the tests see the candidate's files whatever it says); a requirements
file no install command names; ``tox.ini`` and ``noxfile.py`` (no install command reads them here;
an edit of them already fails ``oracle_untouched``, :mod:`repogate.gates.integrity`).
"""

from __future__ import annotations

import configparser
import posixpath
import shlex
import tomllib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from repogate.git import ChangedPath

__all__ = ["build_inputs", "stale_config_edits"]

ReadFile = Callable[[str, str], bytes | None]
"""(revision, path) -> file bytes at that revision, or None when absent."""

PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
"""What installing a project from its folder reads (every PEP 517 backend, setuptools)."""

MANAGER_LOCKFILES = {"uv": "uv.lock", "poetry": "poetry.lock", "pdm": "pdm.lock"}
"""The lockfile a project manager's install (``uv sync``, ``poetry install``) reads."""

INSTALL_KEYS = (
    "name",
    "version",
    "requires-python",
    "dependencies",
    "optional-dependencies",
    "scripts",
    "gui-scripts",
    "entry-points",
    "dynamic",
)
"""The ``[project]`` keys (PEP 621) that decide what an install puts in the environment."""

BACKEND_TABLES = (
    "setuptools",
    "setuptools_scm",
    "setuptools-scm",
    "hatch",
    "poetry",
    "flit",
    "pdm",
    "maturin",
    "scikit-build",
    "meson-python",
    "uv",
)
"""The ``[tool.*]`` tables build backends and installers read."""

SETUP_CFG_SECTIONS = (
    "metadata",
    "options",
    "build",
    "build_ext",
    "build_py",
    "build_clib",
    "egg_info",
    "sdist",
    "bdist_wheel",
    "develop",
    "install",
    "easy_install",
    "aliases",
)
"""``setup.cfg`` sections setuptools reads when it builds (plus every ``[options.*]``)."""

_REQUIREMENT_FLAGS = ("-r", "--requirement", "-c", "--constraint", "--build-constraint")
_FOLDER_FLAGS = ("--project", "--directory")
"""A project manager's options naming the project's folder (``uv sync --project sub``)."""
_VALUE_FLAGS = frozenset(
    {
        "-f",
        "--find-links",
        "-i",
        "--index-url",
        "--extra-index-url",
        "--index",
        "--default-index",
        "-p",
        "--python",
        "--exclude-newer",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--group",
        "--extra",
        "-C",
        "--config-settings",
        "--config-setting",
        "--python-version",
        "--python-platform",
        "--platform",
        "--cache-dir",
        "--src",
        "-P",
        "--upgrade-package",
        "--no-binary",
        "--only-binary",
        "--resolution",
        "--prerelease",
        "--index-strategy",
        "--keyring-provider",
        "--link-mode",
        "--refresh-package",
        "--reinstall-package",
        "--no-build-package",
        "--only-binary-package",
        "--no-binary-package",
    }
)
"""Installer options whose value is no project folder (``--find-links ./wheels``): skipped."""
_MANAGERS: dict[tuple[str, str], str] = {
    ("uv", "sync"): "uv",
    ("poetry", "install"): "poetry",
    ("pdm", "install"): "pdm",
    ("pdm", "sync"): "pdm",
}
"""The commands that install the project in the current folder with its manager's lockfile."""
_UNPARSED = "<unparseable>"
_INCLUDES = 20
"""Requirements files followed at most (``-r`` inside a requirements file), against loops."""


def _local(arg: str) -> str | None:
    """The folder an install argument names (``.``, ``./sub``, ``.[test]``), None for a package.

    pip reads an argument as a path when it starts with ``.`` or holds a ``/`` (and is no URL).
    """
    if "://" in arg or arg.startswith(("-", "git+")):
        return None
    path = arg.split("[", 1)[0].removeprefix("file:")
    if not (path.startswith(".") or "/" in path):
        return None
    return posixpath.normpath(path.rstrip("/") or ".")


def _in(folder: str, name: str) -> str:
    return posixpath.normpath(posixpath.join(folder, name))


def _without_env(argv: Sequence[str]) -> list[str]:
    """``argv`` without a leading ``env`` and its ``NAME=value`` settings (``env X=1 uv sync``)."""
    words = list(argv)
    if words[:1] == ["env"]:
        words = words[1:]
        while words and "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]
    return words or [""]


class _Reads:
    """What one install command reads: project folders, requirements files, the manager."""

    def __init__(self, command: Sequence[str]) -> None:
        argv = _without_env(command)
        self.manager = _MANAGERS.get((argv[0], argv[1])) if len(argv) > 1 else None
        self.folders: set[str] = set()
        self.requirements: set[str] = set()
        if argv[:2] in (["python", "setup.py"], ["python3", "setup.py"]):
            self.folders.add(".")
        sync = list(argv[:3]) == ["uv", "pip", "sync"] or argv[:1] == ["pip-sync"]
        folder_set = False
        skip, takes = False, ""
        for word in argv:
            if skip:
                skip = False
                continue
            if takes:
                self._take(takes, word)
                folder_set |= takes in _FOLDER_FLAGS
                takes = ""
                continue
            flag, eq, value = word.partition("=")
            if flag in (*_REQUIREMENT_FLAGS, *_FOLDER_FLAGS, "-e", "--editable"):
                if eq:
                    self._take(flag, value)
                    folder_set |= flag in _FOLDER_FLAGS
                else:
                    takes = flag
            elif word in _VALUE_FLAGS:
                skip = True
            elif word.startswith("-e") and len(word) > 2:
                self._take("-e", word[2:])
            elif sync and not word.startswith("-") and word.endswith((".txt", ".in")):
                self.requirements.add(posixpath.normpath(word))
            elif (folder := _local(word)) is not None:
                self.folders.add(folder)
        if self.manager is not None and not folder_set:
            self.folders.add(".")

    def _take(self, flag: str, value: str) -> None:
        if flag in _REQUIREMENT_FLAGS:
            self.requirements.add(posixpath.normpath(value))
        elif flag in _FOLDER_FLAGS:
            self.folders.add(posixpath.normpath(value))
        elif (
            folder := _local(value if value.startswith((".", "/")) else f"./{value}")
        ) is not None:
            self.folders.add(folder)


def _included(text: str, where: str) -> set[str]:
    """The files a requirements file names with ``-r`` / ``-c`` (relative to its folder)."""
    found: set[str] = set()
    folder = posixpath.dirname(where)
    for line in text.splitlines():
        parts = line.split("#", 1)[0].split()
        for i, part in enumerate(parts):
            flag, _, value = part.partition("=")
            if part in _REQUIREMENT_FLAGS and i + 1 < len(parts):
                found.add(_in(folder, parts[i + 1]))
            elif flag in _REQUIREMENT_FLAGS and value:
                found.add(_in(folder, value))
    return found


def build_inputs(install: Iterable[str], read: ReadFile, base: str) -> dict[str, str]:
    """The repository files the environment's install commands read, each with the command.

    Args:
        install: the install commands the environment was built with
            (:attr:`repogate.environments.Environment.commands`).
        read: reads a file at a revision.
        base: the base commit (requirements files are followed as they are there).

    Returns:
        path (``/``-separated, relative to the checkout) -> the install command that reads it.
        A command that does not split (an open quote) reads nothing here: its build failed.
    """
    found: dict[str, str] = {}
    pending: list[tuple[str, str]] = []
    for command in install:
        try:
            argv = shlex.split(command)
        except ValueError:
            continue
        if not argv:
            continue
        reads = _Reads(argv)
        lockfile = [MANAGER_LOCKFILES[reads.manager]] if reads.manager else []
        for folder in sorted(reads.folders):
            for name in (*PROJECT_FILES, *lockfile):
                found.setdefault(_in(folder, name), command)
        pending += [(path, command) for path in sorted(reads.requirements)]
    followed = 0
    while pending and followed < _INCLUDES:
        path, command = pending.pop(0)
        if path in found:
            continue
        found[path] = command
        followed += 1
        raw = read(base, path)
        if raw is not None:
            text = raw.decode("utf-8", "replace")
            pending += [(p, command) for p in sorted(_included(text, path)) if p not in found]
    return found


def _pyproject(raw: bytes | None) -> dict[str, Any]:
    if raw is None:
        return {}
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {"": _UNPARSED}
    project = data.get("project", {})
    tool = data.get("tool", {})
    read: dict[str, Any] = {
        "[build-system]": data.get("build-system"),
        "[dependency-groups]": data.get("dependency-groups"),
    }
    for key in INSTALL_KEYS:
        read[f"[project] {key}"] = project.get(key) if isinstance(project, dict) else project
    for table in BACKEND_TABLES:
        read[f"[tool.{table}]"] = tool.get(table) if isinstance(tool, dict) else tool
    return read


def _setup_cfg(raw: bytes | None) -> dict[str, Any]:
    if raw is None:
        return {}
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(raw.decode("utf-8"))
    except (configparser.Error, UnicodeDecodeError):
        return {"": _UNPARSED}
    return {
        f"[{s}]": dict(parser[s])
        for s in parser.sections()
        if s in SETUP_CFG_SECTIONS or s.startswith("options.")
    }


_PARSED: dict[str, Callable[[bytes | None], dict[str, Any]]] = {
    "pyproject.toml": _pyproject,
    "setup.cfg": _setup_cfg,
}


def _what_changed(path: str, before: bytes | None, after: bytes | None) -> str:
    """Say what of ``path`` an install reads changed ("" when nothing it reads did)."""
    if before is None or after is None:
        return "added" if before is None else "deleted"
    parse = _PARSED.get(posixpath.basename(path))
    if parse is None:
        return "" if before == after else "changed"
    old, new = parse(before), parse(after)
    if _UNPARSED in (old.get(""), new.get("")):
        return "changed (it does not parse on one side)"
    moved = sorted(k for k in {*old, *new} if old.get(k) != new.get(k))
    return f"{', '.join(moved)} changed" if moved else ""


def stale_config_edits(
    changed: Sequence[ChangedPath],
    install: Sequence[str],
    read: ReadFile,
    base: str,
    candidate: str,
) -> list[str]:
    """Return the changed build-configuration files the environment was installed from, each with why.

    Args:
        changed: the patch's changed paths (either status, a deletion or a rename included).
        install: the environment's install commands
            (:attr:`repogate.environments.Environment.commands`); none: nothing is returned.
        read: reads a file at a revision.
        base: the base commit.
        candidate: the candidate commit.

    Returns:
        One entry per such file, naming what of it changed and the command that read the base's
        copy, sorted.
    """
    inputs = build_inputs(install, read, base)
    if not inputs:
        return []
    paths = {c.path for c in changed} | {c.old_path for c in changed if c.old_path}
    found = []
    for path in sorted(paths & set(inputs)):
        what = _what_changed(path, read(base, path), read(candidate, path))
        if what:
            found.append(
                f"{path} ({what}: the environment was built once, at the base, by "
                f"`{inputs[path]}` reading the base's {path}, so the candidate would be tested "
                "in an environment that does not match it; the harness does not rebuild the "
                "environment per candidate)"
            )
    return found
