"""The harness's regression tools: ``coverage`` and its pytest plugin, in a cached tool folder.

The base's whole-suite record (:mod:`repogate.oracles.base_suite`) runs under coverage with one
dynamic context per test, recorded by the harness's pytest plugin (:mod:`._pytest_plugin`, loaded
as ``-p repogate_regress``), which also filters a run to selected ids. Neither is installed into
the environment under test: :func:`tool_folder` installs ``coverage`` for the environment's
interpreter with the harness's uv into a folder beside the environment cache, with the plugin,
and the runs put it on PYTHONPATH, so the environment and its digest are unchanged.
:func:`read_coverage` reads the data file the tests wrote: whatever it holds is "no coverage",
never a crash.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

import coverage

from repogate import sandbox
from repogate._files import read_bytes_nofollow
from repogate._toolchain import SYSTEM_PATH, tool, trust, uv_bin
from repogate.environments import Environment
from repogate.errors import EnvironmentBuildError, IsolationError
from repogate.oracles.selection import CoverageMap

PLUGIN_MODULE = "repogate_regress"
"""The plugin's module name in the tool folder (``-p repogate_regress``)."""
PLUGIN_SOURCE = Path(__file__).with_name("_pytest_plugin.py")
"""The plugin's source, copied into each tool folder."""


def plugin_digest() -> str:
    """Return sha256 (hex) of the plugin's source: it shapes the coverage record."""
    return hashlib.sha256(PLUGIN_SOURCE.read_bytes()).hexdigest()


def tool_folder(env: Environment, cache: Path) -> Path:
    """Install ``coverage`` for ``env``'s interpreter and the plugin into a cached tool folder.

    Args:
        env: the built environment (its interpreter picks the wheel).
        cache: the folder holding tool folders (outside every sandbox's writable folders).

    Returns:
        The folder to put on PYTHONPATH.

    The environment's interpreter only ever runs in the sandbox: uv queries it through a
    launcher (:func:`_launcher`), and builds no source distribution (``--no-build``: a build
    would run a build backend with the interpreter the query named).

    Raises:
        repogate.errors.EnvironmentBuildError: uv could not install coverage (no network and
            not cached, no wheel for the interpreter), or bubblewrap is not usable here.
    """
    plugin = PLUGIN_SOURCE.read_bytes()
    key = hashlib.sha256(
        "\0".join(
            [env.toolchain.python, env.toolchain.platform, coverage.__version__, plugin.hex()]
        ).encode()
    ).hexdigest()[:16]
    folder = cache / f"regress-tools-{key}"
    if (folder / f"{PLUGIN_MODULE}.py").is_file():
        return folder
    fresh = cache / f".regress-tools-{key}.{os.getpid()}"
    shutil.rmtree(fresh, ignore_errors=True)
    variables = {
        **trust(),
        "PATH": SYSTEM_PATH,
        "HOME": str(cache),
        "UV_CACHE_DIR": str(cache / "uv-cache"),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_PROGRESS": "1",
    }
    with tempfile.TemporaryDirectory(prefix="repogate-launcher-") as scratch:
        python = _launcher(env, Path(scratch), cache / "uv-cache")
        argv = [uv_bin(), "pip", "install", "--python", str(python), "--no-build"]
        tool(
            [*argv, "--target", str(fresh), "coverage>=7"], variables, cache, "installing coverage"
        )
    (fresh / f"{PLUGIN_MODULE}.py").write_bytes(plugin)
    try:
        fresh.rename(folder)
    except OSError:  # another attempt installed it first
        shutil.rmtree(fresh, ignore_errors=True)
    return folder


