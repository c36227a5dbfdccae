"""The harness's pytest plugin and tools cannot be replaced by a module of the candidate's.

Red team finding 3: the regression run loads ``-p repogate_regress`` with the harness's tool
folder after the checkout on ``sys.path``; a top-level ``repogate_regress.py`` in the candidate
(``def pytest_pyfunc_call(pyfuncitem): return True``) was loaded instead and every test body was
skipped, hiding a real regression.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import repogate.oracles
from repogate.oracles.base_suite import plugin_command
from repogate.oracles.pytest_runner import run_tests
from repogate.oracles.regress_tools import PLUGIN_MODULE
from repogate.sandbox import SandboxPolicy

PYTHON = Path(sys.executable)
COMMAND = "python -m pytest -p no:cacheprovider"
POLICY = SandboxPolicy(timeout_s=60)
SKIP_BODIES = "def pytest_pyfunc_call(pyfuncitem):\n    return True\n"


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    """A harness tool folder holding the real plugin (no coverage needed without its variable)."""
    folder = tmp_path / "tools"
    folder.mkdir()
    plugin = Path(repogate.oracles.__file__).with_name("_pytest_plugin.py")
    shutil.copyfile(plugin, folder / f"{PLUGIN_MODULE}.py")
    (folder / "coverage").mkdir()
    (folder / "coverage" / "__init__.py").write_text("")
    return folder


@pytest.mark.parametrize(
    "planted",
    [f"{PLUGIN_MODULE}.py", f"src/{PLUGIN_MODULE}.py", "coverage/__init__.py", "tests/coverage.py"],
)
def test_a_candidate_module_named_like_a_harness_tool_is_refused(
    tmp_path: Path, tools: Path, planted: str
) -> None:
    """A candidate module named like the harness's plugin (or a tool it imports) must never run
    in its place: the run is refused, naming the module, so a broken test cannot pass."""
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "test_a.py").write_text("def test_a():\n    assert False\n")
    (work / planted).parent.mkdir(parents=True, exist_ok=True)
    (work / planted).write_text(SKIP_BODIES)
    run = run_tests(
        PYTHON, work, plugin_command(COMMAND), ["tests/test_a.py::test_a"], tmp_path / "r", POLICY,
        tool_path=tools,
    )  # fmt: skip
    assert run.outcomes.get("tests/test_a.py::test_a") != "passed"
    assert run.status == "error"
    name = PLUGIN_MODULE if PLUGIN_MODULE in planted else "coverage"
    assert f"'{name}'" in run.reason


def test_the_harness_plugin_runs_when_nothing_shadows_it(tmp_path: Path, tools: Path) -> None:
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "test_a.py").write_text("def test_a():\n    assert False\n")
    run = run_tests(
        PYTHON, work, plugin_command(COMMAND), ["tests/test_a.py::test_a"], tmp_path / "r", POLICY,
        tool_path=tools,
    )  # fmt: skip
    assert run.outcomes == {"tests/test_a.py::test_a": "failed"}, run.reason
