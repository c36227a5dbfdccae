from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from repogate.oracles.base_suite import graded_grant
from repogate.oracles.pytest_runner import TestRun, run_isolating, run_tests, select_files
from repogate.sandbox import SandboxPolicy

PYTHON = Path(sys.executable)
COMMAND = "python -m pytest -p no:cacheprovider"
POLICY = SandboxPolicy(timeout_s=60)


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


TRICKY = """
import pytest

@pytest.mark.parametrize("v", ["a b", "ü", "x::y", "[nested]"])
def test_p(v):
    pass

class TestA:
    class TestB:
        def test_c(self):
            assert False
"""


def test_runs_selected_files_and_maps_tricky_ids(tmp_path: Path) -> None:
    work = _write(
        tmp_path / "work",
        {"tests/sub/test_t.py": TRICKY, "tests/test_other.py": "def test_o():\n    pass\n"},
    )
    ids = ["tests/sub/test_t.py::test_p[x::y]", "tests/sub/test_t.py::TestA::TestB::test_c"]
    run = run_tests(PYTHON, work, COMMAND, ids, tmp_path / "report", POLICY)
    assert run.status == "ok", run.reason
    assert run.outcomes == {
        "tests/sub/test_t.py::test_p[a b]": "passed",
        "tests/sub/test_t.py::test_p[\\xfc]": "passed",
        "tests/sub/test_t.py::test_p[x::y]": "passed",
        "tests/sub/test_t.py::test_p[[nested]]": "passed",
        "tests/sub/test_t.py::TestA::TestB::test_c": "failed",
    }
    assert run.collected == 5
    assert run.report_path is not None
    assert run.report_sha256 == hashlib.sha256(run.report_path.read_bytes()).hexdigest()
    assert run.command[-1] == "tests/sub/test_t.py"
    assert run.execution.returncode == 1


def test_printed_pass_lines_change_nothing(tmp_path: Path) -> None:
    """Threat: a patch prints lines that look like passing results; only the report counts."""
    work = _write(
        tmp_path / "work",
        {
            "test_x.py": """
            import sys

            def test_f():
                print("test_x.py::test_f PASSED")
                sys.__stdout__.write("test_x.py::test_f PASSED\\n=== 1 passed in 0.01s ===\\n")
                assert False
            """
        },
    )
    run = run_tests(PYTHON, work, COMMAND, ["test_x.py::test_f"], tmp_path / "r", POLICY)
    assert run.outcomes == {"test_x.py::test_f": "failed"}


def test_zero_collected_is_an_error_never_a_pass(tmp_path: Path) -> None:
    """Threat: a run that tests nothing must not read as a clean pass."""
    work = _write(tmp_path / "work", {"test_empty.py": "X = 1\n"})
    run = run_tests(PYTHON, work, COMMAND, None, tmp_path / "r", POLICY)
    assert (run.status, run.collected, run.outcomes) == ("error", 0, {})
    assert "no tests collected" in run.reason


def test_missing_report_is_an_error(tmp_path: Path) -> None:
    work = _write(tmp_path / "work", {"test_a.py": "def test_a():\n    pass\n"})
    run = run_tests(PYTHON, work, "python -c pass", None, tmp_path / "r", POLICY)
    assert run.status == "error" and "no test report" in run.reason


def test_selection_naming_no_existing_file_is_an_error(tmp_path: Path) -> None:
    work = _write(tmp_path / "work", {"test_a.py": "def test_a():\n    pass\n"})
    ids = ["test_gone.py::test_a", "../outside.py::test_b"]
    assert select_files(ids, work) == []
    run = run_tests(PYTHON, work, COMMAND, ids, tmp_path / "r", POLICY)
    assert run.status == "error" and run.collected == 0