def _launcher(env: Environment, scratch: Path, uv_cache: Path) -> Path:
    """Write ``scratch/python``: ``env``'s interpreter started in the sandbox, for uv to query.

    uv runs the interpreter it is given (``-I``, with ``site``) to learn its version and tags,
    importing its query script from a fresh folder in ``uv_cache``; given the venv's own
    ``bin/python`` it would run on this machine whatever the venv holds (a ``.pth`` line, a
    ``sitecustomize``, a script at ``bin/python``: red team 2026-12-02). The launcher shows it
    the environment as a test run sees it, ``uv_cache`` read-only, no network, nothing writable.

    Raises:
        repogate.errors.EnvironmentBuildError: bubblewrap is not usable here (a launcher is
            never weakly isolated): no tools, and the record says why.
    """
    uv_cache.mkdir(parents=True, exist_ok=True)
    shown = sandbox.SandboxPolicy(network=False, readable=(uv_cache,), writable=())
    try:
        return sandbox.launcher(scratch / "python", env.python_argv(), env.grant(scratch, shown))
    except IsolationError as exc:
        raise EnvironmentBuildError(f"installing coverage: {exc}") from None


def read_coverage(data_file: Path, workdir: Path) -> CoverageMap:
    """Read the coverage data file the plugin wrote into per-test line sets.

    The file is test-time code's to write: whatever it holds is "no coverage", never a crash
    (red team rt32: a value of another type in coverage's schema raised ``TypeError``).

    Raises:
        ValueError: the file is missing, a link, holds no per-test context, or cannot be read.
    """
    try:
        info = data_file.lstat()
    except FileNotFoundError:
        raise ValueError("the coverage run wrote no data") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("the coverage data is not a regular file")
    try:
        tests, untested = _contexts(data_file, workdir.resolve())
    except coverage.CoverageException:
        raise
    except Exception as exc:  # any value of the file's choosing
        raise ValueError(f"the coverage data is not coverage's ({type(exc).__name__})") from None
    if not tests:
        raise ValueError("the coverage data holds no per-test context")
    return CoverageMap(tests=tests, untested=untested, **_children(data_file))


_CHILDREN_SUFFIX = ".children.json"  # _pytest_plugin.CHILDREN_SUFFIX (never imported here)
_MAX_CHILDREN_BYTES = 64 * 1024 * 1024


def _children(data_file: Path) -> dict[str, Any]:
    """The plugin's record of child processes beside ``data_file``, as CoverageMap fields.

    Without it, what runs in child processes cannot be told from the data: no coverage.
    """
    name = data_file.name + _CHILDREN_SUFFIX
    try:
        raw = read_bytes_nofollow(data_file.parent, name, _MAX_CHILDREN_BYTES)
    except OSError as exc:
        raise ValueError(f"the record of child processes cannot be read ({exc})") from None
    if raw is None:
        raise ValueError("the coverage run did not record which tests started child processes")
    try:
        record = json.loads(raw)
        spawning, lingering = record["spawning"], record["lingering"]
        outside = record["outside"]
    except (ValueError, TypeError, KeyError, RecursionError):
        raise ValueError("the record of child processes is not the plugin's") from None
    names = (spawning, lingering)
    if not all(isinstance(n, list) and all(isinstance(i, str) for i in n) for n in names):
        raise ValueError("the record of child processes is not the plugin's")
    if not isinstance(outside, bool):
        raise ValueError("the record of child processes is not the plugin's")
    return {
        "spawning": tuple(spawning),
        "lingering": tuple(lingering),
        "spawned_outside": outside,
    }


def _contexts(
    data_file: Path, root: Path
) -> tuple[dict[str, dict[str, tuple[int, ...]]], dict[str, tuple[int, ...]]]:
    """Per-test lines and lines outside every test, of the files below ``root``."""
    data = coverage.CoverageData(basename=str(data_file))
    data.read()
    tests: dict[str, dict[str, tuple[int, ...]]] = {}
    untested: dict[str, tuple[int, ...]] = {}
    for measured in data.measured_files():
        path = Path(measured)
        if not path.is_relative_to(root):
            continue
        relative = path.relative_to(root).as_posix()
        per_context: dict[str, list[int]] = {}
        for line, contexts in (data.contexts_by_lineno(measured) or {}).items():
            for context in contexts:
                per_context.setdefault(str(context), []).append(int(line))
        for context, lines in per_context.items():
            if context:
                tests.setdefault(context, {})[relative] = tuple(sorted(lines))
            else:
                untested[relative] = tuple(sorted(lines))
    return tests, untested
