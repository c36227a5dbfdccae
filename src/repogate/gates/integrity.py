"""Gate I, integrity: the patch stays inside its permissions and leaves the oracle alone.

Checks:

- ``edits_permitted``: every changed path lies within the contract's editable globs and outside
  its forbidden ones, and no changed path is a symlink pointing out of the repository. Stray
  reproduction scripts or a copied ``build/lib/...`` tree are named here.
- ``oracle_untouched``: the patch edits none of the files the verdict is graded by: existing test
  files (modified or deleted), ``conftest.py``, pytest plugins and start-up hooks
  (``sitecustomize.py``, ``usercustomize.py``, ``*.pth``), package metadata in the tree
  (``*.dist-info/``, ``*.egg-info/``: pytest loads their ``pytest11`` entry points), pytest/tox configuration
  (``pytest.toml``, ``pytest.ini``, ``tox.ini``, the test sections of ``setup.cfg`` and ``pyproject.toml``,
  ``pytest11`` entry points), CI files, and the files the hidden tests touch. Patches have passed
  graders by such edits (SWE-bench issues #631 and #393). A *new* test file is allowed: an agent
  adding its own focused test is good practice, and the grader runs only the files that hold the
  graded ids, with the hidden tests' files reset to the base. A new top-level module or package
  named like one importable from the environment or its standard library (``iniconfig/``
  shadowing pytest's own dependency) is refused here too (:mod:`repogate.gates.imports`). So is
  an edit to what the graded tests are made of beyond the test files: a module outside the test
  folders holding a graded test function, a file only the graded tests read (traced at gate E);
  the rule that decided is recorded (:mod:`repogate.gates.graded_oracle`). When the repository
  is the test runner (``[oracles] runner_under_test``), an edit of any of the runner's files
  (its verdict-producing ones named so) the reference does not edit too, or added lines in its
  files that reach the report (:mod:`repogate.gates.runner_files`).

``edits_permitted`` also refuses what runs instead of the source a reviewer reads: bytecode,
native extension modules and libraries, and coding cookies whose codec hides code (``utf-7``);
and, when the environment placed extension modules it built at the base into the graded trees,
an edit of their sources, which those trees would not run (:mod:`repogate.gates.prebuilt`); and an
edit of the build configuration the environment's install commands read at the base
(``pyproject.toml``'s build tables, ``setup.cfg``'s setuptools sections, ``setup.py``, an installed
requirements file or lockfile), which the candidate would be tested without
(:mod:`repogate.gates.build_config`).
"""

from __future__ import annotations

import configparser
import posixpath
import re
import tomllib
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from repogate.contract import Permissions
from repogate.gates.build_config import stale_config_edits
from repogate.gates.graded_oracle import GradedOracle, graded_edits
from repogate.gates.imports import native_modules, shadowed_tests, shadowing, unsafe_cookies
from repogate.gates.prebuilt import stale_build_edits
from repogate.gates.runner_files import (
    misplaced_runner,
    runner_module,
    runner_report_lines,
    verdict_edits,
)
from repogate.git import ChangedPath
from repogate.globs import TEST_GLOBS, matches_any
from repogate.patches import added_lines
from repogate.receipt import Check, Observation

HOOK_GLOBS = (
    "**/conftest.py",
    "**/pytest.toml",
    "**/.pytest.toml",
    "**/pytest.ini",
    "**/.pytest.ini",
    "**/tox.ini",
    "pytest.py",
    "pytest/**",
    "_pytest/**",
    "pluggy.py",
    "pluggy/**",
    "**/sitecustomize.py",
    "**/usercustomize.py",
    "**/*.pth",
    "**/pytest_*.py",
    "noxfile.py",
    ".github/**",
    ".gitlab-ci.yml",
    ".circleci/**",
    "azure-pipelines.yml",
    ".travis.yml",
)
METADATA_SUFFIXES = (".dist-info", ".egg-info")
"""Folders ``importlib.metadata`` reads as installed distributions, matched in any case.

pytest loads the ``pytest11`` entry points of every distribution on ``sys.path``, which holds the
checkout under ``python -m pytest`` (red team rt33: ``evil-0.dist-info/entry_points.txt`` loaded a
plugin and a failing test passed; ``Evil-0.DIST-INFO`` too)."""


