"""Every graded oracle is oracle, wherever it lives: doctests inside files the agent may edit.

Threat: a FAIL_TO_PASS doctest sits in ``calc/__init__.py``, which the agent may edit; an agent
that leaves ``add`` wrong and rewrites the doctest's expected output to match is accepted (turn-2
case ``graded-doctest-in-editable-file``). Graded text in editable files is taken from the hidden
tests' version, and a contract that grades such ids says so when it is loaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _task import make_task, run_rows, scripted, verdicts
from repogate.oracles.embedded import splice_docstring


def _module(
    add_op: str,
    mul_op: str,
    doc: str = '    """Return the sum.\n\n    >>> add(2, 3)\n    5\n    """\n',
) -> str:
    return (
        f"def add(a, b):\n{doc}    return a {add_op} b\n\n\n"
        f"def mul(a, b):\n    return a {mul_op} b\n\n\ndef neg(a):\n    return -a\n"
    )


TEST_NEG = "import unittest\n\nfrom calc import neg\n\n\nclass TestNeg(unittest.TestCase):\n    def test_neg(self):\n        self.assertEqual(neg(2), -2)\n"
TEST_MUL = "\n\nclass TestMul(unittest.TestCase):\n    def test_mul(self):\n        from calc import mul\n\n        self.assertEqual(mul(3, 4), 12)\n"
USAGE = ">>> from calc import mul\n>>> mul(2, 5)\n10\n"
IDS = [
    "calc/__init__.py::calc.add",
    "tests/test_ut.py::TestMul::test_mul",
    "docs/usage.txt::usage.txt",
]


@pytest.mark.slow
def test_graded_doctests_in_editable_files_are_graded_from_the_hidden_tests_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rewriting or deleting a graded doctest (in a module or a text file) does not pass it."""
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    contract, _, _ = make_task(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "1.0.0"\n',
            "calc/__init__.py": _module("-", "+"),
            "tests/test_ut.py": TEST_NEG,
            "docs/usage.txt": USAGE,
        },
        {"calc/__init__.py": _module("+", "*"), "tests/test_ut.py": TEST_NEG + TEST_MUL},
        install=["uv pip install pytest"],
        fail_to_pass=IDS,
        pass_to_pass=["tests/test_ut.py::TestNeg::test_neg"],
        editable=["calc/**", "docs/**"],
        oracles='test_command = "python -m pytest -p no:cacheprovider --doctest-modules '
        '--doctest-glob=*.txt"',
    )
    rewrite = scripted(
        tmp_path,
        "rewrites-doctest",
        {
            "calc/__init__.py": _module(
                "-", "*", '    """Return the sum.\n\n    >>> add(2, 3)\n    -1\n    """\n'
            )
        },
    )
    delete = scripted(
        tmp_path, "deletes-doctest", {"calc/__init__.py": _module("-", "*", '    """Sum."""\n')}
    )
    text = scripted(
        tmp_path,
        "rewrites-usage",
        {
            "calc/__init__.py": _module("+", "+"),
            "docs/usage.txt": ">>> from calc import mul\n>>> mul(2, 5)\n7\n",
        },
    )
    rows, err = run_rows(contract, ["gold", rewrite, delete, text], tmp_path / "run", capsys)
    assert verdicts(rows) == {
        "gold": "accepted",
        "rewrites-doctest": "rejected",
        "deletes-doctest": "rejected",
        "rewrites-usage": "rejected",
    }
    assert all(r["failed"] == ["requirements_recovered", "focused_tests_passed"] for r in rows[1:])
    assert err.count("grades ids inside files the agent may edit") == 1
    assert "calc/__init__.py::calc.add, docs/usage.txt::usage.txt" in err


def test_splice_keeps_the_candidates_code_and_takes_the_oracles_docstring() -> None:
    """Only the named object's docstring changes; a missing one is inserted, a method found."""
    oracle = (
        b'class K:\n    def m(self):\n        """>>> 1\n        1\n        """\n        return 1\n'
    )
    edited = (
        b'class K:\n    def m(self):\n        """>>> 1\n        2\n        """\n        return 2\n'
    )
    assert splice_docstring(edited, oracle, "mod.K.m") == oracle.replace(b"return 1", b"return 2")
    bare = b"class K:\n    def m(self):\n        return 2\n"
    assert splice_docstring(bare, oracle, "mod.K.m") == oracle.replace(b"return 1", b"return 2")
    assert splice_docstring(b"x = 1\n", oracle, "mod.K.m") is None  # the object is gone
    module = b'"""Top.\n\n>>> 1\n1\n"""\nx = 1\n'
    assert splice_docstring(b'"""Changed."""\nx = 2\n', module, "mod") == module.replace(
        b"x = 1", b"x = 2"
    )
