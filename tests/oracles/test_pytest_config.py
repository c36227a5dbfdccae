"""Red team 2026-12-02: the pytest configuration the tests ran with was chosen by substring.

The harness names pytest's configuration file (``-c``). It took ``pyproject.toml`` when the
bytes ``[tool.pytest`` appeared anywhere in it (a comment did), skipped it silently past 4 MiB
(running with ``-c /dev/null``) and knew no ``pytest.toml``: in each shape the project's
``filterwarnings = error`` was dropped and a test that must fail on a warning passed.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from repogate.oracles.pytest_config import MAX_CONFIG_BYTES, ConfigError, choose_config
from repogate.oracles.pytest_runner import run_tests
from repogate.sandbox import SandboxPolicy

PYTHON = Path(sys.executable)
COMMAND = "python -m pytest -p no:cacheprovider"
POLICY = SandboxPolicy(timeout_s=60)
IDS = ["tests/test_w.py::test_w"]
WARNS = "import warnings\n\ndef test_w():\n    warnings.warn('old', DeprecationWarning)\n"
PROJECT = '[project]\nname = "w"\nversion = "1"\n'


def _work(root: Path, files: dict[str, str]) -> Path:
    for rel, text in {**files, "tests/test_w.py": WARNS}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _outcome(tmp_path: Path, files: dict[str, str]) -> tuple[str, dict[str, str], str]:
    work = _work(tmp_path / "work", files)
    run = run_tests(PYTHON, work, COMMAND, IDS, tmp_path / "r", POLICY)
    return run.status, dict(run.outcomes), run.reason


@pytest.mark.parametrize(
    "comment",
    [
        "# [tool.pytest.ini_options]\n",
        'note = "[tool.pytest.ini_options]"\n',
        "[tool.black]\n# see [tool.pytest.ini_options] in tox.ini\nline-length = 99\n",
    ],
    ids=["comment", "string", "comment-in-other-table"],
)
def test_a_pyproject_mentioning_pytest_does_not_hide_tox_ini(tmp_path: Path, comment: str) -> None:
    _, outcomes, reason = _outcome(
        tmp_path,
        {"tox.ini": "[pytest]\nfilterwarnings = error\n", "pyproject.toml": PROJECT + comment},
    )
    assert choose_config(tmp_path / "work") == "tox.ini"
    assert outcomes == {IDS[0]: "failed"}, reason  # the warning is an error, as configured


@pytest.mark.parametrize("where", ["pyproject.toml", "setup.cfg", "tox.ini"])
def test_a_padded_configuration_is_an_error_not_no_configuration(
    tmp_path: Path, where: str
) -> None:
    """Past the size limit the file cannot be judged: the run errors, never ``-c /dev/null``."""
    pad = "# pad\n" * (MAX_CONFIG_BYTES // 6 + 1)
    files = {
        "pyproject.toml": '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n',
        "setup.cfg": "[metadata]\nname = w\n",
        "tox.ini": "[tox]\nenvlist = py\n",
    }
    files[where] += pad
    status, outcomes, reason = _outcome(tmp_path, files)
    if where == "pyproject.toml":
        assert status == "error" and outcomes == {}
        assert "pyproject.toml is larger than 4 MiB" in reason
    else:  # past the chosen file: never read
        assert outcomes == {IDS[0]: "failed"}, reason


@pytest.mark.parametrize("name", ["pytest.toml", ".pytest.toml"])
def test_pytest_toml_is_the_configuration(tmp_path: Path, name: str) -> None:
    _, outcomes, reason = _outcome(
        tmp_path,
        {
            name: '[pytest]\nfilterwarnings = ["error"]\n',
            "tox.ini": "[pytest]\nfilterwarnings = ignore\n",
        },
    )
    assert choose_config(tmp_path / "work") == name
    assert outcomes == {IDS[0]: "failed"}, reason


def test_sections_are_parsed(tmp_path: Path) -> None:
    """An INI section counts only as a header; a TOML table only as a table; bad TOML errors."""
    work = tmp_path / "w"
    work.mkdir()
    (work / "setup.cfg").write_text("[metadata]\n# [tool:pytest]\n")
    assert choose_config(work) is None
    (work / "setup.cfg").write_text("[metadata]\n[tool:pytest]\naddopts = -q\n")
    assert choose_config(work) == "setup.cfg"
    (work / "pyproject.toml").write_text("[tool.pytest]\nminversion = '9'\n")
    assert choose_config(work) == "pyproject.toml"
    (work / "pyproject.toml").write_text("[tool.pytest\n")
    with pytest.raises(ConfigError, match=r"pyproject\.toml is not valid TOML"):
        choose_config(work)
