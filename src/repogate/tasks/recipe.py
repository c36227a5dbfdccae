"""The environment recipe of a candidate: from ``--env-map``, else derived from the base commit.

The env map wins when it names the repository; otherwise the recipe is derived from the base
commit's own files (the seed: reconstruct the environment, do not inherit it).

**Derived.** The interpreter is the newest CPython that had been released at the base commit's
date and meets ``requires-python``'s lower bound; the install command is
``uv pip install --exclude-newer <date> -e .[<test extra>] pytest`` (plus ``--group <tests>``
for a PEP 735 dependency group and ``-r`` for a test requirements file), where ``<date>`` is the
day after the newest commit at or before the base that touched the project's manifests, so
every candidate whose manifests are equal gets the same recipe and shares one environment (the
cache key is the recipe digest). Projects versioned by setuptools-scm or hatch-vcs get
``SETUPTOOLS_SCM_PRETEND_VERSION`` (a workspace has no tags).

**The era's build.** Every package, setuptools and the build requirements included, is the one
of the base's date: the build the project's own era could make. An editable build through
PEP 660 (``build_editable``) needs setuptools 64 (2022-08-11); a setuptools project of an
earlier date, or one whose ``[build-system]`` pins setuptools below 64 (pylint's
``setuptools~=62.6``), is installed as pip installed it then, when the backend has no
``build_editable``: its build requirements and dependencies first (``uv pip install
--exclude-newer <date> <build requirements> -r <manifest> --extra <test extra> pytest``, the
manifest's metadata built by its own dated backend, and its ``setup_requires``, which ``setup.py
develop`` would otherwise fetch undated through easy_install), then ``python setup.py develop
--no-deps`` (``setup.py`` absent: the same through ``setuptools.setup()``). Forcing the newest setuptools
instead (earlier recipes did) breaks what the era's build plugins import: setuptools 81 dropped
``pkg_resources``, which a 2021 setuptools_scm imports. A ``setup.cfg`` whose ``[egg_info]`` sets
``tag_build`` or ``tag_date`` has them dropped in the build checkout first
(:data:`DROP_RELEASE_TAGS`).

**Env map** (``--env-map FILE``, TOML), for old projects whose own files are not enough (the
interpreter of their era, pins of that era)::

    [[recipe]]
    repo = "psf/requests"          # owner/name
    versions = ["2.4", "2.3"]      # SWE-bench's version field; omit for every version
    python = "3.9"
    install = ["uv pip install -e . pytest==7.4.4"]
    test_command = "python -m pytest -p no:cacheprovider"   # optional

The first entry that matches is used; the contract records the recipe it got.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import ValidationError

from repogate import git
from repogate._declared import setup_cfg_list
from repogate._files import read_text
from repogate._model import FrozenModel
from repogate._problems import every_problem
from repogate._toolchain import OLDEST_PYTHON
from repogate.contract import Service
from repogate.errors import UserInputError

MANIFESTS = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements",
    "requirements.txt",
    "tox.ini",
)
_TEST_EXTRAS = ("tests", "test", "testing", "dev")
_TEST_REQUIREMENTS = (
    "requirements/tests.txt",
    "requirements/test.txt",
    "requirements-test.txt",
    "requirements-tests.txt",
    "test-requirements.txt",
)
# CPython feature releases (https://peps.python.org/pep-0619/ and earlier schedule PEPs).
_RELEASES = (
    ("3.13", date(2024, 10, 7)),
    ("3.12", date(2023, 10, 2)),
    ("3.11", date(2022, 10, 24)),
    ("3.10", date(2021, 10, 4)),
    ("3.9", date(2020, 10, 5)),
    ("3.8", date(2019, 10, 14)),
    ("3.7", date(2018, 6, 27)),
    ("3.6", date(2016, 12, 23)),
)


class MapEntry(FrozenModel):
    """One ``[[recipe]]`` of an env map."""

    repo: str
    versions: tuple[str, ...] = ()
    python: str
    install: tuple[str, ...]
    test_command: str | None = None
    lock_inputs: tuple[str, ...] = ()
    services: tuple[Service, ...] = ()
    """Services the tests need (``[[recipe.services]]``, as a contract's
    ``[[environment.services]]``), copied into each contract drafted from this entry."""


class EnvMap(FrozenModel):
    """An env map file: recipes by repository and version."""

    recipe: tuple[MapEntry, ...] = ()

    def find(self, repo: str, version: str | None) -> MapEntry | None:
        """The first entry for ``repo`` (owner/name) whose versions include ``version``."""
        for entry in self.recipe:
            if entry.repo.lower() == repo.lower() and (
                not entry.versions or (version is not None and version in entry.versions)
            ):
                return entry
        return None


def load_env_map(path: Path | None) -> EnvMap:
    """Read an env map TOML file (None gives an empty map).

    Raises:
        UserInputError: missing file, not TOML, or not the documented shape.
    """
    if path is None:
        return EnvMap()
    text = read_text(path, "env map", UserInputError, "give a TOML file of [[recipe]] tables")
    try:
        return EnvMap.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise UserInputError(f"env map {path} is not TOML: {exc}", "fix the TOML syntax") from None
    except ValidationError as exc:
        raise UserInputError(
            f"env map {path}: {every_problem(exc, EnvMap)}",
            "each [[recipe]] needs repo, python and install (versions, test_command, lock_inputs and [[recipe.services]] optional)",
        ) from None


def _python_for(day: date, floor: tuple[int, int] | None) -> str:
    # never older than the test sessions run on (repogate._toolchain.OLDEST_PYTHON: the
    # guard's audit hook); a project of 2017 gets 3.8, as SWE-bench's images often give 3.9
    floor = max(floor or OLDEST_PYTHON, OLDEST_PYTHON)
    for version, released in _RELEASES:
        minor = (3, int(version.split(".")[1]))
        if released <= day and minor >= floor:
            return version
    return f"{floor[0]}.{floor[1]}"


def _floor(pyproject: dict[str, Any], setup: str) -> tuple[int, int] | None:
    spec = str(pyproject.get("project", {}).get("requires-python", ""))
    spec = spec or next(iter(re.findall(r"python_requires\s*=\s*['\"]([^'\"]+)", setup)), "")
    found = re.search(r">=\s*(\d+)\.(\d+)", spec)
    return (int(found[1]), int(found[2])) if found else None


def derive_recipe(repo: Path, base: str) -> dict[str, Any]:
    """Derive the environment recipe (contract ``[environment]`` data) from the base's own files.

    Args:
        repo: the full-history repository.
        base: the base commit.

    Returns:
        ``supplied_by``, ``python``, ``install``, ``network`` and ``lock_inputs``.
    """
    pyproject_text = git.show_text(repo, base, "pyproject.toml")
    setup_py, setup_cfg = (
        git.show_text(repo, base, "setup.py"),
        git.show_text(repo, base, "setup.cfg"),
    )
    setup = setup_py + setup_cfg
    try:
        pyproject = tomllib.loads(pyproject_text) if pyproject_text else {}
    except tomllib.TOMLDecodeError:
        pyproject = {}
    stamp = git.last_change_date(repo, base, MANIFESTS) or git.commit_message(repo, base)[0]
    day = datetime.fromisoformat(stamp).date()
    extras = set(pyproject.get("project", {}).get("optional-dependencies", {}))
    extras |= set(re.findall(r"['\"](\w+)['\"]\s*:\s*\[", setup))
    extra = next((e for e in _TEST_EXTRAS if e in extras), None)
    groups = set(pyproject.get("dependency-groups", {}))
    group = next((g for g in _TEST_EXTRAS if g in groups), None)
    target = f".[{extra}]" if extra else "."
    words = ["uv pip install", f"--exclude-newer {(day + timedelta(days=1)).isoformat()}"]
    layout = git.existing_paths(repo, base, ("setup.py", "setup.cfg"))
    develop = _develop_mode(pyproject, bool(setup), day)
    if develop:  # no build_editable in the era's setuptools: its build requirements, then develop
        words += [
            shlex.quote(r)
            for r in _build_requires(pyproject) + _setup_requires(setup_py, setup_cfg)
        ]
        source = (
            "pyproject.toml" if "project" in pyproject else min(layout, default="pyproject.toml")
        )
        words.append(f"-r {source}" + (f" --extra {extra}" if extra else ""))
    elif pyproject_text or setup:  # a project to install; otherwise only its test tools
        words.append(f"-e '{target}'")
    if group:
        words.append(f"--group {group}")
    present = git.existing_paths(repo, base, _TEST_REQUIREMENTS)
    words += [f"-r {path}" for path in _TEST_REQUIREMENTS if path in present]
    words.append("pytest")
    scm = any(
        k in pyproject_text + setup for k in ("setuptools_scm", "setuptools-scm", "hatch-vcs")
    )
    commands = [" ".join(words)]
    if develop:
        script = (
            "setup.py" if "setup.py" in layout else "-c 'from setuptools import setup; setup()'"
        )
        commands.append(f"python {script} develop --no-deps")
    if scm:
        commands = [f"env SETUPTOOLS_SCM_PRETEND_VERSION=9999.0 {c}" for c in commands]
    if develop and _RELEASE_TAGS.search(setup_cfg):
        commands.insert(0, DROP_RELEASE_TAGS)
    manifests = sorted(git.existing_paths(repo, base, MANIFESTS) | present)
    return {
        "supplied_by": "evaluator",
        "python": _python_for(day, _floor(pyproject, setup)),
        "install": commands,
        "network": True,
        "lock_inputs": manifests,
    }


_RELEASE_TAGS = re.compile(r"^\[egg_info\][^\[]*^tag[_-](build|date)[ \t]*[=:]", re.M)
DROP_RELEASE_TAGS = (
    "python -c \"import pathlib, re; p = pathlib.Path('setup.cfg'); "
    "p.write_text(re.sub(r'(?m)^tag[_-](build|date)[ \\t]*[=:].*\\n?', '', p.read_text()))\""
)
"""The install command run first, in the build checkout, when the base's ``setup.cfg`` sets
``[egg_info] tag_build`` or ``tag_date`` (either delimiter, ``=`` or ``:``, and the dashed
spelling ``tag-build`` setuptools also reads; a development snapshot's version suffix, e.g.
sphinx-doc/sphinx 3.x to 5.x: ``.dev`` and the build's date) and the recipe builds the era's
way: it drops those two options. setuptools before 62.0 applies the tags twice when it writes
PEP 517 metadata (``prepare_metadata_for_build_wheel``: ``3.1.0.dev20261203.dev-20261203``),
which uv rejects as no PEP 440 version, so the first install command failed (setuptools 62.0
writes ``3.1.0.dev20261203``). The graded trees keep their ``setup.cfg``."""

SETUPTOOLS_PEP660 = date(2022, 8, 11)
"""setuptools 64.0.0's release: the first setuptools with PEP 660's ``build_editable``."""
_PEP660_VERSIONS = ("64.0.0", "65.0.0", "68.0.0", "70.0.0", "75.0.0", "80.0.0")


def _build_requires(pyproject: dict[str, Any]) -> list[str]:
    """The ``[build-system]`` requirements (PEP 518's default when the table is absent)."""
    requires = pyproject.get("build-system", {}).get("requires")
    if isinstance(requires, list) and all(isinstance(r, str) for r in requires):
        return [str(r) for r in requires]
    return ["setuptools", "wheel"]


_SETUP_REQUIRES_PY = re.compile(r"\bsetup_requires\s*=\s*\[([^\]]*)\]")
_QUOTED = re.compile(r"""(['"])([^'"]+)\1""")


def _setup_requires(setup_py: str, setup_cfg: str) -> list[str]:
    """Return the base's ``setup_requires`` from its files' texts (never run).

    ``setup.cfg``'s ``[options]`` list, else a literal list of strings given to ``setup()`` in
    ``setup.py``.

    ``setup.py develop`` fetches these itself through easy_install, from today's index and
    undated (pydata/xarray of 2020: today's setuptools_scm, which no longer runs on the era's
    Python 3.8 and 3.9); installed first by the dated uv command, they are already satisfied.
    """
    listed = setup_cfg_list(setup_cfg, "setup_requires")
    if listed:
        return list(listed)
    found = _SETUP_REQUIRES_PY.search(setup_py)
    return [m.group(2) for m in _QUOTED.finditer(found.group(1))] if found else []


def _develop_mode(pyproject: dict[str, Any], has_setup: bool, day: date) -> bool:
    """Whether the era's setuptools build has no ``build_editable`` (see the module docs).

    True for a setuptools project (a ``setup.py`` or ``setup.cfg``, or a setuptools build
    backend) dated before :data:`SETUPTOOLS_PEP660`, or whose build requirements allow no
    setuptools of 64 or later.
    """
    backend = str(pyproject.get("build-system", {}).get("build-backend", ""))
    requires = _build_requires(pyproject)
    setuptools = [r for r in requires if re.match(r"setuptools\b(?![-_])", r.strip(), re.I)]
    if not has_setup and not (backend.startswith("setuptools") and setuptools):
        return False
    if day < SETUPTOOLS_PEP660:
        return True
    for text in setuptools:
        try:
            spec = Requirement(text).specifier
        except InvalidRequirement:
            continue
        if not any(spec.contains(v) for v in _PEP660_VERSIONS):
            return True
    return False


def recipe_for(
    env_map: EnvMap, repo_name: str, version: str | None, repo: Path, base: str
) -> tuple[dict[str, Any], str | None, str]:
    """Return (environment data, test command or None, where it came from: ``env-map`` or ``derived``)."""
    entry = env_map.find(repo_name, version)
    if entry is None:
        return derive_recipe(repo, base), None, "derived"
    # The base's manifests join the cache key (unless the entry names its own), so two bases of
    # one version whose dependencies differ never share an environment built for the other.
    manifests = entry.lock_inputs or tuple(sorted(git.existing_paths(repo, base, MANIFESTS)))
    data = {
        "supplied_by": "evaluator",
        "python": entry.python,
        "install": list(entry.install),
        "network": True,
        "lock_inputs": list(manifests),
    }
    if entry.services:
        data["services"] = [x.model_dump(mode="json") for x in entry.services]
    return data, entry.test_command, "env-map"
