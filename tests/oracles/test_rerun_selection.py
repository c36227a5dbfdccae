"""What a rerun selects: the failing tests alone, spelled as they may be (issue 21, cost)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from repogate.oracles._pytest_plugin import selected
from repogate.oracles.junit import parse_junit
from repogate.oracles.reruns import selection


def test_a_rerun_selects_ids_not_files() -> None:
    assert selection(["t/a.py::test_x", "t/a.py::T::test_y[1-a b]"]) == [
        "t/a.py::test_x",
        "t/a.py::T::test_y[1-a b]",
    ]


def test_ids_pytest_cannot_be_asked_for_by_name_select_their_file() -> None:
    """A run-varying value differs in the next run, and a shortened path parameter names no
    real id: the file is the smallest selection that surely holds the test."""
    assert selection(["t/a.py::test_when[2026-12-01 10:11:12]", "t/b.py::test_f[/c.py]"]) == [
        "t/a.py",
        "t/b.py",
    ]


def test_the_plugin_matches_every_spelling() -> None:
    wanted = {"t.py::test_x[a", "t.py::TestA::test_b", "u.py"}
    assert selected("t.py::test_x[a b]", wanted)  # cut at the blank, as SWE-bench spells it
    assert selected("t.py::TestA::()::test_b", wanted)  # pytest 3's instance part
    assert selected("u.py::test_anything", wanted)  # a whole file
    assert not selected("t.py::test_x[ab]", wanted)
    assert not selected("t.py::TestA::test_c", wanted)


def test_a_real_pytest_runs_only_the_selected_tests(tmp_path: Path) -> None:
    (tmp_path / "test_s.py").write_text(
        "import pytest\n\n\n"
        "@pytest.mark.parametrize('v', ['cliapp.factory- create_app2()', 'plain', 'a b'])\n"
        "def test_locate(v):\n    pass\n\n\n"
        "class TestK:\n    def test_m(self):\n        pass\n\n    def test_n(self):\n        pass\n"
    )
    listing = tmp_path / "selected.txt"
    listing.write_text("test_s.py::test_locate[cliapp.factory-\ntest_s.py::TestK::test_n\n")
    report = tmp_path / "junit.xml"
    env = {**os.environ, "REPOGATE_SELECT": str(listing)}
    plugin = "repogate.oracles._pytest_plugin"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", plugin, "-p", "no:cacheprovider"]
    argv += ["-o", "junit_family=xunit1", f"--junitxml={report}", "test_s.py"]
    subprocess.run(
        argv,
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
    )
    assert sorted(parse_junit(report)) == [
        "test_s.py::TestK::test_n",
        "test_s.py::test_locate[cliapp.factory- create_app2()]",
    ]
