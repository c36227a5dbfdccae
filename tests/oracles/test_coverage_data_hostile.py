"""Red team rt32: the base suite's coverage data file is written by test-time code.

The coverage run grants the tests one folder of the evidence (``coverage-data``); the harness then
reads the SQLite file there with its own ``coverage``. What is in it is the base's test code's to
choose (the repository's own code at the base is untrusted): a file of coverage's schema with a
value of another type made the harness crash (``TypeError`` in coverage's reader), so every
attempt of the task was a harness crash instead of a verdict with "no coverage". A link planted
beside it (``-wal``, ``-shm``) is never followed (SQLite opens them with ``O_NOFOLLOW``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import coverage
import pytest

from repogate.oracles.regress_tools import read_coverage


def _data(folder: Path) -> Path:
    data_file = folder / "coverage.sqlite"
    data = coverage.CoverageData(basename=str(data_file))
    data.set_context("tests/test_a.py::test_a")
    data.add_lines({str(folder / "tree" / "a.py"): [1, 2]})
    data.write()
    children = {"spawning": [], "lingering": [], "outside": False}
    (folder / "coverage.sqlite.children.json").write_text(json.dumps(children))
    return data_file


def test_a_well_formed_file_is_read(tmp_path: Path) -> None:
    found = read_coverage(_data(tmp_path), tmp_path / "tree")
    assert found.tests == {"tests/test_a.py::test_a": {"a.py": (1, 2)}}
    assert (found.spawning, found.lingering, found.spawned_outside) == ((), (), False)


@pytest.mark.parametrize(
    "record",
    [
        None,  # the plugin wrote no record: what ran in child processes cannot be told
        "not json",
        '{"spawning": [1], "lingering": [], "outside": false}',
        '{"spawning": [], "lingering": [], "outside": "no"}',
        '{"spawning": []}',
        "[]",
    ],
)
def test_no_usable_record_of_child_processes_is_no_coverage(
    tmp_path: Path, record: str | None
) -> None:
    """Red team red37: a test running product code in a child process is in no context; without
    the plugin's record of such tests, selection cannot be trusted."""
    data_file = _data(tmp_path)
    sidecar = tmp_path / "coverage.sqlite.children.json"
    sidecar.unlink()
    if record is not None:
        sidecar.write_text(record)
    with pytest.raises(ValueError, match="child processes"):
        read_coverage(data_file, tmp_path / "tree")


def test_a_linked_record_of_child_processes_is_not_followed(tmp_path: Path) -> None:
    data_file = _data(tmp_path)
    sidecar = tmp_path / "coverage.sqlite.children.json"
    target = tmp_path / "elsewhere.json"
    target.write_text(sidecar.read_text())
    sidecar.unlink()
    sidecar.symlink_to(target)
    with pytest.raises(ValueError, match="child processes"):
        read_coverage(data_file, tmp_path / "tree")


@pytest.mark.parametrize(
    "sql",
    [
        "update line_bits set numbits = 12345",  # a number where coverage wants bytes
        "update line_bits set numbits = 'abc'",  # text where coverage wants bytes
        "update file set path = NULL",  # no path for a measured file
    ],
)
def test_a_value_of_another_type_is_no_coverage_not_a_crash(tmp_path: Path, sql: str) -> None:
    data_file = _data(tmp_path)
    with sqlite3.connect(data_file) as con:
        con.execute(sql)
    con.close()
    with pytest.raises((ValueError, coverage.CoverageException)):
        read_coverage(data_file, tmp_path / "tree")


def test_links_planted_beside_the_file_are_not_followed(tmp_path: Path) -> None:
    """Held: a WAL-mode file with its ``-wal`` and ``-shm`` linked to a user's files."""
    data_file = _data(tmp_path)
    with sqlite3.connect(data_file) as con:
        con.execute("pragma journal_mode=wal")
    con.close()
    targets = {}
    for suffix in ("-wal", "-shm"):
        target = tmp_path / f"users{suffix}"
        target.write_text("the user's file\n" * 10)
        targets[target] = target.read_bytes()
        sidecar = Path(f"{data_file}{suffix}")
        if sidecar.exists():
            sidecar.unlink()
        sidecar.symlink_to(target)
    with pytest.raises((ValueError, coverage.CoverageException)):
        read_coverage(data_file, tmp_path / "tree")
    assert {t: t.read_bytes() for t in targets} == targets
