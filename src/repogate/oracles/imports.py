"""Where the tests' imports of the project resolve: the checkout under test, or a copy elsewhere.

The code under test must be the candidate's. An environment whose install left a copy of the
project in site-packages (a non-editable ``pip install .`` that the environment builder could not
redirect, a wheel built from the base, a recipe that copies files) makes the tests exercise that
copy: gold is then rejected as the agent's failure and a breaking agent passes. The check:

1. the top-level modules the test files import (``import a.b`` and ``from a.b import c`` give
   ``a``; relative imports are the tests' own), read from their source without running it;
2. of those, the ones the checkout holds itself (a package folder or a ``name.py`` anywhere in it,
   outside version-control, build and virtual-environment folders);
3. ``importlib.util.find_spec`` of each, run in the environment on the checkout with the
   ``sys.path`` pytest gives the tests: the same variables, the working folder only for
   ``python -m pytest``, and the folder pytest's default ``prepend`` import mode inserts for each
   test file and ``conftest.py`` (the first folder above it that is no package).

A module that resolves outside the checkout is named with the path it resolves to. A namespace
package counts as the checkout's when any of its portions lies in it. A name that resolves into
the interpreter's standard library is never a copy of the project: a folder of that name in the
checkout with no ``__init__.py`` (click's ``tests/typing/``) is a namespace portion, which the
standard library's module always wins over.
"""

from __future__ import annotations

import ast
import json
import os
import shlex
from collections.abc import Iterable
from pathlib import Path

from repogate import sandbox
from repogate.environments import Environment

_SKIP = frozenset({".git", ".hg", ".tox", ".nox", ".venv", "venv", "build", "dist", "node_modules"})

_PROBE = """
import importlib.util, json, os, sys, sysconfig
names, keep, inserted = json.loads(sys.argv[1]), sys.argv[2] == "1", json.loads(sys.argv[3])
if not keep and sys.path and sys.path[0] in ("", "."):
    del sys.path[0]
sys.path[0:0] = inserted
std = {os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")}
def standard(path):
    path = os.path.realpath(path)
    parts = path.split(os.sep)
    return path.startswith(tuple(std)) and "site-packages" not in parts and "dist-packages" not in parts
found = {}
for name in names:
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        spec = None
    if spec is not None:
        where = [spec.origin, *(spec.submodule_search_locations or [])]
        if not all(p and standard(p) for p in where if p not in ("built-in", "frozen")):
            found[name] = where
print(json.dumps(found))
"""


def imported_modules(files: Iterable[Path]) -> set[str]:
    """Return the top-level module names ``files`` import (absolute imports only).

    A file that cannot be read or parsed is skipped (its collection error is graded elsewhere).
    """
    names: set[str] = set()
    for path in files:
        try:
            tree = ast.parse(path.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def checkout_modules(checkout: Path) -> set[str]:
    """Return the top-level module names ``checkout`` holds, from any folder that may be a root.

    A folder with ``.py`` files is a package of its name, and a ``name.py`` a module, when the
    folder holding it is no package itself (has no ``__init__.py``): so ``lib/calc`` gives
    ``calc``, and a vendored ``pkg/_vendor/six.py`` gives nothing.
    """
    names: set[str] = set()
    for folder, dirs, files in os.walk(checkout):
        dirs[:] = [d for d in dirs if d not in _SKIP and not d.endswith((".egg-info", "-info"))]
        here = Path(folder)
        if "__init__.py" in files:
            continue
        for sub in dirs:
            if any(f.suffix == ".py" for f in (here / sub).iterdir()):
                names.add(sub)
        names.update(f[:-3] for f in files if f.endswith(".py"))
    return {n for n in names if n.isidentifier()}


def shadowing(checkout: Path, tools: Path) -> list[str]:
    """Return the top-level modules of the harness's ``tools`` folder that ``checkout`` also holds.

    The harness's pytest plugin and what it imports (``coverage``) are loaded by name, and
    ``python -m pytest`` puts the working folder first on ``sys.path``: a candidate (or code its
    tests ran) holding a module of one of those names would be loaded in its place.

    Args:
        checkout: the tree the tests run on (read for folder and file names only).
        tools: the harness's tool folder (a module is a ``name.py`` or a package folder there).

    Returns:
        The clashing names, sorted; a tree that cannot be listed counts every tool as clashing.
    """
    names = {
        p.stem if p.suffix == ".py" else p.name
        for p in tools.iterdir()
        if (p.suffix == ".py" and p.is_file()) or (p / "__init__.py").is_file()
    }
    try:
        held = checkout_modules(checkout)
    except OSError:
        return sorted(names)
    return sorted(names & held)


def _cwd_on_path(test_command: str) -> bool:
    try:
        words = shlex.split(test_command)
    except ValueError:
        return False
    return "-m" in words[:3]


def _inserted(files: Iterable[Path], checkout: Path) -> list[str]:
    """Return the folders pytest's ``prepend`` import mode puts on ``sys.path`` for ``files``."""
    found: set[str] = set()
    for path in files:
        folder = path.parent
        while (folder / "__init__.py").is_file() and folder != checkout:
            folder = folder.parent
        if folder.is_relative_to(checkout):
            found.add(str(folder))
    return sorted(found)


def _outside(locations: list[str | None], checkout: Path) -> str | None:
    """Return the location ``locations`` resolve to when none lies in ``checkout``, else None."""
    paths = [Path(p).resolve() for p in locations if p and p not in ("built-in", "frozen")]
    if not paths or any(p.is_relative_to(checkout) for p in paths):
        return None
    return str(paths[0])


def foreign_imports(
    env: Environment,
    checkout: Path,
    test_files: Iterable[Path],
    test_command: str,
    policy: sandbox.SandboxPolicy,
) -> dict[str, str]:
    """Return ``{module: path}`` for each project module the tests import from outside ``checkout``.

    Args:
        env: the built environment.
        checkout: the tree the tests run on (the base with the hidden tests, normally).
        test_files: the test files whose imports count (hidden tests, graded files, conftests).
        test_command: the contract's test command (whether pytest puts the working folder on
            ``sys.path``).
        policy: the sandbox for running the checkout's environment (the tests' own).

    Returns:
        Each offending module and where it resolves; empty when every one resolves in the
        checkout (or the probe could not run: the test run then reports what is wrong).
    """
    checkout = checkout.resolve()
    files = [f.resolve() for f in test_files if f.is_file()]
    names = sorted(imported_modules(files) & checkout_modules(checkout))
    if not names:
        return {}
    keep = "1" if _cwd_on_path(test_command) else "0"
    inserted = json.dumps(_inserted(files, checkout))
    argv = [*env.python_argv(), "-c", _PROBE, json.dumps(names), keep, inserted]
    result = env.run(argv, checkout, policy)
    try:
        found = json.loads(result.stdout) if result.ok else {}
    except ValueError:
        found = {}
    foreign = {}
    for name, locations in found.items() if isinstance(found, dict) else ():
        where = _outside(list(locations), checkout)
        if where is not None:
            foreign[name] = where
    return foreign
