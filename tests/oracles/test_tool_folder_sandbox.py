"""Red team 2026-12-02: installing the coverage tools ran the environment's interpreter on this machine.

``tool_folder`` runs ``uv pip install --python <interpreter> --target ...``; uv starts that
interpreter to query it (``-I``, with ``site``), so whatever the venv holds runs with the user's
files and the network: a ``sitecustomize`` or a ``.pth`` line in its site-packages, or a script
put at ``bin/python``. Each plant below first shows it runs when the interpreter is started on
this machine (it writes a marker file outside the sandbox), then that installing the tools
leaves no marker: uv is given a launcher that starts the interpreter in the sandbox.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from _venv_record import make_venv, site_packages, uv_record
from repogate.errors import EnvironmentBuildError
from repogate.oracles.regress_tools import PLUGIN_MODULE, tool_folder
from repogate.sandbox import SANDBOX_ENV, allowing_weak_isolation


def _plant(venv: Path, marker: Path, how: str) -> None:
    """Leave code in ``venv`` that writes ``marker`` whenever its interpreter starts with site."""
    line = f"open({str(marker)!r}, 'w').write('ran')"
    if how == "sitecustomize":
        (site_packages(venv) / "sitecustomize.py").write_text(line + "\n")
    elif how == "pth":
        (site_packages(venv) / "zz_plant.pth").write_text(f"import os; {line}\n")
    else:  # a script in place of the interpreter link
        python = venv / "bin" / "python"
        real = python.resolve()
        python.unlink()
        python.write_text(f'#!/bin/sh\necho ran > {marker}\nexec {real} "$@"\n')
        python.chmod(0o755)


@pytest.mark.parametrize("how", ["sitecustomize", "pth", "script"])
def test_installing_the_tools_never_runs_the_interpreter_on_this_machine(
    tmp_path: Path, how: str
) -> None:
    venv = make_venv(tmp_path / "venv")
    marker = tmp_path / "marker"
    _plant(venv, marker, how)
    subprocess.run([str(venv / "bin" / "python"), "-I", "-c", "pass"], check=True)
    assert marker.read_text().strip() == "ran"  # the plant runs when started here
    marker.unlink()

    cache = tmp_path / "cache"  # the environment cache, there once an environment is built
    cache.mkdir()
    folder = tool_folder(uv_record(venv), cache)

    assert (folder / "coverage" / "__init__.py").is_file()
    assert (folder / f"{PLUGIN_MODULE}.py").is_file()
    assert not marker.exists(), "the environment's interpreter ran outside the sandbox"


def test_without_bubblewrap_the_tools_are_refused_even_when_weak_isolation_is_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Weak isolation would start the launcher's interpreter on this machine: no tools instead.

    The error is what the base-suite record gives as the reason for no coverage.
    """
    venv = make_venv(tmp_path / "venv")
    marker = tmp_path / "marker"
    _plant(venv, marker, "sitecustomize")
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv(SANDBOX_ENV, "none")
    with allowing_weak_isolation("test"), pytest.raises(EnvironmentBuildError) as info:
        tool_folder(uv_record(venv), cache)
    assert str(info.value).startswith("installing coverage: a launcher needs bubblewrap (bwrap)")
    assert not marker.exists()
    assert not list(cache.glob("regress-tools-*"))
