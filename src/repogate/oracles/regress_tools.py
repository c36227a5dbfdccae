"""The harness's regression tools: ``coverage`` and its pytest plugin, in a cached tool folder.

The base's whole-suite record (:mod:`repogate.oracles.base_suite`) runs under coverage with one
dynamic context per test, recorded by the harness's pytest plugin (:mod:`._pytest_plugin`, loaded
as ``-p repogate_regress``), which also filters a run to selected ids. Neither is installed into
the environment under test: :func:`tool_folder` installs ``coverage`` for the environment's
interpreter with the harness's uv into a folder beside the environment cache, with the plugin,
and the runs put it on PYTHONPATH, so the environment and its digest are unchanged.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import coverage

from repogate import sandbox
from repogate._toolchain import SYSTEM_PATH, tool, trust, uv_bin
from repogate.environments import Environment
from repogate.errors import EnvironmentBuildError, IsolationError

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
