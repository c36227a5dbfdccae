"""pytest tested with its own pytest: the runner under test, guarded (issue 21, pytest-dev/pytest).

The fixture repository holds **real pytest code**: pytest 7.4.4's ``_pytest`` and ``pytest``
packages and ``py.py`` shim, installed from the package index (``uv pip install --target``) and
laid out as pytest's own repository lays them out (``src/``), with its build configuration's
shape (setuptools-scm writing ``src/_pytest/_version.py``; ``minversion`` in its pytest
configuration). The environment is a real uv venv built from a recipe like the env map's
pytest-dev/pytest entries (``SETUPTOOLS_SCM_PRETEND_VERSION=... uv pip install -e .``), and every
run is the harness's real test run (sandbox, guard, JUnit through the FIFO).

Faults this closes, as the SWE-bench import met them (docs/swebench-run.md):

- the guard refused every session, whose pytest machinery comes from the checkout;
- the graded tree had no ``src/_pytest/_version.py`` (the install wrote it into the build
  checkout), so ``pytest.__version__`` was ``unknown`` and ``minversion`` raised.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repogate import git
from repogate._toolchain import uv_bin
from repogate.contract import EnvironmentRecipe
from repogate.environments.uv import UvEnvironment, build_environment
from repogate.oracles.guard import runner_variables
from repogate.oracles.pytest_runner import TestRun, run_tests
from repogate.sandbox import SandboxPolicy

pytestmark = pytest.mark.slow

VERSION = "7.4.4"
RECIPE = EnvironmentRecipe(
    python="3.11",
    install=(
        f"env SETUPTOOLS_SCM_PRETEND_VERSION={VERSION} uv pip install -e . "
        "iniconfig==2.0.0 packaging==23.1 pluggy==1.3.0",
    ),
)
COMMAND = "python -m pytest -p no:cacheprovider"
PYPROJECT = """[build-system]
requires = ["setuptools>=45.0", "setuptools-scm[toml]>=6.2.3"]
build-backend = "setuptools.build_meta"

[project]
name = "pytest"
dynamic = ["version"]
dependencies = ["iniconfig", "packaging", "pluggy>=0.12,<2.0"]

[project.entry-points.console_scripts]
pytest = "pytest:console_main"

[tool.setuptools]
package-dir = {"" = "src"}
packages = ["_pytest", "_pytest._code", "_pytest._io", "_pytest._py", "_pytest.assertion",
            "_pytest.config", "_pytest.mark", "pytest"]
py-modules = ["py"]

[tool.setuptools_scm]
write_to = "src/_pytest/_version.py"

[tool.pytest.ini_options]
minversion = "2.0"
testpaths = ["testing"]
"""
DEMO = f"""import pytest


def test_passes():
    assert 1 + 1 == 2


def test_fails():
    assert 1 + 1 == 3


def test_version_is_the_builds():
    assert pytest.__version__ == "{VERSION}"
"""
IDS = [
    "testing/test_demo.py::test_passes",
    "testing/test_demo.py::test_fails",
    "testing/test_demo.py::test_version_is_the_builds",
]
# Candidate code outside the runner's modules that turns every failure into a pass.
FORGER = """import _pytest.reports as _r

_orig = _r.TestReport.from_item_and_call.__func__


def _forge(cls, item, call):
    report = _orig(cls, item, call)
    report.outcome = "passed"
    report.longrepr = None
    return report


_r.TestReport.from_item_and_call = classmethod(_forge)
"""


@pytest.fixture(scope="module")
def runner_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository shaped as pytest-dev/pytest, holding pytest 7.4.4's own code."""
    where = tmp_path_factory.mktemp("runner")
    target = where / "wheel"
    argv = [uv_bin(), "pip", "install", "--quiet", "--no-deps", "--python", sys.executable]
    subprocess.run([*argv, "--target", str(target), f"pytest=={VERSION}"], check=True)
    repo = where / "pytest"
    (repo / "src").mkdir(parents=True)
    for name in ("_pytest", "pytest"):
        shutil.copytree(target / name, repo / "src" / name)
    shutil.copy2(target / "py.py", repo / "src" / "py.py")
    (repo / "src" / "_pytest" / "_version.py").unlink()  # written by the build, never committed
    (repo / ".gitignore").write_text("src/_pytest/_version.py\n")
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "testing").mkdir()
    (repo / "testing" / "test_demo.py").write_text(DEMO)
    git.init_repo(repo)
    git.commit_all(repo, "pytest 7.4.4's code in its repository's layout")
    return repo


