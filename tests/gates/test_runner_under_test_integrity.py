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
    "src/_pytest/capture.py": "def readouterr():\n    return ''\n",
    "src/py.py": "import _pytest._py\n",
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


FIX_5227 = "DEFAULT_LOG_FORMAT = '%(levelname)-8s %(name)s:%(filename)s:%(lineno)d %(message)s'\n"


def test_an_ordinary_fix_of_a_runner_plugin_is_allowed(repo: Path) -> None:
    """pytest-5227's shape: the log format of the logging plugin changes, as the reference's does."""
    seen = _gate(repo, {"src/_pytest/logging.py": FIX_5227}, reference=("src/_pytest/logging.py",))
    assert _oracle(seen) == ("passed", "")
    assert seen.details["runner_edits_allowed"] == [
        "src/_pytest/logging.py (the runner's own file, trusted as the runner; the reference edits it)"
    ]


# Red team rt31: the guard trusts every file of the runner's packages, so an edit of a plugin
# that is not a verdict file, with no word the report scan knows, forged verdicts unseen: this
# line in ``capture.py`` (imported by every session) turns each failing test into a pass, as a
# real run of pytest 7.4.4's code under the guard showed (``test_fails`` read ``passed``).
NO_OP_RUNTEST = (
    "def readouterr():\n    return ''\n\n\n"
    "import _pytest.python as _pp\n\n_pp.Function.runtest = lambda self: None\n"
)


@pytest.mark.parametrize(
    ("edits", "path"),
    [
        ({"src/_pytest/capture.py": NO_OP_RUNTEST}, "src/_pytest/capture.py"),
        # a new plugin module, loaded by an entry point or an import of a runner file
        ({"src/_pytest/zzz.py": NO_OP_RUNTEST}, "src/_pytest/zzz.py"),
        # a new package beside a module of the same name: ``import _pytest.capture`` takes it
        ({"src/_pytest/capture/__init__.py": NO_OP_RUNTEST}, "src/_pytest/capture/__init__.py"),
        # the ``py`` shim pytest imports at start (``src/py.py`` from 7.2)
        ({"src/py.py": "import _pytest._py\n" + NO_OP_RUNTEST}, "src/py.py"),
        # a ``_pytest`` package at the top, first on ``sys.path``, extending itself to ``src``
        (
            {"_pytest/__init__.py": "__path__.append('src/_pytest')\n" + NO_OP_RUNTEST},
            "_pytest/__init__.py",
        ),
        # a conftest inside the runner's package (the hook globs exempt runner files)
        ({"src/_pytest/conftest.py": NO_OP_RUNTEST}, "src/_pytest/conftest.py"),
        # the build's generated file, committed: the harness then leaves the candidate's in place
        (
            {"src/_pytest/_version.py": "version = '7.4.4'\n" + NO_OP_RUNTEST},
            "src/_pytest/_version.py",
        ),
    ],
    ids=[
        "plugin-edit",
        "new-module",
        "package-shadowing-a-module",
        "py-shim",
        "top-level-package",
        "conftest-inside",
        "version-file",
    ],
)
def test_any_runner_file_the_reference_leaves_alone_is_refused(
    repo: Path, edits: dict[str, str], path: str
) -> None:
    """Not only the verdict files: any file the guard trusts as the runner can forge a verdict."""
    status, detail = _oracle(_gate(repo, edits, reference=("src/_pytest/logging.py",)))
    assert status == "failed", detail
    assert f"{path} (the runner's own file, trusted as the runner, the runner is under test)" in (
        detail
    )


def test_a_fix_in_a_runner_file_the_reference_does_not_edit_is_refused(repo: Path) -> None:
    """The price of failing closed: the same log-format fix, made where the reference does not."""
    status, detail = _oracle(_gate(repo, {"src/_pytest/logging.py": FIX_5227}))
    assert status == "failed"
    assert "src/_pytest/logging.py (the runner's own file" in detail


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("testing/conftest.py", "import _pytest.python\n"),
        ("tox.ini", "[pytest]\naddopts = -p zzz\n"),
        ("setup.cfg", "[tool:pytest]\naddopts = -p zzz\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-p zzz'\n"),
        ("zzz.pth", "import zzz\n"),
        ("src/pytest/__main__.py", "raise SystemExit(0)\n"),
    ],
)
def test_test_configuration_and_the_runners_entry_stay_refused(
    repo: Path, path: str, text: str
) -> None:
    """Held (rt31): configuration that loads a plugin, a ``.pth``, ``python -m pytest``'s entry."""
    status, detail = _oracle(_gate(repo, {path: text}))
    assert status == "failed" and path in detail


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


@pytest.mark.parametrize("added_by_reference", [False, True])
def test_a_new_module_in_the_runners_own_package_is_the_task_only_when_the_reference_adds_it(
    repo: Path, added_by_reference: bool
) -> None:
    """The guard trusts every runner module, a new one too (red team rt31: a new ``capture/``
    package is imported in place of ``capture.py``), so a new module is allowed only as the
    reference's own."""
    reference = ("src/_pytest/newplugin.py",) if added_by_reference else ()
    seen = _gate(repo, {"src/_pytest/newplugin.py": "VALUE = 1\n"}, reference=reference)
    assert _oracle(seen)[0] == ("passed" if added_by_reference else "failed")


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
