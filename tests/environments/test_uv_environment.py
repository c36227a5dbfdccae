from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from _venv_record import TINY_PYPROJECT
from repogate._toolchain import find_python
from repogate.contract import EnvironmentRecipe
from repogate.environments.uv import UvEnvironment, build_environment, cache_key
from repogate.errors import EnvironmentBuildError
from repogate.oracles.pytest_runner import run_tests
from repogate.sandbox import SandboxPolicy

POLICY = SandboxPolicy(timeout_s=300)
RECIPE = EnvironmentRecipe(
    python="3.11",
    install=("uv pip install pytest", "uv pip install -e ."),
    lock_inputs=("pyproject.toml",),
)
TEST = "from tinypkg import VALUE\n\ndef test_value():\n    assert VALUE == 2\n"


def _project(root: Path, value: int) -> Path:
    files = {
        "pyproject.toml": TINY_PYPROJECT,
        "src/tinypkg/__init__.py": f"VALUE = {value}\n",
        "tests/test_value.py": TEST,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("env-cache")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> tuple[UvEnvironment, Path]:
    base = _project(tmp_path_factory.mktemp("base"), value=1)
    return build_environment(RECIPE, base, cache, POLICY), base


def test_missing_python_version_is_an_environment_error(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentBuildError, match=r"3\.99"):
        find_python("3.99", tmp_path)
    with pytest.raises(EnvironmentBuildError, match="not a version"):
        find_python("--help", tmp_path)


def test_cache_key_follows_recipe_interpreter_and_lock_inputs() -> None:
    interp = ("3.11.7", "CPython", "linux-x86_64")
    key = cache_key(RECIPE, interp, {"pyproject.toml": "aa"})
    assert key == cache_key(RECIPE, interp, {"pyproject.toml": "aa"})
    assert key != cache_key(RECIPE, interp, {"pyproject.toml": "bb"})
    assert key != cache_key(RECIPE, ("3.11.8", "CPython", "linux-x86_64"), {"pyproject.toml": "aa"})
    other = RECIPE.model_copy(update={"install": ("uv pip install pytest",)})
    assert key != cache_key(other, interp, {"pyproject.toml": "aa"})


@pytest.mark.slow
def test_cold_build_records_toolchain_and_packages(built: tuple[UvEnvironment, Path]) -> None:
    env, base = built
    assert env.cold is True
    assert env.toolchain.python.startswith("3.11.")
    assert env.toolchain.uv.startswith("uv ")
    assert any(p.startswith("pytest==") for p in env.packages)
    assert "-e <checkout>" in env.packages
    assert not any(str(base) in p for p in env.packages)
    assert env.import_roots == ("src",)
    assert env.commands == RECIPE.install
    assert env.python.is_file() and env.venv.is_relative_to(env.python.parents[2])
    assert len(env.digest) == 64


@pytest.mark.slow
def test_warm_build_is_a_cache_hit(built: tuple[UvEnvironment, Path], cache: Path) -> None:
    env, base = built
    warm = build_environment(RECIPE, base, cache, POLICY)
    assert warm.cold is False
    assert (warm.digest, warm.venv, warm.packages) == (env.digest, env.venv, env.packages)
    assert warm.build_seconds < env.build_seconds / 5


@pytest.mark.slow
def test_tests_import_the_candidate_checkout_not_the_build_checkout(
    built: tuple[UvEnvironment, Path], tmp_path: Path
) -> None:
    """Threat: a cached venv with an editable install would test the base code, not the patch."""
    env, base = built
    candidate = _project(tmp_path / "candidate", value=2)
    ids = ["tests/test_value.py::test_value"]
    at_candidate = run_tests(env, candidate, "python -m pytest", ids, tmp_path / "r1", POLICY)
    assert at_candidate.outcomes == {ids[0]: "passed"}
    at_base = run_tests(env, base, "python -m pytest", ids, tmp_path / "r2", POLICY)
    assert at_base.outcomes == {ids[0]: "failed"}


@pytest.mark.slow
def test_a_venv_written_to_after_the_build_is_rebuilt(tmp_path: Path, cache: Path) -> None:
    """Threat: code run in one attempt plants files in the shared venv that a later one imports."""
    base = _project(tmp_path / "base", value=1)
    recipe = RECIPE.model_copy(update={"install": ("uv pip install -e .",)})
    first = build_environment(recipe, base, cache, POLICY)
    site = next(first.venv.glob("lib/python*/site-packages"))
    (site / "planted.py").write_text("X = 1\n", encoding="utf-8")
    again = build_environment(recipe, base, cache, POLICY)
    assert again.cold is True
    assert not (site / "planted.py").exists()


@pytest.mark.slow
def test_failing_install_is_an_environment_error_and_leaves_no_entry(
    tmp_path: Path, cache: Path
) -> None:
    base = _project(tmp_path / "base", value=1)
    recipe = EnvironmentRecipe(python="3.11", install=("uv pip install ./no-such-dir",))
    with pytest.raises(EnvironmentBuildError, match="no-such-dir"):
        build_environment(recipe, base, cache, POLICY)
    assert not [
        p
        for p in cache.iterdir()
        if p.is_dir() and (p / "venv").exists() and not (p / "record.json").exists()
    ]


@pytest.mark.slow
def test_install_without_network_grant_cannot_download(tmp_path: Path) -> None:
    base = _project(tmp_path / "base", value=1)
    recipe = EnvironmentRecipe(python="3.11", install=("uv pip install six",), network=False)
    with pytest.raises(EnvironmentBuildError, match="six"):
        policy = POLICY.model_copy(update={"env": {"UV_HTTP_RETRIES": "0"}})
        build_environment(recipe, base, tmp_path / "fresh-cache", policy)


@pytest.mark.slow
def test_lock_input_outside_the_checkout_is_refused(tmp_path: Path, cache: Path) -> None:
    base = _project(tmp_path / "base", value=1)
    shutil.copy(base / "pyproject.toml", tmp_path / "outside.toml")
    recipe = EnvironmentRecipe(python="3.11", lock_inputs=("../outside.toml",))
    with pytest.raises(EnvironmentBuildError, match="outside the checkout"):
        build_environment(recipe, base, cache, POLICY)


def test_unsplittable_install_command_is_an_environment_error(tmp_path: Path) -> None:
    base = _project(tmp_path / "base", value=1)
    recipe = EnvironmentRecipe(python="3.11", install=("pip install 'oops",))
    with pytest.raises(EnvironmentBuildError, match="cannot be split"):
        build_environment(recipe, base, tmp_path / "cache", POLICY)


@pytest.mark.parametrize(
    "command",
    [
        "env SETUPTOOLS_SCM_PRETEND_VERSION=9999.0 uv pip install pytest",
        "sh -c 'uv pip install pytest'",
    ],
)
def test_an_install_command_reaching_uv_through_a_launcher_builds(
    tmp_path: Path, cache: Path, command: str
) -> None:
    """uv reached through a launcher word (``env VAR=1 uv ...``, ``sh -c``) must run in the sandbox.

    Mining derives ``env SETUPTOOLS_SCM_PRETEND_VERSION=... uv pip install`` for projects
    versioned from tags; the harness's uv is on PATH as a link, and only a program named first
    had its runtime mounted, so every such candidate was rejected as ``environment_failed``
    ("env: 'uv': No such file or directory") wherever uv is not installed under /usr.
    """
    recipe = EnvironmentRecipe(python="3.11", install=(command,))
    env = build_environment(recipe, _project(tmp_path / "p", 2), cache, POLICY)
    assert any(p.startswith("pytest==") for p in env.packages)
