"""The code under test is the candidate's, however the recipe installs the project.

Threat: with a non-editable install (``uv pip install .``) the tests import the copy of the
project built from the base into site-packages, so the reference is rejected as the agent's
failure and a patch that breaks a PASS_TO_PASS test passes it (turn-2 case
``tests-import-an-installed-copy``). The environment must serve the checkout under test, or the
base-state check refuses it as an evaluator error naming the module and where it came from.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _task import check_detail, make_task, scripted, verdicts
from conftest import run_json
from repogate.oracles.imports import checkout_modules, imported_modules

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef neg(a):\n    return -a\n"
FIXED = "def add(a, b):\n    return a + b\n\n\ndef neg(a):\n    return -a\n"
BROKEN = "def add(a, b):\n    return a + b\n\n\ndef neg(a):\n    return a\n"
TEST_NEG = "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n"
TEST_ADD = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
HATCH = '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
SETUPTOOLS = (
    '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
)
PROJECT = '[project]\nname = "calc"\nversion = "1.0.0"\n'

# layout name -> (pyproject.toml, folder holding the package calc)
LAYOUTS = {
    "hatch-packages-mapping": (
        HATCH + PROJECT + '[tool.hatch.build.targets.wheel]\npackages = ["lib/calc"]\n',
        "lib/calc",
    ),
    "setuptools-src-layout": (SETUPTOOLS + PROJECT, "src/calc"),
    "setuptools-package-dir": (
        SETUPTOOLS + PROJECT + '[tool.setuptools]\npackage-dir = {"" = "code"}\n',
        "code/calc",
    ),
    "flat-layout": (HATCH + PROJECT, "calc"),
}


def _task(tmp_path: Path, pyproject: str, folder: str, install: str) -> Path:
    contract, _, _ = make_task(
        tmp_path,
        {
            "pyproject.toml": pyproject,
            f"{folder}/__init__.py": BUGGY,
            "tests/test_neg.py": TEST_NEG,
        },
        {f"{folder}/__init__.py": FIXED, "tests/test_add.py": TEST_ADD},
        install=["uv pip install pytest", install],
        fail_to_pass=["tests/test_add.py::test_add"],
        pass_to_pass=["tests/test_neg.py::test_neg"],
        editable=[f"{folder.split('/')[0]}/**"],
    )
    return contract


@pytest.mark.slow
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_non_editable_install_grades_the_candidates_code(
    layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gold is accepted and a patch breaking ``neg`` rejected, whatever the layout."""
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    pyproject, folder = LAYOUTS[layout]
    contract = _task(tmp_path, pyproject, folder, "uv pip install .")
    breaks = scripted(tmp_path, "breaks-neg", {f"{folder}/__init__.py": BROKEN})
    out = tmp_path / "run"
    _code, rows = run_json(
        capsys, str(contract), "--agent", "gold", "--agent", breaks, "--out", str(out)
    )
    assert verdicts(rows) == {"gold": "accepted", "breaks-neg": "rejected"}
    breaking = next(r for r in rows if "breaks-neg" in str(r["agent"]))
    assert breaking["failed"] == ["regression_tests_passed"]


@pytest.mark.slow
def test_a_package_the_checkout_holds_under_another_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``package-dir = {calc = "source"}``: no import root serves the candidate's ``calc``."""
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    pyproject = (
        SETUPTOOLS + PROJECT + '[tool.setuptools]\npackages = ["calc"]\n'
        'package-dir = {calc = "source"}\n'
    )
    contract = _task(tmp_path, pyproject, "source", "uv pip install .")
    out = tmp_path / "run"
    _code, rows = run_json(capsys, str(contract), "--agent", "gold", "--out", str(out))
    assert rows[0]["outcome"] == "error"
    detail = check_detail(out, "environment_reproduced")
    assert "import calc from" in detail
    assert "site-packages/calc" in detail


@pytest.mark.slow
def test_a_copy_the_recipe_planted_is_an_evaluator_error_naming_module_and_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy with no record of where it came from is found where the tests import it."""
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    plant = (
        'python -c "import shutil, sysconfig; '
        "shutil.copytree('src/calc', sysconfig.get_paths()['purelib'] + '/calc')\""
    )
    contract = _task(tmp_path, SETUPTOOLS + PROJECT, "src/calc", plant)
    out = tmp_path / "run"
    _code, rows = run_json(capsys, str(contract), "--agent", "gold", "--out", str(out))
    assert rows[0]["outcome"] == "error"
    assert rows[0]["failed"] == []
    detail = check_detail(out, "environment_reproduced")
    assert "the tests import calc from" in detail
    assert "site-packages/calc/__init__.py" in detail


def test_project_modules_are_the_checkouts_top_level_ones(tmp_path: Path) -> None:
    """A vendored module inside a package is no project module; a folder under lib/ is."""
    files = [
        "lib/calc/__init__.py",
        "src/pkg/__init__.py",
        "src/pkg/_vendor/__init__.py",
        "src/pkg/_vendor/six.py",
        "tool.py",
        "build/lib/stale/__init__.py",
        "tests/test_x.py",
    ]
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert checkout_modules(tmp_path) == {"calc", "pkg", "tool", "tests", "test_x"}
    (tmp_path / "tests/test_x.py").write_text(
        "import calc.sub\nfrom pkg import a\nfrom . import local\nimport os, six as s\n"
    )
    assert imported_modules([tmp_path / "tests/test_x.py"]) == {"calc", "pkg", "os", "six"}


@pytest.mark.slow
def test_a_test_folder_named_like_the_standard_library_is_no_installed_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """click keeps type-checking samples in ``tests/typing/`` (no ``__init__.py``): that folder
    counted as the checkout's module ``typing``, so every task whose tests import ``typing``
    was invalid ("the tests import typing from .../typing.py, outside the checkout"); 4 of 9
    mined click candidates were rejected (new user). A folder without ``__init__.py`` is a
    namespace portion, which never shadows the standard library's module."""
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    typed = "from typing import List\n\nfrom calc import add\n\n\ndef test_add() -> None:\n"
    typed += "    values: List[int] = [add(2, 3)]\n    assert values == [5]\n"
    contract, _, _ = make_task(
        tmp_path,
        {
            "pyproject.toml": HATCH + PROJECT,
            "calc/__init__.py": BUGGY,
            "tests/test_neg.py": TEST_NEG,
            "tests/typing/sample.py": "from typing import reveal_type\n",
        },
        {"calc/__init__.py": FIXED, "tests/test_add.py": typed},
        install=["uv pip install pytest", "uv pip install -e ."],
        fail_to_pass=["tests/test_add.py::test_add"],
        pass_to_pass=["tests/test_neg.py::test_neg"],
        editable=["calc/**"],
    )
    out = tmp_path / "run"
    _code, rows = run_json(capsys, str(contract), "--agent", "gold", "--out", str(out))
    assert verdicts(rows) == {"gold": "accepted"}, check_detail(out, "environment_reproduced")