def package_metadata(path: str) -> bool:
    """Whether ``path`` (``/``-separated) lies in a distribution's metadata folder."""
    return any(part.casefold().endswith(METADATA_SUFFIXES) for part in path.split("/")[:-1])


TEST_MODULE_GLOBS = ("**/test_*.py", "**/*_test.py")
# Compiled code is no source change: Python runs a .pyc without reading the source beside it.
COMPILED_GLOBS = ("**/__pycache__/**", "**/*.pyc", "**/*.pyo")
# Code that reaches into the test runner from outside the tests: it can rewrite reports in the
# process that writes them (a patched TestReport, a hook, a plugin switched on by name).
RUNNER_HOOKS = re.compile(
    r"\b_pytest\b|\bpytest_runtest_\w+|\bpytest_collect\w*|\bpytest_report\w*|\bTestReport\b"
    r"|\bLogXML\b|\bjunitxml\b|\bpytest_plugins\b|\bpytest\.hookimpl\b|\bhookimpl\b"
    r"|\bPYTEST_\w+|['\"]_?pytest['\"]|['\"]pluggy['\"]|(?i:junit)"
    r"|\bos\.dup2\b|/dev/fd/|/proc/self/fd"
)
# Files whose test-configuration sections are the oracle, not the whole file.
_PYPROJECT_KEYS = (("tool", "pytest"), ("project", "entry-points", "pytest11"), ("tool", "tox"))
_SETUP_CFG_SECTIONS = ("tool:pytest", "pytest", "options.entry_points")

ReadFile = Callable[[str, str], bytes | None]
"""(revision, path) -> file bytes at that revision, or None when absent."""


