"""The read trace: which repository files the graded tests open, and which the product code opens.

Threat: a graded test reads its expected values from a data file the agent may edit (turn-3 case
``graded-test-reads-package-data``); rewriting the table to the buggy output passed. Gate E traces,
inside the harness's own guarded test session, which files test code and product code open, so a
file only the tests read is oracle and one the product reads too stays the product's data.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from repogate.oracles.graded_reads import TracedReads, merge_records
from repogate.oracles.pytest_runner import run_tests
from repogate.sandbox import SandboxPolicy

PYTHON = Path(sys.executable)
COMMAND = "python -m pytest -p no:cacheprovider"
FILES = {
    "pkg/__init__.py": """
        import json
        from pathlib import Path

        FACTOR = json.loads((Path(__file__).parent / "data" / "factor.json").read_text())


        def load(path):
            with open(path, encoding="utf-8") as handle:
                return handle.read()
    """,
    "pkg/data/factor.json": '{"f": 2}\n',
    "pkg/data/table.json": '{"1": 2}\n',
    "pkg/data/cases.json": '{"2": 4}\n',
    "pkg/data/handed.txt": "x\n",
    "tests/conftest.py": """
        import json
        from pathlib import Path

        import pytest


        @pytest.fixture
        def cases():
            return json.loads((Path(__file__).parent.parent / "pkg/data/cases.json").read_text())
    """,
    "tests/test_a.py": """
        import json
        from pathlib import Path

        import pkg

        DATA = Path(pkg.__file__).parent / "data"
        TABLE = json.loads((DATA / "table.json").read_text())


        def test_table(cases):
            assert json.loads((DATA / "factor.json").read_text()) == pkg.FACTOR
            assert TABLE and cases
            assert pkg.load(DATA / "handed.txt") == "x\\n"
            (DATA.parent.parent / "written.txt").write_text("w")
    """,
}


def test_the_trace_puts_each_file_on_the_side_of_the_code_that_opened_it(tmp_path: Path) -> None:
    """Test code (module, module-level table, conftest fixture) vs product code, writes ignored."""
    work = tmp_path / "work"
    for rel, text in FILES.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    policy = SandboxPolicy(timeout_s=120)
    ids = ["tests/test_a.py::test_table"]
    run = run_tests(PYTHON, work, COMMAND, ids, tmp_path / "r", policy, trace_reads=True)
    assert run.status == "ok", run.reason
    assert run.outcomes == {"tests/test_a.py::test_table": "passed"}
    assert run.reads == TracedReads(
        test=("pkg/data/cases.json", "pkg/data/factor.json", "pkg/data/table.json"),
        product=("pkg/data/factor.json", "pkg/data/handed.txt"),
    )
    assert run.reads.test_only == ("pkg/data/cases.json", "pkg/data/table.json")
    assert run.reads.shared == ("pkg/data/factor.json",)
    plain = run_tests(PYTHON, work, COMMAND, ids, tmp_path / "plain", policy)
    assert plain.reads is None


def test_only_records_that_carry_a_trace_make_one() -> None:
    """A record without ``reads`` (an untraced session) is no trace; values not strings are dropped."""
    assert merge_records([{"finished": True}]) is None
    merged = merge_records(
        [{"reads": {"test": ["a", 3], "product": ["b"]}}, {"reads": {"test": ["c"]}}]
    )
    assert merged == TracedReads(test=("a", "c"), product=("b",))
    cut = merge_records([{"reads": {"test": [], "truncated": True}}])
    assert cut is not None and cut.truncated


def test_two_sessions_join_with_every_side_that_opened_each_file() -> None:
    """A file product code opened in one session (the base suite's plain rerun) is the product's
    data even when only test code opened it in the other: never read as oracle-only."""
    whole = TracedReads(test=("d/a.json", "d/b.json"), product=("d/c.json",))
    rerun = TracedReads(test=("d/e.json",), product=("d/a.json",), truncated=True)
    joined = whole.joined(rerun)
    assert joined == TracedReads(
        test=("d/a.json", "d/b.json", "d/e.json"), product=("d/a.json", "d/c.json"), truncated=True
    )
    assert joined.test_only == ("d/b.json", "d/e.json")
