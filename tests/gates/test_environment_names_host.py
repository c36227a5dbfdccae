"""Red team 2026-12-02: gate I's module list runs the environment's interpreter on this machine.

``environment_names`` runs ``<venv>/bin/python -I -S`` outside the sandbox. ``-I -S`` keeps
``.pth`` files and ``sitecustomize`` from running, but the interpreter itself is whatever the
install commands left at ``bin/python`` (they write the venv): a script there runs with the
user's files and the network. A build now refuses an install command that changes
``bin/python*`` (``tests/environments/test_venv_home_grant.py``), so this venv is made by hand
here; the query itself should still run under the sandbox (as the image backend's launcher does).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from repogate._toolchain import uv_bin
from repogate.gates.imports import environment_names


@pytest.mark.xfail(
    strict=True,
    reason="environment_names runs the venv's bin/python outside the sandbox (red team)",
)
def test_a_replaced_venv_interpreter_never_runs_on_the_host(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([uv_bin(), "venv", "-q", "--python", "3.11", str(venv)], check=True)
    python = venv / "bin" / "python"
    real = python.resolve()
    python.unlink()
    marker = tmp_path / "marker"
    python.write_text(f'#!/bin/sh\necho ran > {marker}\nexec {real} "$@"\n')
    python.chmod(0o755)
    names = environment_names(python)
    assert "json" in names  # the standard library, listed
    assert not marker.exists(), "the venv's interpreter ran outside the sandbox"
