"""Regenerate the JUnit dialect fixtures: real reports of pytest 3.x to 8.x on one sample suite.

For each (pytest, CPython) pair of :data:`GENERATIONS` this makes a uv venv, installs that pytest,
runs the sample suite with the arguments repogate's runner passes (``-p no:cacheprovider
--continue-on-collection-errors -o junit_family=xunit1 --junitxml=...``) and writes two files
under ``tests/oracles/junit_dialects/``:

- ``pytest-<version>.xml``: the report that pytest version wrote (its ``timestamp``, ``time`` and
  ``hostname`` attributes are kept as written; the suite's folder and the interpreter's
  installation in failure texts are replaced by ``[suite]`` and ``[python]``: :func:`scrub`);
- ``pytest-<version>.json``: pytest's own verdict for every node id, taken from its own
  ``pytest_report_teststatus`` hook by a conftest plugin (category ``passed``, ``failed``,
  ``skipped``, ``xfailed``, ``xpassed``; a failure outside the call phase counts as ``error``, as
  pytest's terminal summary calls it), worst phase first.

The tests read both and require the JUnit reader to agree with pytest itself.

Usage: ``uv run python scripts/junit_dialects.py [VERSION ...]`` with the interpreters of
:data:`GENERATIONS` findable by ``uv venv -p`` (on PATH, or uv-managed).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

GENERATIONS = {
    "3.5.1": "3.6",
    "4.6.11": "3.7",
    "5.4.3": "3.8",
    "6.2.5": "3.9",
    "7.4.4": "3.11",
    "8.3.4": "3.12",
}
"""pytest version -> the CPython it runs on (one per major generation)."""

OUT = Path(__file__).resolve().parent.parent / "tests" / "oracles" / "junit_dialects"

SAMPLE = """\
import pytest


def test_pass():
    pass


def test_fail():
    assert 1 == 2


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup")


def test_setup_error(broken_setup):
    pass


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown")


def test_teardown_error(broken_teardown):
    pass


def test_skip_call():
    pytest.skip("not here")


@pytest.mark.skip(reason="marked")
def test_skip_mark():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail_mark():
    assert 0


def test_xfail_call():
    pytest.xfail("imperative")


@pytest.mark.xfail(raises=KeyError)
def test_xfail_wrong_raises():
    raise ValueError("not the declared exception")


@pytest.mark.xfail(reason="known bug")
def test_xpass():
    pass


@pytest.mark.xfail(reason="strict", strict=True)
def test_xpass_strict():
    pass


@pytest.mark.parametrize(
    "value",
    ["a b", "x::y", "cliapp.factory", " create_app2(\\"foo\\", \\"bar\\") ", "[nested]", 1.5],
)
def test_param(value):
    assert value != 1.5


class TestKind:
    def test_method(self):
        pass

    @pytest.mark.parametrize("n", [1, 2])
    def test_method_param(self, n):
        assert n == 1
"""

BROKEN = "import module_that_does_not_exist_anywhere\n\n\ndef test_never():\n    pass\n"

TRUTH_PLUGIN = """\
import json

_RANK = ["passed", "xpassed", "skipped", "xfailed", "error", "failed"]
_seen = {}


def _note(nodeid, category):
    old = _seen.get(nodeid)
    if old is None or _RANK.index(category) > _RANK.index(old):
        _seen[nodeid] = category


def pytest_runtest_logreport(report):
    hook = report_config.hook
    status = hook.pytest_report_teststatus(report=report, config=report_config)
    category = status[0] if isinstance(status, tuple) else status
    if not category:
        if report.when != "call" and report.passed:
            return
        category = report.outcome
    if category == "failed" and report.when != "call":
        category = "error"
    _note(report.nodeid, category)


def pytest_collectreport(report):
    if report.failed:
        _note(report.nodeid, "error")


def pytest_configure(config):
    global report_config
    report_config = config


def pytest_unconfigure(config):
    with open(config.getoption("truth_path"), "w") as out:
        json.dump(_seen, out, indent=1, sort_keys=True)


def pytest_addoption(parser):
    parser.addoption("--truth-path", dest="truth_path")
"""


def scrub(text: str, suite: Path, interpreter: Path) -> str:
    """``text`` with this machine's paths replaced: the suite's folder by ``[suite]``, the
    interpreter's installation by ``[python]`` (they appear only in failure texts, never in an
    attribute the reader uses)."""
    home = Path(
        subprocess.run(
            [str(interpreter), "-c", "import sys; print(sys.base_prefix)"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    return text.replace(str(suite), "[suite]").replace(str(home), "[python]")


def generate(version: str, python: str) -> None:
    """Write ``pytest-<version>.xml`` and ``.json`` (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        venv = root / "venv"
        subprocess.run(["uv", "venv", "-q", "-p", python, str(venv)], check=True)
        interpreter = venv / "bin" / "python"
        subprocess.run(
            ["uv", "pip", "install", "-q", "-p", str(interpreter), f"pytest=={version}"],
            check=True,
        )
        suite = root / "suite"
        suite.mkdir()
        (suite / "test_sample.py").write_text(SAMPLE)
        (suite / "test_broken.py").write_text(BROKEN)
        (suite / "conftest.py").write_text(TRUTH_PLUGIN)
        report, truth = root / "junit.xml", root / "truth.json"
        subprocess.run(
            [
                str(interpreter),
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "--continue-on-collection-errors",
                "-o",
                "junit_family=xunit1",
                f"--junitxml={report}",
                f"--truth-path={truth}",
                "test_sample.py",
                "test_broken.py",
            ],
            cwd=suite,
            check=False,
            stdout=subprocess.DEVNULL,
        )
        OUT.mkdir(parents=True, exist_ok=True)
        text = scrub(report.read_text(encoding="utf-8"), suite, interpreter)
        (OUT / f"pytest-{version}.xml").write_text(text, encoding="utf-8")
        seen = json.loads(truth.read_text())
        (OUT / f"pytest-{version}.json").write_text(json.dumps(seen, indent=1, sort_keys=True))


def main(argv: list[str]) -> int:
    """Regenerate the fixtures of the versions named (all of :data:`GENERATIONS` when none)."""
    for version in argv or list(GENERATIONS):
        generate(version, GENERATIONS[version])
        print(f"pytest {version} (CPython {GENERATIONS[version]}): written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
