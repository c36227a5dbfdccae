"""Gate I, integrity: the patch stays inside its permissions and leaves the oracle alone.

Checks:

- ``edits_permitted``: every changed path lies within the contract's editable globs and outside
  its forbidden ones, and no changed path is a symlink pointing out of the repository. Stray
  reproduction scripts or a copied ``build/lib/...`` tree are named here.
- ``oracle_untouched``: the patch edits none of the files the verdict is graded by: existing test
  files (modified or deleted), ``conftest.py``, pytest plugins and start-up hooks
  (``sitecustomize.py``, ``usercustomize.py``, ``*.pth``), pytest/tox configuration
  (``pytest.ini``, ``tox.ini``, the test sections of ``setup.cfg`` and ``pyproject.toml``,
  ``pytest11`` entry points), CI files, and the files the hidden tests touch. Patches have passed
  graders by such edits (SWE-bench issues #631 and #393). A *new* test file is allowed: an agent
  adding its own focused test is good practice, and the grader runs only the files that hold the
  graded ids, with the hidden tests' files reset to the base.
"""

from __future__ import annotations

import configparser
import posixpath
import tomllib
from collections.abc import Callable, Sequence
from typing import Any

from repogate.contract import Permissions
from repogate.gates._globs import matches_any
from repogate.git import ChangedPath
from repogate.receipt import Check, Observation

HOOK_GLOBS = (
    "**/conftest.py",
    "**/sitecustomize.py",
    "**/usercustomize.py",
    "**/*.pth",
    "**/pytest_*.py",
    "pytest.ini",
    "tox.ini",
    "noxfile.py",
    ".github/**",
    ".gitlab-ci.yml",
    ".circleci/**",
    "azure-pipelines.yml",
    ".travis.yml",
)
TEST_GLOBS = ("**/test_*.py", "**/*_test.py", "**/tests/**", "**/test/**", "**/testing/**")
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
        parser.read_string(raw.decode("utf-8"))
    except (configparser.Error, UnicodeDecodeError):
        return ["<unparseable>"]
    return [dict(parser[s]) if parser.has_section(s) else None for s in _SETUP_CFG_SECTIONS]


_SECTIONED = {"pyproject.toml": _pyproject_test_config, "setup.cfg": _setup_cfg_test_config}


def oracle_edits(
    changed: Sequence[ChangedPath],
    read: ReadFile,
    base: str,
    candidate: str,
    hidden_paths: Sequence[str] = (),
) -> list[str]:
    """Return the changed paths that belong to the oracle, each with why, sorted.

    Args:
        changed: the patch's changed paths.
        read: reads a file at a revision (for the sectioned configuration files).
        base: the base commit.
        candidate: the candidate commit.
        hidden_paths: paths the hidden test patch touches.
    """
    found = []
    for change in changed:
        for path in {change.path, change.old_path} - {None}:
            assert path is not None
            name = posixpath.basename(path)
            if path in hidden_paths:
                found.append(f"{path} (touched by the hidden tests)")
            elif matches_any(path, HOOK_GLOBS):
                found.append(f"{path} (test hook, test configuration or CI)")
            elif matches_any(path, TEST_GLOBS) and change.status != "A":
                found.append(f"{path} (an existing test file)")
            elif name in _SECTIONED and posixpath.dirname(path) == "":
                section = _SECTIONED[name]
                if section(read(base, path)) != section(read(candidate, path)):
                    found.append(f"{path} (its test configuration changed)")
    return sorted(set(found))


def forbidden_edits(changed: Sequence[ChangedPath], permissions: Permissions) -> list[str]:
    """Return changed paths outside the editable globs or inside forbidden ones, each with why."""
    found = []
    for change in changed:
        path = change.path
        if change.is_symlink:
            found.append(f"{path} (a symlink: agents may not add or change links)")
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
) -> Observation:
    """Return the ``edits_permitted`` and ``oracle_untouched`` checks for one candidate.

    A change to the oracle is rejected whatever the test run says: its results cannot be trusted.
    """
    stray = forbidden_edits(changed, permissions)
    oracle = oracle_edits(changed, read, base, candidate, hidden_paths)
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
        details={"changed": [c.path for c in changed], "stray": stray, "oracle_edits": oracle},
    )