@pytest.fixture(scope="module")
def env(runner_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> UvEnvironment:
    base = tmp_path_factory.mktemp("base") / "checkout"
    git.checkout_tree(runner_repo, "HEAD", base)
    cache = tmp_path_factory.mktemp("cache")
    return build_environment(RECIPE, base, cache, SandboxPolicy(timeout_s=600))


def _graded_tree(repo: Path, where: Path, extra: dict[str, str] | None = None) -> Path:
    tree = where / "graded"
    git.checkout_tree(repo, "HEAD", tree)
    for path, text in (extra or {}).items():
        (tree / path).write_text(text)
    return tree


def _run(env: UvEnvironment, tree: Path, where: Path, *, runner: bool) -> TestRun:
    policy = SandboxPolicy(
        network=False, timeout_s=300, writable=(), writable_cwd=True, env=runner_variables(runner)
    )
    return run_tests(env, tree, COMMAND, IDS, where / "report", policy)


def test_the_build_keeps_the_version_file_it_wrote(env: UvEnvironment) -> None:
    """setuptools-scm's ``write_to`` output is kept and recorded, the only file the install wrote."""
    assert env.import_roots == ("src",)
    assert [g.path for g in env.generated] == ["src/_pytest/_version.py"]


def test_the_runner_under_test_grades_its_own_tests(
    runner_repo: Path, env: UvEnvironment, tmp_path: Path
) -> None:
    """With the statement, the checkout's pytest runs its tests and its outcomes are trusted."""
    tree = _graded_tree(runner_repo, tmp_path)
    run = _run(env, tree, tmp_path, runner=True)
    assert run.status == "ok", run.reason
    assert run.outcomes == {
        "testing/test_demo.py::test_passes": "passed",
        "testing/test_demo.py::test_fails": "failed",
        "testing/test_demo.py::test_version_is_the_builds": "passed",
    }
    assert (tree / "src" / "_pytest" / "_version.py").is_file()  # placed from the build


def test_without_the_statement_the_guard_refuses_the_checkouts_runner(
    runner_repo: Path, env: UvEnvironment, tmp_path: Path
) -> None:
    """The first fault, unchanged for a repository not declared the runner: no outcome trusted."""
    run = _run(env, _graded_tree(runner_repo, tmp_path), tmp_path, runner=False)
    assert run.status == "error" and run.outcomes == {}
    assert "the test runner was changed during the run" in run.reason
    assert "src/_pytest/" in run.reason


def test_without_the_builds_version_file_the_runner_cannot_start(
    runner_repo: Path, env: UvEnvironment, tmp_path: Path
) -> None:
    """The second fault: a graded tree without ``_version.py`` (what the harness gave before).

    pytest 7.4 imports it outright; pytest 4.5 (pytest-5227's base) falls back to the version
    ``unknown``, which its ``minversion`` check refuses (``InvalidVersion``): the same fault.
    """
    bare = env.model_copy(update={"generated": ()})
    run = _run(bare, _graded_tree(runner_repo, tmp_path), tmp_path, runner=True)
    assert run.status == "error" and run.outcomes == {}
    assert "No module named '_pytest._version'" in run.reason


def test_trust_does_not_reach_a_module_outside_the_runner(
    runner_repo: Path, env: UvEnvironment, tmp_path: Path
) -> None:
    """A checkout module that is not pytest's (``src/helper.py``) forging reports trips the guard.

    The test file imports it, as a candidate's product code would be imported; the forged
    outcome would turn ``test_fails`` into a pass.
    """
    extra = {
        "src/helper.py": FORGER,
        "testing/test_demo.py": "import helper  # noqa: F401\n" + DEMO,
    }
    tree = _graded_tree(runner_repo, tmp_path, extra)
    run = _run(env, tree, tmp_path, runner=True)
    assert run.status == "error" and run.outcomes == {}
    assert "src/helper.py" in run.reason


POKING_TEST = """import _pytest


class _CustomPdb:
    pass


_pytest._CustomPdb = _CustomPdb  # as pytest's own testing/test_pdb.py does


def test_passes():
    assert True
"""


def test_the_runners_own_tests_may_poke_at_the_runner(
    runner_repo: Path, env: UvEnvironment, tmp_path: Path
) -> None:
    """pytest-5227's whole-suite base run was voided by ``testing/test_pdb.py`` adding ``_pytest._CustomPdb``.

    With the runner under test a listed, unwritten test module of the tree is trusted like the
    tests' conftest files (gate I clears each: an existing one unedited, a new one naming no
    runner internals); without the statement it is not.
    """
    tree = _graded_tree(runner_repo, tmp_path, {"testing/test_pdb.py": POKING_TEST})
    policy = SandboxPolicy(
        network=False, timeout_s=300, writable=(), writable_cwd=True, env=runner_variables(True)
    )
    ids = ["testing/test_pdb.py::test_passes"]
    run = run_tests(env, tree, COMMAND, ids, tmp_path / "report", policy)
    assert run.status == "ok", run.reason
    assert run.outcomes == {"testing/test_pdb.py::test_passes": "passed"}
