"""A uv environment record around a venv made outside the build (tests of the harness's queries).

The record's fields are the uv backend's; the venv is a real one (``uv venv``, or this
interpreter's own prefix). A query test edits the venv afterwards to plant code in it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from repogate._toolchain import find_python, uv_bin
from repogate.environments import Toolchain
from repogate.environments.uv import UvEnvironment

TINY_PYPROJECT = """
[project]
name = "tinypkg"
version = "0.1"
dependencies = []

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
"""
"""A one-package project (``tinypkg``, hatchling) for tests that build a real uv environment."""


def uv_record(venv: Path, python: Path | None = None, **update: object) -> UvEnvironment:
    """Return a uv record of ``venv`` (interpreter ``python``, default ``venv/bin/python``).

    ``update`` replaces fields (``import_roots``, ``timezone`` ...).
    """
    python = python or venv / "bin" / "python"
    toolchain = Toolchain(python="3.11.7", implementation="CPython", platform="linux", uv="uv")
    env = UvEnvironment(
        python=python,
        bin_dir=python.parent,
        venv=venv,
        cache_key="k",
        digest="d",
        toolchain=toolchain,
        packages=(),
        commands=(),
        cold=False,
        build_seconds=0.0,
    )
    return env.model_copy(update=update)


def make_venv(folder: Path, version: str = "3.11", python: Path | None = None) -> Path:
    """Make a real venv at ``folder`` with ``uv venv`` (no pip) and return ``folder``.

    From ``python``, default the interpreter a build would use for ``version``
    (:func:`repogate._toolchain.find_python`).
    """
    python = python or find_python(version, folder.parent)
    argv = [uv_bin(), "venv", "-q", "--no-config", "--python", str(python), str(folder)]
    subprocess.run(argv, check=True, env={"PATH": "/usr/bin:/bin", "UV_PYTHON_DOWNLOADS": "never"})
    return folder


def site_packages(venv: Path) -> Path:
    """Return ``venv``'s one ``lib/python3.X/site-packages`` folder."""
    (found,) = venv.glob("lib/python3.*/site-packages")
    return found
