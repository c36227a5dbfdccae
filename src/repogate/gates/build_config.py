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
  ``--constraint``, attached as ``-rFILE``, ``uv pip sync FILE``, ``pip-sync FILE``), and the
  files those include in turn in any of pip's forms (``-r base.txt``, ``-rbase.txt``,
  ``--requirement=base.txt``, the same for ``-c``), read at the base; a requirements file that
  installs a project folder (``-e .``, ``-e.``, ``--editable=./sub``, ``.[test]``) reads that
  project's build files as a command naming the folder does;
- the files a project's build configuration (its base ``pyproject.toml`` / ``setup.cfg``)
  tells the backend to read (:func:`_declared`): hatchling's version file, custom build and
  metadata hooks (``hatch_build.py``) and vcs ``version-file``; setuptools'
  ``[tool.setuptools.dynamic]`` version / dependencies / optional-dependencies / entry-points
  (``file`` or ``attr``) and ``setup.cfg``'s ``file:`` / ``attr:`` for them;
  setuptools_scm's ``write_to`` / ``version_file``; pdm-backend's version file, ``write_to``
  and ``pdm_build.py``; flit_core's module for a dynamic version; poetry's build script.

Counted as changed: ``setup.py``, requirements and lockfiles, any byte changed (a build script is
code); ``pyproject.toml``, only the tables an install reads (``[build-system]``, the ``[project]``
keys that decide what is installed: name, version, requires-python, dependencies,
optional-dependencies, scripts, gui-scripts, entry-points, dynamic; ``[dependency-groups]``; the
build backends' ``[tool.*]`` tables), compared parsed; ``setup.cfg``, only its setuptools sections
(``[metadata]``, ``[options]``, ``[options.*]``, the build commands'). A version read from a
package module (setuptools' ``attr``, flit_core's ``__version__``) counts only when the module's
top-level statements binding that name change (compared parsed): the module is ordinary source the
agent may edit, and the rest of it is not what the build reads. A version file hatchling or
pdm-backend searches with a pattern counts when what the pattern finds changes (a file holding only
the version counts on any change of it; a comment added beside it changes nothing a build reads). A
file the build writes (setuptools_scm's ``write_to``) or runs (a hook) counts by any byte. A file
added or deleted counts; one that does not parse on either side counts. Not counted: a
``pyproject.toml`` edit of ``[tool.ruff]`` or a ``[project]`` description; ``MANIFEST.in`` (it
decides what an sdist or wheel carries, but the environment serves the project from each graded
tree's checkout, any installed copy removed, so the tests see the candidate's files whatever it
says); a requirements file no install command names; a ``readme`` / ``description`` /
``classifiers`` file setuptools reads dynamically (metadata text, as ``[project]`` description);
``hatch_build.py`` with no custom hook table (hatchling does not run it); ``tox.ini`` and
``noxfile.py`` (no install command reads them here; an edit of them already fails
``oracle_untouched``, :mod:`repogate.gates.integrity`).
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
import shlex
import tomllib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
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
            elif (attached := _attached(word)) is not None:
                self.requirements.add(posixpath.normpath(attached))
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


def _attached(word: str) -> str | None:
    """The file of pip's attached include form (``-rbase.txt``, ``-cconstraints.txt``), else None."""
    if word[:2] in ("-r", "-c") and len(word) > 2 and not word.startswith("--"):
        return word[2:].removeprefix("=")
    return None


def _requirements_reads(text: str, where: str) -> tuple[set[str], set[str]]:
    """What a requirements file at ``where`` reads in turn: (files it includes, projects it installs).

    Includes are ``-r`` / ``-c`` / ``--requirement`` / ``--constraint`` in every form pip takes
    (``-r base.txt``, ``-rbase.txt``, ``--requirement=base.txt``), relative to the file's
    folder. A project is a line installing a folder (``-e .``, ``-e.``, ``--editable=./sub``,
    ``.[test]``, ``./sub``): pip resolves it from the working directory (the checkout), uv from
    the file's folder, so both are returned when they differ.
    """
    includes: set[str] = set()
    projects: set[str] = set()
    folder = posixpath.dirname(where)
    for line in text.splitlines():
        parts = line.split("#", 1)[0].split()
        for i, part in enumerate(parts):
            flag, eq, value = part.partition("=")
            following = parts[i + 1] if i + 1 < len(parts) else ""
            if part in _REQUIREMENT_FLAGS and following:
                includes.add(_in(folder, following))
            elif flag in _REQUIREMENT_FLAGS and eq and value:
                includes.add(_in(folder, value))
            elif (attached := _attached(part)) is not None:
                includes.add(_in(folder, attached))
            elif part in ("-e", "--editable") and following:
                projects |= _project_at(following, folder)
            elif flag == "--editable" and eq and value:
                projects |= _project_at(value, folder)
            elif part.startswith("-e") and len(part) > 2 and not part.startswith("--"):
                projects |= _project_at(part[2:], folder)
        if parts and not parts[0].startswith("-") and (local := _local(parts[0])) is not None:
            projects |= {local, _in(folder, local)}
    return includes, projects


def _project_at(value: str, folder: str) -> set[str]:
    """The folders an editable requirement ``value`` may name (cwd's and ``folder``'s reading)."""
    local = _local(value if value.startswith((".", "/")) else f"./{value}")
    return set() if local is None else {local, _in(folder, local)}


@dataclass(frozen=True)
class _Read:
    """How an install reads one repository file.

    Whole (``binding`` and ``pattern`` empty): every byte it reads counts, or the tables of a
    ``pyproject.toml`` / ``setup.cfg`` that decide the build. ``binding``: only the module's
    top-level statements binding that name (a version setuptools or flit_core reads from a
    package module, ``__version__``). ``pattern``: only what the regular expression finds in it
    (its ``version`` group; hatchling's and pdm-backend's version files).
    """

    command: str
    why: str = ""
    """Who names the file, when the build configuration does (``pyproject.toml's [tool.x] y``)."""
    binding: str = ""
    pattern: str = ""

    @property
    def whole(self) -> bool:
        return not (self.binding or self.pattern)


def _add(found: dict[str, _Read], path: str, how: _Read) -> None:
    """Record ``how`` for ``path``: the first reading stays, unless a whole read comes after."""
    if path not in found or (how.whole and not found[path].whole):
        found[path] = how


def build_inputs(install: Iterable[str], read: ReadFile, base: str) -> dict[str, str]:
    """The repository files the environment's install commands read, each with the command.

    Args:
        install: the install commands the environment was built with
            (:attr:`repogate.environments.Environment.commands`).
        read: reads a file at a revision.
        base: the base commit (requirements files and the projects' build configuration are
            read as they are there).

    Returns:
        path (``/``-separated, relative to the checkout) -> the install command that reads it.
        A command that does not split (an open quote) reads nothing here: its build failed.
    """
    return {path: how.command for path, how in _build_reads(install, read, base).items()}


def _inside(path: str) -> bool:
    """Whether ``/``-separated ``path`` (normalized) stays inside the checkout."""
    return not (path == ".." or path.startswith(("../", "/")))


def _build_reads(install: Iterable[str], read_any: ReadFile, base: str) -> dict[str, _Read]:
    """:func:`build_inputs` with how each file is read (:class:`_Read`).

    A path an install names outside the checkout (``-e ..``, ``-r ../x.txt``: pydata/xarray-4493's
    ``-r setup.cfg`` read as requirements) is no file of it: never read, never returned.
    """

    def read(revision: str, path: str) -> bytes | None:
        return read_any(revision, path) if _inside(path) else None

    found = _reads_of(install, read, base)
    return {path: how for path, how in found.items() if _inside(path)}


def _reads_of(install: Iterable[str], read: ReadFile, base: str) -> dict[str, _Read]:
    """:func:`_build_reads` before paths outside the checkout are dropped."""
    found: dict[str, _Read] = {}
    projects: list[tuple[str, str]] = []
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
            for name in lockfile:
                _add(found, _in(folder, name), _Read(command))
            projects.append((folder, command))
        pending += [(path, command) for path in sorted(reads.requirements)]
    followed = 0
    while pending and followed < _INCLUDES:
        path, command = pending.pop(0)
        if path in found:
            continue
        found[path] = _Read(command)
        followed += 1
        raw = read(base, path)
        if raw is not None:
            includes, installs = _requirements_reads(raw.decode("utf-8", "replace"), path)
            pending += [(p, command) for p in sorted(includes) if p not in found]
            projects += [(folder, command) for folder in sorted(installs)]
    done: set[str] = set()
    for folder, command in projects:
        if folder in done:
            continue
        done.add(folder)
        for name in PROJECT_FILES:
            _add(found, _in(folder, name), _Read(command))
        for path, how in _declared(_Project(folder, command, read, base)):
            _add(found, path, how)
    return found


HATCH_VERSION_PATTERN = r"""(?i)^(__version__|VERSION) *= *(['"])v?(?P<version>.+?)\2"""
"""hatchling's default ``[tool.hatch.version]`` pattern (``hatchling.version.core``)."""
PDM_VERSION_PATTERN = r"""^__version__\s*=\s*["'](?P<version>.+?)["']"""
"""What pdm-backend's ``source = "file"`` version searches a file for."""
DYNAMIC_KEYS = ("version", "dependencies", "optional-dependencies", "entry-points")
"""The ``[tool.setuptools.dynamic]`` fields that decide what is installed (not readme,
description, classifiers: metadata text, as ``[project]`` description is not counted)."""


def _table(data: object, *keys: str) -> dict[str, Any]:
    """``data[k1][k2]...`` when each is a table, else an empty one."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _strings(value: object) -> list[str]:
    """A string or a list's strings (a ``file`` directive's one or many files)."""
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


@dataclass(frozen=True)
class _Project:
    """A project folder an install command builds, and how to read its files at the base."""

    folder: str
    command: str
    read: ReadFile
    base: str

    @property
    def pyproject(self) -> str:
        return _in(self.folder, "pyproject.toml")

    def named(self, path: object, key: str, pattern: str = "") -> Iterator[tuple[str, _Read]]:
        """``path`` (relative to the folder), as ``pyproject.toml``'s ``key`` names it."""
        if isinstance(path, str) and path:
            why = f"{self.pyproject}'s {key} names it"
            yield _in(self.folder, path), _Read(self.command, why, pattern=pattern)

    def attribute(
        self, attr: str, why: str, package_dir: dict[str, str]
    ) -> Iterator[tuple[str, _Read]]:
        """The module holding ``attr`` (``pkg.__version__``), read for that name's binding."""
        for path, name in _attr_files(self.folder, attr, package_dir, self.read, self.base):
            yield path, _Read(self.command, why, binding=name)


def _declared(project: _Project) -> Iterator[tuple[str, _Read]]:
    """The files a project's build configuration (at the base) tells its backend to read.

    Yields (path, how) for each, paths relative to the checkout: hatchling's
    (:func:`_hatch_declared`), setuptools' and setuptools_scm's (:func:`_setuptools_declared`,
    :func:`_setup_cfg_declared`), pdm-backend's, flit_core's and poetry's
    (:func:`_other_declared`). A ``pyproject.toml`` absent or not parsing at the base names
    nothing (an edit of it is counted whole).
    """
    raw = project.read(project.base, project.pyproject)
    try:
        data: dict[str, Any] = tomllib.loads(raw.decode("utf-8")) if raw is not None else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        data = {}
    yield from _hatch_declared(project, data)
    yield from _setuptools_declared(project, data)
    yield from _other_declared(project, data)
    yield from _setup_cfg_declared(project)


def _hatch_declared(project: _Project, data: dict[str, Any]) -> Iterator[tuple[str, _Read]]:
    """What hatchling reads beside ``pyproject.toml``, each (path, how).

    The version file (``[tool.hatch.version] path``), read by its ``pattern`` (hatchling's
    default unless given), or whole for ``source = "code"`` (hatchling runs it);
    each custom build or metadata hook (``hatch_build.py`` unless another ``path``), a vcs
    hook's ``version-file`` (written by the build), the requirements_txt hook's files.
    """
    hatch = _table(data, "tool", "hatch")
    version = _table(hatch, "version")
    if version.get("source", "regex") == "regex":
        pattern = version.get("pattern")
        pattern = pattern if isinstance(pattern, str) and pattern else HATCH_VERSION_PATTERN
        yield from project.named(version.get("path"), "[tool.hatch.version] path", pattern)
    elif version.get("source") == "code":
        yield from project.named(version.get("path"), "[tool.hatch.version] path")
    targets = _table(hatch, "build", "targets")
    hooks = {
        "[tool.hatch.build.hooks": _table(hatch, "build", "hooks"),
        "[tool.hatch.metadata.hooks": _table(hatch, "metadata", "hooks"),
        **{f"[tool.hatch.build.targets.{t}.hooks": _table(targets, t, "hooks") for t in targets},
    }
    for where, table in hooks.items():
        if "custom" in table:
            path = _table(table, "custom").get("path", "hatch_build.py")
            yield from project.named(path, f"{where}.custom]")
        version_file = _table(table, "vcs").get("version-file")
        yield from project.named(version_file, f"{where}.vcs] version-file")
        requirements = _table(table, "requirements_txt")
        for path in _strings(requirements.get("files")):
            yield from project.named(path, f"{where}.requirements_txt] files")
        for files in _table(requirements, "optional-dependencies").values():
            for path in _strings(files):
                yield from project.named(path, f"{where}.requirements_txt] optional-dependencies")


def _setuptools_declared(project: _Project, data: dict[str, Any]) -> Iterator[tuple[str, _Read]]:
    """What setuptools and setuptools_scm read beside ``pyproject.toml``, each (path, how).

    ``[tool.setuptools.dynamic]``'s :data:`DYNAMIC_KEYS` (``file``: each file whole;
    ``attr``: the module's binding of the name); setuptools_scm's ``write_to`` /
    ``version_file`` (a file the build writes: the candidate's copy is not what it would make).
    """
    setuptools = _table(data, "tool", "setuptools")
    dynamic = _table(setuptools, "dynamic")
    package_dir = {k: v for k, v in _table(setuptools, "package-dir").items() if isinstance(v, str)}
    for key in DYNAMIC_KEYS:
        name = f"[tool.setuptools.dynamic] {key}"
        specs = (
            list(_table(dynamic, key).values())
            if key == "optional-dependencies"
            else [dynamic.get(key)]
        )
        for spec in specs:
            directive = spec if isinstance(spec, dict) else {}
            for path in _strings(directive.get("file")):
                yield from project.named(path, name)
            if isinstance(attr := directive.get("attr"), str):
                why = f"{project.pyproject}'s {name} names it"
                yield from project.attribute(attr, why, package_dir)
    for scm in ("setuptools_scm", "setuptools-scm"):
        for key in ("write_to", "version_file"):
            yield from project.named(_table(data, "tool", scm).get(key), f"[tool.{scm}] {key}")


def _other_declared(project: _Project, data: dict[str, Any]) -> Iterator[tuple[str, _Read]]:
    """What pdm-backend, flit_core and poetry read beside ``pyproject.toml``, each (path, how).

    pdm-backend's version file (``source = "file"``, read by its ``__version__`` pattern),
    its ``write_to`` and custom hook (``pdm_build.py``, run when present); flit_core's module
    when ``[project] dynamic`` has the version (its ``__version__``); poetry's build script.
    """
    pdm = _table(data, "tool", "pdm")
    pdm_version = _table(pdm, "version")
    if pdm_version.get("source") == "file":
        path = pdm_version.get("path")
        yield from project.named(path, "[tool.pdm.version] path", PDM_VERSION_PATTERN)
    yield from project.named(pdm_version.get("write_to"), "[tool.pdm.version] write_to")
    backend = _table(data, "build-system").get("build-backend", "")
    backend = backend if isinstance(backend, str) else ""
    if backend.startswith("pdm.backend"):
        hook = _table(pdm, "build").get("custom-hook", "pdm_build.py")
        yield from project.named(hook, "[tool.pdm.build] custom-hook")
    meta = _table(data, "project")
    if backend.startswith("flit_core") and "version" in _strings(meta.get("dynamic")):
        module = _table(data, "tool", "flit", "module").get("name", meta.get("name"))
        if isinstance(module, str):
            why = f"flit_core reads it for {project.pyproject}'s dynamic version"
            yield from project.attribute(f"{module.replace('-', '_')}.__version__", why, {})
    poetry = _table(data, "tool", "poetry")
    script = poetry.get("build")
    script = _table(poetry, "build").get("script") if isinstance(script, dict) else script
    yield from project.named(script, "[tool.poetry.build] script")


def _setup_cfg_declared(project: _Project) -> Iterator[tuple[str, _Read]]:
    """``setup.cfg``'s ``attr:`` / ``file:`` directives for what is installed.

    As ``[tool.setuptools.dynamic]``: ``[metadata] version``, ``[options] install_requires``
    and ``entry_points``, each of ``[options.extras_require]``. Yields (path, how); a
    ``setup.cfg`` absent or not parsing at the base names nothing.
    """
    where = _in(project.folder, "setup.cfg")
    raw = project.read(project.base, where)
    if raw is None:
        return
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(raw.decode("utf-8"))
    except (configparser.Error, UnicodeDecodeError):
        return
    keys = [("metadata", "version"), ("options", "install_requires"), ("options", "entry_points")]
    if parser.has_section("options.extras_require"):
        keys += [("options.extras_require", k) for k in parser["options.extras_require"]]
    package_dir: dict[str, str] = {}
    if parser.has_option("options", "package_dir"):
        for line in parser["options"]["package_dir"].replace(",", "\n").splitlines():
            name, eq, path = line.partition("=")
            if eq:
                package_dir[name.strip()] = path.strip()
    for section, key in keys:
        value = parser.get(section, key, fallback="").strip()
        why = f"{where}'s [{section}] {key} names it"
        if value.startswith("file:"):
            for path in value.removeprefix("file:").replace(",", " ").split():
                yield _in(project.folder, path), _Read(project.command, why)
        elif value.startswith("attr:"):
            yield from project.attribute(value.removeprefix("attr:"), why, package_dir)


def _attr_files(
    folder: str, attr: str, package_dir: dict[str, str], read: ReadFile, base: str
) -> list[tuple[str, str]]:
    """The module file holding ``attr`` (``pkg.sub.__version__``), each with the name bound.

    Looked for as setuptools and flit_core do: ``pkg/sub.py`` or ``pkg/sub/__init__.py`` under
    the folder ``package_dir`` maps the package to (``{"": "src"}``), else the project's folder,
    else ``src/``; those present at the base. A name with no module part names nothing.
    """
    module, dot, name = attr.strip().rpartition(".")
    if not dot or not module or not name:
        return []
    parts = module.split(".")
    roots = []
    if parts[0] in package_dir:
        roots.append((package_dir[parts[0]], parts[1:]))
    roots += [(package_dir.get("", "."), parts), (".", parts), ("src", parts)]
    found: list[tuple[str, str]] = []
    for root, rest in roots:
        stem = posixpath.join(folder, root, *rest) if rest else posixpath.join(folder, root)
        for path in (f"{stem}.py", posixpath.join(stem, "__init__.py")):
            path = posixpath.normpath(path)
            if read(base, path) is not None and (path, name) not in found:
                found.append((path, name))
        if found:
            break
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


def _what_changed(path: str, before: bytes | None, after: bytes | None, how: _Read) -> str:
    """Say what of ``path`` an install reads changed ("" when nothing it reads did)."""
    if before is None or after is None:
        return "added" if before is None else "deleted"
    if how.pattern:
        old, new = _found(before, how.pattern), _found(after, how.pattern)
        return "" if old == new else f"the version in it changed, {old} -> {new}"
    if how.binding:
        was, now = _bound(before, how.binding), _bound(after, how.binding)
        if None in (was, now):
            return "changed (it does not parse on one side)" if was != now else ""
        return "" if was == now else f"its {how.binding} changed, {was} -> {now}"
    parse = _PARSED.get(posixpath.basename(path))
    if parse is None:
        return "" if before == after else "changed"
    old_read, new_read = parse(before), parse(after)
    if _UNPARSED in (old_read.get(""), new_read.get("")):
        return "changed (it does not parse on one side)"
    moved = sorted(k for k in {*old_read, *new_read} if old_read.get(k) != new_read.get(k))
    return f"{', '.join(moved)} changed" if moved else ""


def _found(raw: bytes, pattern: str) -> str:
    """What ``pattern`` finds in ``raw`` as a build does: its ``version`` group, quoted.

    ``none`` when it finds nothing; a pattern that does not compile finds the whole text (any
    change counts).
    """
    text = raw.decode("utf-8", "replace")
    try:
        match = re.search(pattern, text, flags=re.MULTILINE)
    except re.error:
        return repr(text)
    if match is None:
        return "none"
    return repr(match.group("version") if "version" in match.re.groupindex else match.group(0))


def _bound(raw: bytes, name: str) -> str | None:
    """The module's top-level statements binding ``name``, unparsed.

    Assignments and imports of the name, joined with ``; `` (``none`` when none does), or None
    when the module does not parse.
    This is what setuptools' ``attr`` and flit_core read, first statically: the rest of the
    module (its ordinary code, comments, layout) is not the value. A value computed by a call
    or imported from another module counts only when that statement's text changes.
    """
    try:
        tree = ast.parse(raw.decode("utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None
    binds = [node for node in tree.body if _binds(node, name)]
    return "; ".join(ast.unparse(node) for node in binds) if binds else "none"


def _binds(node: ast.stmt, name: str) -> bool:
    if isinstance(node, ast.Assign):
        targets = [t for target in node.targets for t in ast.walk(target)]
        return any(isinstance(t, ast.Name) and t.id == name for t in targets)
    if isinstance(node, ast.AnnAssign | ast.AugAssign):
        return isinstance(node.target, ast.Name) and node.target.id == name
    if isinstance(node, ast.Import | ast.ImportFrom):
        return any((a.asname or a.name.split(".")[0]) == name for a in node.names)
    return False


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
    inputs = _build_reads(install, read, base)
    if not inputs:
        return []
    paths = {c.path for c in changed} | {c.old_path for c in changed if c.old_path}
    found = []
    for path in sorted(paths & set(inputs)):
        how = inputs[path]
        what = _what_changed(path, read(base, path), read(candidate, path), how)
        if what:
            why = f"; {how.why}" if how.why else ""
            found.append(
                f"{path} ({what}{why}: the environment was built once, at the base, by "
                f"`{how.command}` reading the base's {path}, so the candidate would be tested "
                "in an environment that does not match it; the harness does not rebuild the "
                "environment per candidate)"
            )
    return found