def test_a_nonexistent_file_does_not_sink_the_others(tmp_path: Path) -> None:
    work = _write(tmp_path / "work", {"test_a.py": "def test_a():\n    pass\n"})
    ids = ["test_a.py::test_a", "test_gone.py::test_b"]
    run = run_tests(PYTHON, work, COMMAND, ids, tmp_path / "r", POLICY)
    assert run.status == "ok" and run.outcomes == {"test_a.py::test_a": "passed"}


def test_collection_error_is_data(tmp_path: Path) -> None:
    work = _write(tmp_path / "work", {"test_b.py": "import not_a_module_anywhere\n"})
    run = run_tests(PYTHON, work, COMMAND, ["test_b.py::test_x"], tmp_path / "r", POLICY)
    assert run.status == "ok" and run.outcomes == {"test_b.py": "error"}


def test_hanging_tests_stop_at_the_timeout(tmp_path: Path) -> None:
    work = _write(
        tmp_path / "work", {"test_h.py": "import time\n\ndef test_h():\n    time.sleep(60)\n"}
    )
    policy = SandboxPolicy(timeout_s=1.5)
    run = run_tests(PYTHON, work, COMMAND, None, tmp_path / "r", policy)
    assert run.status == "error" and run.execution.timed_out
    assert "timed out" in run.reason


def test_nothing_is_written_into_the_workspace(tmp_path: Path) -> None:
    """Threat: test runs that leave files (caches, bytecode) change the state being judged."""
    work = _write(
        tmp_path / "work",
        {
            "pkg/__init__.py": "X = 1\n",
            "tests/test_p.py": "import pkg\n\ndef test_p():\n    assert pkg.X\n",
        },
    )
    _git(work, "init", "-q")
    _git(work, "add", ".")
    assert _git(work, "status", "--porcelain", "--ignored") != ""
    before = _git(work, "status", "--porcelain", "--ignored")
    run = run_tests(PYTHON, work, COMMAND, None, tmp_path / "r", POLICY)
    assert run.status == "ok"
    assert _git(work, "status", "--porcelain", "--ignored") == before


def test_report_folder_inside_the_checkout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="inside the checkout"):
        run_tests(PYTHON, tmp_path, COMMAND, None, tmp_path / "reports", POLICY)


@pytest.mark.parametrize("command", ["python -m 'pytest", "  "])
def test_unusable_test_command_is_an_error(tmp_path: Path, command: str) -> None:
    run = run_tests(PYTHON, tmp_path / "work", command, None, tmp_path / "r", POLICY)
    assert run.status == "error" and "cannot be split" in run.reason


