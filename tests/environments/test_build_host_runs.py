"""Red team 2026-12-02: nothing an install command leaves in the venv runs outside the sandbox.

After the install commands, the build lists the venv's packages. It ran ``uv pip freeze
--python <venv>/bin/python`` on this machine, outside the sandbox, and uv runs that interpreter
(with ``site``) to find its packages: a ``.pth`` line, a ``sitecustomize`` or a replaced
``bin/python`` left by an install command (the agent's, with ``supplied_by = "agent"``, or a
package it installs) ran with the user's files and the network. Each shape here writes a marker
where the sandbox grants no write; the marker must never appear.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from repogate.contract import EnvironmentRecipe
from repogate.environments.uv import build_environment
from repogate.errors import EnvironmentBuildError
from repogate.sandbox import SandboxPolicy

SITE = '"$VIRTUAL_ENV"/lib/python3.11/site-packages'


def _plant(marker: Path) -> dict[str, str]:
    """The install script of each shape (run as ``sh plant.sh`` in the base checkout)."""
    write = f"open({str(marker)!r}, 'w').write('ran on the host')"
    return {
        "pth": f'cat > {SITE}/evil.pth <<"E"\nimport os; {write}\nE\n',
        "sitecustomize": f'cat > {SITE}/sitecustomize.py <<"E"\n{write}\nE\n',
        "python replaced": (
            'real=$(readlink -f "$VIRTUAL_ENV/bin/python")\nrm "$VIRTUAL_ENV/bin/python"\n'
            f'cat > "$VIRTUAL_ENV/bin/python" <<E\n#!/bin/sh\necho ran > {marker}\n'
            'exec $real "\\$@"\nE\nchmod +x "$VIRTUAL_ENV/bin/python"\n'
        ),
    }


@pytest.mark.parametrize("shape", ["pth", "sitecustomize", "python replaced"])
def test_nothing_an_install_left_runs_on_the_host(tmp_path: Path, shape: str) -> None:
    marker = tmp_path / "outside" / "marker"
    marker.parent.mkdir()
    base = tmp_path / "base"
    base.mkdir()
    (base / "plant.sh").write_text(_plant(marker)[shape], encoding="utf-8")
    recipe = EnvironmentRecipe(python="3.11", install=("sh plant.sh",))
    # refusing the venv is fine; running its code on the host is not
    with contextlib.suppress(EnvironmentBuildError):
        build_environment(recipe, base, tmp_path / "cache", SandboxPolicy(timeout_s=120))
    assert not marker.exists(), f"{shape}: code from the venv ran outside the sandbox"
