"""A candidate's build configuration is not in the environment built once at the base, end to end.

Red team: the environment's install commands (``uv pip install -e .``) read the base's
``pyproject.toml``; a candidate changing what it declares is tested against the base's install.
Here a candidate bumps ``[project] version`` while its code reports the installed version: in the
base's environment the installed metadata still says ``1.0.0``, so the PASS_TO_PASS test pinning
it passed and the patch was accepted, though the candidate's own build reports ``2.0.0`` and fails
it. ``edits_permitted`` now refuses the edit, naming the file, what changed and the command that
read the base's copy. Real parts: a hatchling project, a uv environment, pytest, the pipeline.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _task import check_detail, make_task, scripted, verdicts
from conftest import run_json

pytestmark = pytest.mark.slow

PYPROJECT = (
    '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
    '[project]\nname = "calc"\nversion = "1.0.0"\n'
)
HEAD = 'from importlib.metadata import version\n\nVERSION = version("calc")\n\n\n'
BUGGY = HEAD + "def add(a, b):\n    return a - b\n\n\ndef neg(a):\n    return -a\n"
FIXED = HEAD + "def add(a, b):\n    return a + b\n\n\ndef neg(a):\n    return -a\n"
TEST_NEG = "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n"
TEST_VERSION = "from calc import VERSION\n\n\ndef test_version():\n    assert VERSION == '1.0.0'\n"
TEST_ADD = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
INSTALL = "uv pip install -e ."


def _calc_task(tmp_path: Path, build: dict[str, str], editable: list[str]) -> Path:
    """The calc task (fix ``add``; ``test_version`` pins the installed version) over ``build``."""
    contract, _, _ = make_task(
        tmp_path,
        {
            **build,
            "calc/__init__.py": BUGGY,
            "tests/test_neg.py": TEST_NEG,
            "tests/test_version.py": TEST_VERSION,
        },
        {"calc/__init__.py": FIXED, "tests/test_add.py": TEST_ADD},
        install=["uv pip install pytest", INSTALL],
        fail_to_pass=["tests/test_add.py::test_add"],
        pass_to_pass=["tests/test_neg.py::test_neg", "tests/test_version.py::test_version"],
        editable=editable,
    )
    return contract


def test_a_build_configuration_edit_is_refused_and_an_unread_table_is_not(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _calc_task(tmp_path, {"pyproject.toml": PYPROJECT}, ["calc/**", "pyproject.toml"])
    bumps = scripted(
        tmp_path,
        "bumps",
        {
            "calc/__init__.py": FIXED,
            "pyproject.toml": PYPROJECT.replace('"1.0.0"', '"2.0.0"'),
        },
    )
    lints = scripted(
        tmp_path,
        "lints",
        {
            "calc/__init__.py": FIXED,
            "pyproject.toml": PYPROJECT + "\n[tool.ruff]\nline-length = 99\n",
        },
    )
    for agent, out in ((bumps, "bumps-run"), (lints, "lints-run")):
        _code, rows = run_json(
            capsys, str(contract), "--agent", agent, "--out", str(tmp_path / out)
        )
        row = rows[0]
        if out == "bumps-run":
            # the tests passed in the base's install: only the build rule tells
            assert verdicts(rows) == {"bumps": "rejected"}, row
            assert row["failed"] == ["edits_permitted"], row
            assert check_detail(tmp_path / out, "edits_permitted") == (
                "pyproject.toml ([project] version changed: the environment was built once, at "
                f"the base, by `{INSTALL}` reading the base's pyproject.toml, so the candidate "
                "would be tested in an environment that does not match it; the harness does not "
                "rebuild the environment per candidate)"
            )
        else:
            assert verdicts(rows) == {"lints": "accepted"}, row


ABOUT_PYPROJECT = (
    '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
    '[project]\nname = "calc"\ndynamic = ["version"]\n\n'
    '[tool.hatch.version]\npath = "calc/__about__.py"\n'
)
ABOUT = '__version__ = "1.0.0"\n'


def test_a_version_bump_in_hatchlings_version_file_is_refused(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team: ``pyproject.toml`` is untouched, the version is read by hatchling from
    ``calc/__about__.py`` (``[tool.hatch.version] path``); the candidate bumps it there. The
    base's install still says ``1.0.0``, so the test pinning it passed and the bump was
    accepted. ``edits_permitted`` now names the file, the version change and the table naming
    it; a fix leaving the version file alone is accepted."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = _calc_task(
        tmp_path, {"pyproject.toml": ABOUT_PYPROJECT, "calc/__about__.py": ABOUT}, ["calc/**"]
    )
    bumps = scripted(
        tmp_path,
        "bumps",
        {"calc/__init__.py": FIXED, "calc/__about__.py": ABOUT.replace("1.0.0", "2.0.0")},
    )
    fixes = scripted(tmp_path, "fixes", {"calc/__init__.py": FIXED + "\n# add adds\n"})
    _code, rows = run_json(capsys, str(contract), "--agent", bumps, "--out", str(tmp_path / "b"))
    assert verdicts(rows) == {"bumps": "rejected"}, rows[0]
    assert rows[0]["failed"] == ["edits_permitted"], rows[0]
    assert check_detail(tmp_path / "b", "edits_permitted") == (
        "calc/__about__.py (the version in it changed, '1.0.0' -> '2.0.0'; pyproject.toml's "
        "[tool.hatch.version] path names it: the environment was built once, at the base, by "
        f"`{INSTALL}` reading the base's calc/__about__.py, so the candidate would be tested in "
        "an environment that does not match it; the harness does not rebuild the environment "
        "per candidate)"
    )
    _code, rows = run_json(capsys, str(contract), "--agent", fixes, "--out", str(tmp_path / "f"))
    assert verdicts(rows) == {"fixes": "accepted"}, rows[0]