def test_configuration_above_the_checkout_is_ignored(tmp_path: Path) -> None:
    """A pytest configuration in a folder above the checkout (the harness's own project, say)
    must not select, rename or break the target repository's tests."""
    _write(
        tmp_path, {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--no-such-option"\n'}
    )
    work = _write(tmp_path / "runs" / "work", {"tests/test_a.py": "def test_a():\n    pass\n"})
    run = run_tests(PYTHON, work, COMMAND, ["tests/test_a.py::test_a"], tmp_path / "report", POLICY)
    assert run.status == "ok", run.reason
    assert run.outcomes == {"tests/test_a.py::test_a": "passed"}


def test_the_checkouts_own_configuration_is_used(tmp_path: Path) -> None:
    work = _write(
        tmp_path / "work",
        {
            "pyproject.toml": '[tool.pytest.ini_options]\nmarkers = ["slow: slow"]\naddopts = "--strict-markers"\n',
            "tests/test_a.py": "import pytest\n\n@pytest.mark.slow\ndef test_a():\n    pass\n",
        },
    )
    run = run_tests(PYTHON, work, COMMAND, ["tests/test_a.py::test_a"], tmp_path / "report", POLICY)
    assert run.outcomes == {"tests/test_a.py::test_a": "passed"}


def test_configuration_beside_the_tests_is_ignored(tmp_path: Path) -> None:
    """A pytest.ini a patch adds next to the tests must not switch on a plugin that forges reports."""
    work = _write(
        tmp_path / "work",
        {
            "tests/pytest.ini": "[pytest]\naddopts = -p tests.forge\n",
            "tests/__init__.py": "",
            "tests/forge.py": "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
            "def pytest_runtest_makereport(item, call):\n    out = yield\n    out.get_result().outcome = 'passed'\n",
            "tests/test_a.py": "def test_a():\n    assert False\n",
        },
    )
    run = run_tests(PYTHON, work, COMMAND, ["tests/test_a.py::test_a"], tmp_path / "report", POLICY)
    assert run.outcomes == {"tests/test_a.py::test_a": "failed"}


FORGER = """
import atexit, re, sys

def _strip_failures():
    for arg in sys.argv:
        path = arg.split("=", 1)[-1]
        if path.endswith((".xml", ".fifo")):
            with open(path, "w") as out:
                out.write('<testsuites><testsuite name="pytest" tests="1">'
                          '<testcase classname="tests.test_a" name="test_a" file="tests/test_a.py"/>'
                          '</testsuite></testsuites>')

atexit.register(_strip_failures)
"""


def test_a_report_rewritten_after_pytest_wrote_it_is_not_read_as_a_pass(tmp_path: Path) -> None:
    """Code under test can register an atexit hook that rewrites the report once pytest has
    written it; the harness takes the report as it is written, so the forgery is refused."""
    work = _write(
        tmp_path / "work",
        {
            "forge.py": FORGER,
            "tests/test_a.py": "import forge\n\ndef test_a():\n    assert False\n",
        },
    )
    run = run_tests(PYTHON, work, COMMAND, ["tests/test_a.py::test_a"], tmp_path / "report", POLICY)
    assert run.status == "error"
    assert "junk after document element" in run.reason  # pytest's report, then the forgery
    assert run.outcomes == {}


def test_one_file_that_fails_to_import_hides_no_other_file(tmp_path: Path) -> None:
    """pytest stops the whole session at a collection error unless told to go on."""
    work = _write(
        tmp_path / "work",
        {
            "tests/test_a.py": "import not_a_module_anywhere\n",
            "tests/sub/test_b.py": "def test_b():\n    pass\n",
        },
    )
    ids = ["tests/test_a.py::test_a", "tests/sub/test_b.py::test_b"]
    run = run_tests(PYTHON, work, COMMAND, ids, tmp_path / "r", POLICY)
    assert run.status == "ok"
    assert run.outcomes == {"tests/test_a.py": "error", "tests/sub/test_b.py::test_b": "passed"}


def test_a_conftest_that_aborts_the_session_costs_only_its_own_files(tmp_path: Path) -> None:
    """An examples/ conftest importing an uninstalled package makes pytest exit 4 before collecting
    anything; splitting the selection keeps every other file's results, in a bounded number of runs."""
    files = {f"tests/test_{n}.py": f"def test_{n}():\n    pass\n" for n in range(6)}
    files |= {
        "examples/conftest.py": "import no_such_package_installed\n",
        "examples/test_e.py": "def test_e():\n    pass\n",
    }
    work = _write(tmp_path / "work", files)
    selected = sorted(p for p in files if "/test_" in p)
    sessions: list[int] = []

    def once(group: Sequence[str]) -> TestRun:
        sessions.append(len(group))
        return run_tests(PYTHON, work, COMMAND, group, tmp_path / "r", POLICY)

    outcomes = run_isolating(once, selected)
    assert outcomes == {
        "examples/test_e.py": "error",
        **{f"tests/test_{n}.py::test_{n}": "passed" for n in range(6)},
    }
    assert len(sessions) <= 1 + 2 * 3  # one file of seven: about 2 log2(7) more sessions
    # a state where every session breaks stays bounded by the budget
    sessions.clear()
    broken = run_isolating(once, ["examples/test_e.py"] * 8, budget=4)
    assert set(broken) == {"examples/test_e.py"} and len(sessions) == 5


_XPASS_HIDDEN = """
import pytest

pytestmark = [pytest.mark.slow]


@pytest.mark.xfail(reason="decorator", strict=False)
def test_decorated():
    pass


@pytest.mark.xfail(strict=True)
def test_strict():
    pass


@pytest.mark.xfail(run=False)
def test_not_run():
    pass


@pytest.mark.parametrize("v", [1, pytest.param(2, marks=pytest.mark.xfail)])
def test_param(v):
    pass


@pytest.mark.xfail
class TestMarked:
    def test_in_class(self):
        pass


class TestAttribute:
    pytestmark = pytest.mark.xfail

    def test_in_class(self):
        pass


def test_marked_by_hook():
    pass


def test_marked_by_fixture(lenient):
    pass


def test_marked_by_product_code(request):
    import product

    product.mark(request.node)


@pytest.mark.xfail(strict=True)
def test_strict_made_lenient():
    pass
"""
_XPASS_CONFTEST = """
import pytest


@pytest.fixture
def lenient(request):
    request.applymarker(pytest.mark.xfail(strict=False))


def pytest_collection_modifyitems(items):
    for item in items:
        if item.name == "test_marked_by_hook":
            item.add_marker(pytest.mark.xfail(strict=False))
        if item.name == "test_strict_made_lenient":
            item.add_marker(pytest.mark.xfail(strict=False), append=False)
"""


def test_the_plugin_tells_whose_xfail_mark_a_non_strict_xpass_has(tmp_path: Path) -> None:
    """Every way an xfail mark reaches a test (issue 9, rule 1): declared in the hidden test file
    (decorator, class decorator or attribute, module ``pytestmark``, ``pytest.param`` marks) keeps
    a non-strict XPASS a pass; added at run time (a collection hook, a fixture, product code, a
    non-strict mark put before a strict one) or in a file that is not a hidden test makes it
    ``xpassed``. A strict XPASS stays a failure and ``run=False`` an XFAIL."""
    work = _write(
        tmp_path / "work",
        {
            "conftest.py": _XPASS_CONFTEST,
            "product.py": "import pytest\n\n\ndef mark(node):\n"
            "    node.add_marker(pytest.mark.xfail(strict=False))\n",
            "tests/test_hidden.py": _XPASS_HIDDEN,
            "tests/test_module.py": "import pytest\n\npytestmark = pytest.mark.xfail\n\n\n"
            "def test_m():\n    pass\n",
            "tests/test_other.py": "import pytest\n\n\n@pytest.mark.xfail\ndef test_o():\n    pass\n",
        },
    )
    hidden = ["tests/test_hidden.py", "tests/test_module.py"]
    command, policy, tools = graded_grant(COMMAND, hidden, tmp_path / "r", POLICY)
    run = run_tests(PYTHON, work, command, None, tmp_path / "r", policy, tool_path=tools)
    h = "tests/test_hidden.py::"
    assert run.outcomes == {
        f"{h}test_decorated": "passed",
        f"{h}test_strict": "failed",
        f"{h}test_not_run": "xfailed",
        f"{h}test_param[1]": "passed",
        f"{h}test_param[2]": "passed",
        f"{h}TestMarked::test_in_class": "passed",
        f"{h}TestAttribute::test_in_class": "passed",
        f"{h}test_marked_by_hook": "xpassed",
        f"{h}test_marked_by_fixture": "xpassed",
        f"{h}test_marked_by_product_code": "xpassed",
        f"{h}test_strict_made_lenient": "xpassed",
        "tests/test_module.py::test_m": "passed",
        "tests/test_other.py::test_o": "xpassed",
    }
    # without the list of hidden files (the regression runs), nothing changes: XPASS is a pass
    plain = run_tests(PYTHON, work, COMMAND, None, tmp_path / "p", POLICY)
    assert plain.outcomes[f"{h}test_marked_by_hook"] == "passed"
    assert plain.outcomes[f"{h}test_strict_made_lenient"] == "passed"
    assert plain.outcomes[f"{h}test_strict"] == "failed"
