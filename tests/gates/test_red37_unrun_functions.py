"""Red team red37: a changed function that never ran in the pytest process at the base.

Per-test coverage is recorded in the pytest process only. A function of a measured file that the
base's tests run in a child process (a CLI run with ``subprocess``, a ``multiprocessing`` worker)
has no line in any test's context, so a change to it selected no test: the fix plus a broken
``main()`` was accepted though the base-passing CLI test fails on it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_regression_set import FIXED_CODE, _regression_receipt, _task

from conftest import run_json
from repogate.cli import ExitCode

pytestmark = pytest.mark.slow

CLI = """import sys

from units import describe


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    print(describe(int(args[0]), args[1]))


def parse(argv):
    return int(argv[0]), argv[1]
"""
WORKER = """from units import unit


def square(x):
    return x * x


def unit_of(name):
    return unit(name)
"""
CLI_TESTS = {
    "units/cli.py": CLI,
    "tests/test_cli.py": (
        "import subprocess\nimport sys\n\nfrom units import cli\n\n\n"
        "def test_parse():\n    assert cli.parse(['1', 'metre']) == (1, 'metre')\n\n\n"
        "def test_main_prints():\n"
        "    out = subprocess.run([sys.executable, '-c', "
        "'import sys; from units.cli import main; main(sys.argv[1:])', '2', 'gram'], "
        "capture_output=True, text=True, check=True).stdout\n"
        "    assert out == '2 gram\\n'\n"
    ),
}
WORKER_TESTS = {
    "units/worker.py": WORKER,
    "tests/test_worker.py": (
        "import multiprocessing\n\nfrom units import worker\n\n\n"
        "def test_unit_of():\n    assert worker.unit_of('gram') == 'gram'\n\n\n"
        "def test_pool():\n"
        "    ctx = multiprocessing.get_context('spawn')\n"
        "    with ctx.Pool(1) as pool:\n"
        "        assert pool.map(worker.square, [2, 3]) == [4, 9]\n"
    ),
}


def _agent(root: Path, name: str, files: dict[str, str]) -> str:
    path = root / f"{name}.toml"
    edits = "".join(
        f"[[edit]]\npath = {json.dumps(p)}\nwrite = {json.dumps(c)}\n\n" for p, c in files.items()
    )
    path.write_text(edits)
    return f"scripted:{path}"


@pytest.mark.parametrize(
    ("more", "path", "broken", "test", "whole"),
    [
        pytest.param(
            CLI_TESTS,
            "units/cli.py",
            CLI.replace("print(describe(int(args[0]), args[1]))", "print(args)"),
            "tests/test_cli.py::test_main_prints",
            False,  # the test that ran a child is selected
            id="subprocess",
        ),
        pytest.param(
            WORKER_TESTS,
            "units/worker.py",
            WORKER.replace("return x * x", "return x + x"),
            "tests/test_worker.py::test_pool",
            True,  # multiprocessing's resource tracker outlives the test: the whole suite
            id="multiprocessing-spawn",
        ),
    ],
)
def test_a_function_run_only_in_a_child_process_is_graded(
    tmp_path: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    more: dict[str, str],
    path: str,
    broken: str,
    test: str,
    whole: bool,
) -> None:
    """The fix plus a broken function that only a child process the base's tests start runs:
    before, its change selected no test and the patch was accepted."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _task(tmp_path, more=more)
    out = tmp_path / "run"
    agent = _agent(tmp_path, "breaks", {"units/__init__.py": FIXED_CODE, path: broken})
    code, rows = run_json(capsys, str(contract), "--agent", agent, "--out", str(out))
    assert code == ExitCode.OK
    assert rows[0]["failed"] == ["regression_tests_passed"], rows
    receipt = _regression_receipt(out, "breaks")
    assert receipt["failing"] == {test: "failed"}
    assert receipt["selection"]["whole"] is whole
