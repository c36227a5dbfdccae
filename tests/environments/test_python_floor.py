"""An environment on a Python the test sessions cannot run on is refused before it is built.

Every graded pytest session starts through the guard's bootstrap, which adds an audit hook
(PEP 578, Python 3.8) before anything of the checkout is imported. astropy__astropy-6938 was
imported with SWE-bench's Python 3.6: the environment built for 393 s, then the first base run
failed (``SyntaxError: future feature annotations is not defined`` in ``repogate_boot.py``) and
the instance was rejected ``test_run_failed``, as if its tests could not start. The build now
refuses such an interpreter at once, naming why. Real parts: the machine's CPython 3.6 and 3.7
(pyenv), found as a recipe's interpreter is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repogate._toolchain import find_python
from repogate.contract import EnvironmentRecipe
from repogate.environments.uv import build_environment
from repogate.errors import EnvironmentBuildError
from repogate.sandbox import SandboxPolicy


@pytest.mark.parametrize("version", ["3.6", "3.7"])
def test_a_python_older_than_the_guard_is_refused_before_building(
    version: str, tmp_path: Path
) -> None:
    try:
        find_python(version, tmp_path)
    except EnvironmentBuildError:
        pytest.skip(f"no CPython {version} on this machine")
    recipe = EnvironmentRecipe(python=version, install=("uv pip install pytest",))
    cache = tmp_path / "cache"
    with pytest.raises(EnvironmentBuildError, match=r"need Python 3\.8 or later") as caught:
        build_environment(recipe, tmp_path, cache, SandboxPolicy(timeout_s=60))
    assert f"Python {version}." in str(caught.value) and "audit hook" in str(caught.value)
    assert not any(p.name == "venv" for p in cache.rglob("venv"))  # nothing was built
