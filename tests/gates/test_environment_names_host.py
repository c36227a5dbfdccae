"""Red team 2026-12-02: gate I's module list ran the environment's interpreter on this machine.

``environment_names`` ran ``<venv>/bin/python -I -S`` outside the sandbox. ``-I -S`` keeps
``.pth`` files and ``sitecustomize`` from running, but not what the venv decides before them:
the program at ``bin/python``, and the standard library the interpreter finds from ``home`` in
``pyvenv.cfg``. A build refuses an install command that changes either
(``tests/environments/test_venv_home_grant.py``), so each venv here is made by hand; the query
runs in the sandbox (the environment's ``run``), where the planted code finds no marker folder
to write. Each plant first shows it runs when the interpreter is started on this machine.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from _venv_record import make_venv, uv_record
from repogate.gates.imports import environment_names


def _plant_script(venv: Path, marker: Path) -> None:
    """A script in place of the interpreter link, writing ``marker`` and starting the real one."""
    python = venv / "bin" / "python"
    real = python.resolve()
    python.unlink()
    python.write_text(f'#!/bin/sh\necho ran > {marker}\nexec {real} "$@"\n')
    python.chmod(0o755)


def _plant_home(venv: Path, marker: Path) -> None:
    """``home`` naming a copy of the interpreter's folder whose ``encodings`` writes ``marker``.

    ``encodings`` is imported at start-up before ``site`` (``-S`` does not skip it).
    """
    real = (venv / "bin" / "python").resolve()
    version = next(real.parent.parent.glob("lib/python3.*/os.py")).parent
    fake = venv.parent / "fake-home"
    stdlib = fake / "lib" / version.name
    stdlib.mkdir(parents=True)
    for entry in version.iterdir():
        if entry.name != "encodings":
            (stdlib / entry.name).symlink_to(entry)
    shutil.copytree(version / "encodings", stdlib / "encodings")
    init = stdlib / "encodings" / "__init__.py"
    plant = (  # ``open`` is not there yet: the io module comes after the codecs
        "import posix\ntry:\n"
        f"    fd = posix.open({str(marker)!r}, posix.O_WRONLY | posix.O_CREAT)\n"
        "    posix.write(fd, b'ran')\n    posix.close(fd)\nexcept OSError:\n    pass\n"
    )
    init.write_text(plant + init.read_text())
    (fake / "bin").mkdir()
    (fake / "bin" / real.name).symlink_to(real)
    cfg = venv / "pyvenv.cfg"
    lines = cfg.read_text().splitlines()
    cfg.write_text(
        "\n".join(f"home = {fake / 'bin'}" if x.startswith("home") else x for x in lines)
    )


@pytest.mark.parametrize("plant", [_plant_script, _plant_home], ids=["script", "home"])
def test_a_planted_venv_interpreter_never_runs_on_the_host(tmp_path: Path, plant: object) -> None:
    venv = make_venv(tmp_path / "venv")
    marker = tmp_path / "marker"
    assert callable(plant)
    plant(venv, marker)
    subprocess.run([str(venv / "bin" / "python"), "-I", "-S", "-c", "pass"], check=True)
    assert marker.read_text().strip() == "ran"  # the plant runs when started here
    marker.unlink()

    names = environment_names(uv_record(venv), required=())  # no pytest in this bare venv

    assert "json" in names  # the standard library, listed
    assert not marker.exists(), "the venv's interpreter ran outside the sandbox"
