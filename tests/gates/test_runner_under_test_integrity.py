"""Gate I when the repository is the test runner (``[oracles] runner_under_test``).

With the runner under test the guard trusts the checkout's ``pytest``/``_pytest``/``py`` as the
runner, so it can no longer see a candidate changing how verdicts are made. Gate I is the
compensating control: a candidate must not pass by editing the runner's verdict-producing
files (the JUnit writer, the report, the outcome), unless the reference edits that same file.
Each case is a real git repository holding a runner-shaped tree and a real candidate commit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repogate import git
from repogate.contract import Permissions
from repogate.gates.integrity import check_integrity
from repogate.gates.runner_files import holds_runner, marker_paths, runner_module
from repogate.receipt import Observation

FILES = {
    "src/_pytest/__init__.py": "",
    "src/_pytest/junitxml.py": "def outcome(report):\n    return report.outcome\n",
    "src/_pytest/logging.py": "DEFAULT_LOG_FORMAT = '%(message)s'\n",
    "src/_pytest/config/__init__.py": "ADDOPTS = ''\n",
    "src/pytest/__init__.py": "from _pytest import junitxml\n",
    "src/helper.py": "X = 1\n",
    "testing/test_x.py": "def test_x():\n    assert True\n",
}
EVERYTHING = Permissions(editable=("**",))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "pytest"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git.init_repo(root)
    git.commit_all(root, "base")
    return root


def _gate(
    repo: Path, edits: dict[str, str], *, runner: bool = True, reference: tuple[str, ...] = ()
) -> Observation:
    base = git.rev_parse(repo, "HEAD")
    for path, text in edits.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    candidate = git.commit_candidate(repo, "candidate")
    return check_integrity(
        git.changed_paths(repo, base, candidate),
        EVERYTHING,
        lambda rev, path: git.show_file(repo, rev, path),
        base,
        candidate,
        patch=git.diff_binary(repo, base, candidate),
        runner_under_test=runner,
        reference_paths=frozenset(reference),
    )


def _oracle(seen: Observation) -> tuple[str, str]:
    check = next(c for c in seen.checks if c.name == "oracle_untouched")
    return check.status, check.detail


FORGED_JUNIT = "def outcome(report):\n    return 'passed'\n"


def test_an_edit_of_the_junit_writer_that_turns_failures_into_passes_is_rejected(
    repo: Path,
) -> None:
    """A candidate must not pass by making the runner under test report every test as passed."""
    status, detail = _oracle(_gate(repo, {"src/_pytest/junitxml.py": FORGED_JUNIT}))
    assert status == "failed"
    assert "src/_pytest/junitxml.py (the runner's verdict-producing file" in detail


def test_the_same_edit_is_the_task_when_the_reference_edits_that_file(repo: Path) -> None:
    """pytest-7432 fixes skipping.py: an edit of a verdict file the reference edits is allowed, recorded."""
    seen = _gate(
        repo, {"src/_pytest/junitxml.py": FORGED_JUNIT}, reference=("src/_pytest/junitxml.py",)
    )
    assert _oracle(seen)[0] == "passed"
    assert seen.details["runner_under_test"] is True
    assert seen.details["runner_edits_allowed"] == [
        "src/_pytest/junitxml.py (the runner's verdict-producing file; the reference edits it)"
    ]


def test_the_configuration_package_is_a_verdict_file_too(repo: Path) -> None:
    """Another shape: ``_pytest/config/**`` decides which plugins load (``-p``, addopts)."""
    status, detail = _oracle(
        _gate(repo, {"src/_pytest/config/__init__.py": "ADDOPTS = '-p no:junitxml'\n"})
    )
    assert status == "failed" and "src/_pytest/config/__init__.py" in detail


def test_a_report_rewriting_line_in_another_runner_file_is_rejected(repo: Path) -> None:
    """Another shape: the logging plugin (not a verdict file) rewriting a report's outcome."""
    hook = "def pytest_runtest_makereport(item, call):\n    call.outcome = 'passed'\n"
    status, detail = _oracle(_gate(repo, {"src/_pytest/logging.py": hook}))
    assert status == "failed"
    assert "src/_pytest/logging.py (the runner under test: reaches its report" in detail


def test_an_ordinary_fix_of_a_runner_plugin_is_allowed(repo: Path) -> None:
    """pytest-5227's shape: the log format of the logging plugin changes; nothing reaches the report."""
    fix = "DEFAULT_LOG_FORMAT = '%(levelname)-8s %(name)s:%(filename)s:%(lineno)d %(message)s'\n"
    seen = _gate(repo, {"src/_pytest/logging.py": fix})
    assert _oracle(seen) == ("passed", "")


def test_without_the_statement_runner_files_in_the_code_are_judged_as_before(repo: Path) -> None:
    """A repository not declared the runner keeps the usual rule: code naming ``_pytest`` is refused."""
    status, detail = _oracle(
        _gate(repo, {"src/helper.py": "from _pytest import junitxml\n"}, runner=False)
    )
    assert status == "failed" and "reaches into the test runner" in detail


def test_a_module_outside_the_runner_still_may_not_reach_into_it(repo: Path) -> None:
    """The trust is the runner's files only: another module of the checkout naming ``_pytest``."""
    status, detail = _oracle(_gate(repo, {"src/helper.py": "from _pytest import junitxml\n"}))
    assert status == "failed" and "src/helper.py (reaches into the test runner" in detail


@pytest.mark.parametrize("path", ["pytest.py", "_pytest/logging.py", "py.py"])
def test_a_second_runner_at_the_top_is_rejected(repo: Path, path: str) -> None:
    """A new runner module beside ``src/`` is imported first by ``python -m pytest``: the candidate's runner."""
    status, detail = _oracle(_gate(repo, {path: "def main():\n    return 0\n"}))
    assert status == "failed"
    assert f"{path} (a runner module where the base holds none" in detail


def test_a_new_module_in_the_runners_own_package_is_an_ordinary_edit(repo: Path) -> None:
    seen = _gate(repo, {"src/_pytest/newplugin.py": "VALUE = 1\n"})
    assert _oracle(seen) == ("passed", "")


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("src/_pytest/junitxml.py", "_pytest/junitxml.py"),
        ("_pytest/junitxml.py", "_pytest/junitxml.py"),
        ("src/pytest.py", "pytest.py"),
        ("src/py.py", "py.py"),
        ("src/helper.py", None),
        ("testing/test_junitxml.py", None),
        ("src/pytest_foo/x.py", None),
    ],
)
def test_runner_files_are_told_below_their_import_root(path: str, module: str | None) -> None:
    assert runner_module(path) == module


def _tree(tmp_path: Path, paths: tuple[str, ...]) -> bool:
    root = tmp_path / "tree"
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("")
    git.init_repo(root)
    git.commit_all(root, "base")
    return holds_runner(git.existing_paths(root, "HEAD", marker_paths()))


@pytest.mark.parametrize(
    ("paths", "runner"),
    [
        (("src/_pytest/__init__.py", "src/pytest/__init__.py"), True),  # pytest 5.4 and later
        (("src/_pytest/__init__.py", "src/pytest.py"), True),  # pytest 3.5 to 5.3
        (("_pytest/__init__.py", "pytest.py"), True),  # before the src layout
        (("src/_pytest/__init__.py",), False),  # a vendored copy of the internals alone
        (("src/pytest_plugin/__init__.py", "pytest.ini"), False),  # a plugin project
    ],
)
def test_the_import_tells_the_runner_from_the_base_tree(
    tmp_path: Path, paths: tuple[str, ...], runner: bool
) -> None:
    """Detected from the base tree (never the repository's name), in three eras' layouts."""
    assert _tree(tmp_path, paths) is runner