def _dig(data: dict[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)  # type: ignore[assignment]
    return data


def _pyproject_test_config(raw: bytes | None) -> list[Any]:
    if raw is None:
        return []
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return ["<unparseable>"]
    return [_dig(data, keys) for keys in _PYPROJECT_KEYS]


def _setup_cfg_test_config(raw: bytes | None) -> list[Any]:
    if raw is None:
        return []
    parser = configparser.RawConfigParser()
    try:
        text = raw.decode("utf-8")
        parser.read_string(text)
    except (configparser.Error, UnicodeDecodeError):
        return ["<unparseable>"]
    sections = [dict(parser[s]) if parser.has_section(s) else None for s in _SETUP_CFG_SECTIONS]
    return [*sections, _iniconfig_sections(text)]


def _iniconfig_sections(text: str) -> dict[str, list[str]]:
    """The lines of each test section of an INI file as pytest's parser (``iniconfig``) reads it.

    ``iniconfig`` cuts a section header line at its first ``#`` or ``;`` (``[tool:pytest]#]`` is
    ``[tool:pytest]``), where :mod:`configparser` keeps the line whole and reads a greedy header
    (a section named ``tool:pytest]#``): a patch adding that line with ``addopts`` passed the
    configparser comparison while pytest ran its options (red team red37). Comment and blank
    lines are skipped as iniconfig skips them; every other line belongs to the last header.
    """
    found: dict[str, list[str]] = {}
    current = ""
    for line in text.removeprefix("\ufeff").splitlines():  # iniconfig drops a BOM, splits so
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if line[0] == "[":
            header = line.split("#", 1)[0].split(";", 1)[0].rstrip()
            if header.endswith("]"):
                current = header[1:-1].strip()  # iniconfig may strip it (strip_section_whitespace)
                if current in _SETUP_CFG_SECTIONS:
                    found.setdefault(current, []).append(line.rstrip())
                continue
        if current in _SETUP_CFG_SECTIONS:
            found.setdefault(current, []).append(line.rstrip())
    return found


_SECTIONED = {"pyproject.toml": _pyproject_test_config, "setup.cfg": _setup_cfg_test_config}


def oracle_edits(
    changed: Sequence[ChangedPath],
    read: ReadFile,
    base: str,
    candidate: str,
    hidden_paths: Sequence[str] = (),
    *,
    runner_under_test: bool = False,
) -> list[str]:
    """Return the changed paths that belong to the oracle, each with why, sorted.

    Args:
        changed: the patch's changed paths.
        read: reads a file at a revision (for the sectioned configuration files).
        base: the base commit.
        candidate: the candidate commit.
        hidden_paths: paths the hidden test patch touches.
        runner_under_test: the repository is the test runner: its own ``pytest``/``_pytest``
            files are its product, not hooks (:mod:`repogate.gates.runner_files` judges them).
    """
    found = []
    for change in changed:
        for path in {change.path, change.old_path} - {None}:
            assert path is not None
            name = posixpath.basename(path)
            if path in hidden_paths:
                found.append(f"{path} (touched by the hidden tests)")
            elif matches_any(path, HOOK_GLOBS) and not (
                runner_under_test and runner_module(path) is not None
            ):
                found.append(f"{path} (test hook, test configuration or CI)")
            elif package_metadata(path):
                found.append(f"{path} (package metadata: pytest loads its pytest11 entry points)")
            elif matches_any(path, TEST_GLOBS) and change.status != "A":
                found.append(f"{path} (an existing test file)")
            elif matches_any(path, TEST_GLOBS) and not matches_any(path, TEST_MODULE_GLOBS):
                found.append(f"{path} (a new non-test file among the tests, imported before them)")
            elif name in _SECTIONED and posixpath.dirname(path) == "":
                section = _SECTIONED[name]
                if section(read(base, path)) != section(read(candidate, path)):
                    found.append(f"{path} (its test configuration changed)")
    return sorted(set(found))


def runner_tampering(patch: bytes, *, runner_under_test: bool = False) -> list[str]:
    """Return the changed files whose added lines reach into the test runner, each with why.

    A patch that rewrites pytest's reports from library code passes every test it is graded on
    while fixing nothing; the report is written in the process that runs the patch's code, so no
    output channel can tell. The lines that do it name pytest's internals, hooks or plugin
    switches; any of them in an added line marks the file. A project whose product is a pytest
    plugin will trip this: such a task needs its own oracle. With ``runner_under_test`` the
    runner's own files are left to :func:`repogate.gates.runner_files.runner_report_lines`
    (every line of pytest's code names its internals).
    """
    found = []
    for path, lines in added_lines(patch).items():
        if not path.endswith((".py", ".pyi")):  # only Python runs in the test process
            continue
        if runner_under_test and runner_module(path) is not None:
            continue
        for line in lines:
            hit = RUNNER_HOOKS.search(line)
            if hit:
                found.append(f"{path} (reaches into the test runner: {hit.group(0)!r})")
                break
    return found


def forbidden_edits(changed: Sequence[ChangedPath], permissions: Permissions) -> list[str]:
    """Return changed paths outside the editable globs or inside forbidden ones, each with why."""
    found = []
    for change in changed:
        path = change.path
        if change.is_symlink:
            found.append(f"{path} (a symlink: agents may not add or change links)")
        elif matches_any(path, COMPILED_GLOBS) and change.status != "D":
            found.append(f"{path} (compiled bytecode: Python would run it instead of the source)")
        elif matches_any(path, permissions.forbidden):
            found.append(f"{path} (forbidden)")
        elif not matches_any(path, permissions.editable):
            found.append(f"{path} (outside the editable paths {', '.join(permissions.editable)})")
    return sorted(found)


def check_integrity(
    changed: Sequence[ChangedPath],
    permissions: Permissions,
    read: ReadFile,
    base: str,
    candidate: str,
    hidden_paths: Sequence[str] = (),
    patch: bytes = b"",
    importable: Collection[str] = (),
    graded: GradedOracle | None = None,
    *,
    runner_under_test: bool = False,
    reference_paths: Collection[str] = (),
    prebuilt: Sequence[str] = (),
    install: Sequence[str] = (),
    test_modules: Mapping[str, Collection[str]] | None = None,
) -> Observation:
    """Return the ``edits_permitted`` and ``oracle_untouched`` checks for one candidate.

    A change to the oracle, or code that reaches into the test runner, is rejected whatever the
    test run says: its results cannot be trusted.

    Args:
        changed: the patch's changed paths.
        permissions: the contract's editable and forbidden globs.
        read: reads a file at a revision.
        base: the base commit.
        candidate: the candidate commit.
        hidden_paths: paths the hidden test patch touches.
        patch: the patch (binary diff), for its added lines.
        importable: top-level module names importable from the environment and its standard
            library (:func:`repogate.gates.imports.environment_names`); a new top-level module
            of the patch named like one of them is an oracle edit.
        graded: what the graded tests are made of beyond the test files (graded modules, the
            files gate E traced them reading); an edit of it is an oracle edit.
        runner_under_test: the contract's ``[oracles] runner_under_test``: the repository is
            the test runner, so an edit of its files (any the guard trusts as the runner) is an
            oracle edit unless the reference edits that file too
            (:mod:`repogate.gates.runner_files`).
        reference_paths: the paths the reference patch changes (read with
            ``runner_under_test`` only).
        prebuilt: the extension modules the environment built at the base and places into
            every graded tree (:meth:`repogate.environments.Environment.prebuilt_extensions`);
            an edit of what they are built from is not what the tests run, so it fails
            ``edits_permitted`` (:mod:`repogate.gates.prebuilt`).
        install: the install commands the environment was built with at the base
            (:attr:`repogate.environments.Environment.commands`); an edit of a build file they
            read is not in the environment the tests run in, so it fails ``edits_permitted``
            (:mod:`repogate.gates.build_config`).
        test_modules: the import names of the base tree's and the hidden tests' test modules
            (:func:`repogate.gates.imports.import_names_of_tests`); a new module of one of those
            names may be imported in that test file's place, so it is an oracle edit.
    """
    reads = graded_edits(changed, graded or GradedOracle())
    refused, allowed = verdict_edits(changed, reference_paths) if runner_under_test else ([], [])
    report_lines = runner_report_lines(patch, reference_paths) if runner_under_test else []
    misplaced = misplaced_runner(changed, read, base) if runner_under_test else []
    stray = sorted(
        {
            *forbidden_edits(changed, permissions),
            *native_modules(changed),
            *unsafe_cookies(changed, read, candidate),
            *stale_build_edits(changed, prebuilt),
            *stale_config_edits(changed, install, read, base, candidate),
        }
    )
    oracle = sorted(
        {
            *oracle_edits(
                changed, read, base, candidate, hidden_paths, runner_under_test=runner_under_test
            ),
            *runner_tampering(patch, runner_under_test=runner_under_test),
            *refused,
            *report_lines,
            *misplaced,
            *shadowing(changed, read, base, candidate, importable),
            *shadowed_tests(changed, read, candidate, test_modules or {}),
            *reads.oracle,
        }
    )
    return Observation(
        checks=(
            Check(
                name="edits_permitted",
                status="failed" if stray else "passed",
                detail="; ".join(stray),
            ),
            Check(
                name="oracle_untouched",
                status="failed" if oracle else "passed",
                detail="edits the oracle: " + "; ".join(oracle) if oracle else "",
            ),
        ),
        details={
            "changed": [c.path for c in changed],
            "stray": stray,
            "oracle_edits": oracle,
            "graded_oracle_rules": dict(sorted(reads.rules.items())),
            **(
                {"runner_under_test": True, "runner_edits_allowed": allowed}
                if runner_under_test
                else {}
            ),
            "graded_reads": "not traced"
            if graded is None or graded.reads is None
            else graded.reads.model_dump(mode="json"),
        },
    )
