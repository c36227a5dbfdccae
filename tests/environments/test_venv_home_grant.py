"""Red team 2026-12-02: an install command rewrites ``pyvenv.cfg`` and a later one reads a host folder.

The sandbox shows a command its runtime read-only: each ``PATH`` folder, its venv and the
interpreter installation ``home`` in that venv's ``pyvenv.cfg`` names. Install commands write the
venv, ``pyvenv.cfg`` included, so one command can name any folder there (outside the home folder
itself) and the next command, started with the venv's ``bin`` on ``PATH``, is shown it: with
``supplied_by = "agent"`` the agent's recipe reads the user's files, with the contract's
environment network grant. Now the build compares ``pyvenv.cfg`` and the ``bin/python*`` links
after each install command with what ``uv venv`` made, and refuses a change before the next runs.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from repogate.contract import EnvironmentRecipe
from repogate.environments.uv import build_environment
from repogate.errors import EnvironmentBuildError
from repogate.sandbox import SandboxPolicy


def test_a_folder_named_in_a_rewritten_pyvenv_cfg_is_never_shown(tmp_path: Path) -> None:
    secret = tmp_path / "user-project"
    (secret / "bin").mkdir(parents=True)
    (secret / "notes.txt").write_text("the user's file\n", encoding="utf-8")
    base = tmp_path / "base"
    base.mkdir()
    (base / "one.sh").write_text(
        f'printf "home = {secret / "bin"}\\n" > "$VIRTUAL_ENV/pyvenv.cfg"\n', encoding="utf-8"
    )
    (base / "two.sh").write_text(
        f'cat {secret / "notes.txt"} > "$VIRTUAL_ENV/leak.txt" || true\n', encoding="utf-8"
    )
    recipe = EnvironmentRecipe(python="3.11", install=("sh one.sh", "sh two.sh"))
    cache = tmp_path / "cache"
    with contextlib.suppress(EnvironmentBuildError):
        build_environment(recipe, base, cache, SandboxPolicy(timeout_s=120))
    leaks = [p.read_text() for p in cache.glob("*/venv/leak.txt")]
    assert leaks in ([], [""]), "an install command read a host folder it named in pyvenv.cfg"


@pytest.mark.parametrize(
    "script",
    [
        'ln -sf {secret}/bin/python3 "$VIRTUAL_ENV/bin/python"\n',
        'rm "$VIRTUAL_ENV/bin/python3"; printf "#!/bin/sh\\n" > "$VIRTUAL_ENV/bin/python3"\n',
        'printf "\\nhome = {secret}/bin\\n" >> "$VIRTUAL_ENV/pyvenv.cfg"\n',
    ],
)
def test_an_install_changing_the_venvs_interpreter_fails_the_build(
    tmp_path: Path, script: str
) -> None:
    secret = tmp_path / "user-project"
    (secret / "bin").mkdir(parents=True)
    (secret / "bin" / "python3").symlink_to("/usr/bin/python3")
    base = tmp_path / "base"
    base.mkdir()
    (base / "one.sh").write_text(script.format(secret=secret), encoding="utf-8")
    recipe = EnvironmentRecipe(python="3.11", install=("sh one.sh",))
    with pytest.raises(EnvironmentBuildError, match="changed the venv's"):
        build_environment(recipe, base, tmp_path / "cache", SandboxPolicy(timeout_s=120))
