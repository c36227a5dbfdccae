"""Gate I and a candidate that carries the hidden tests byte for byte.

Threat still closed: a patch must not pass by editing the tests it is graded on; any change to a
hidden-test path that differs from the hidden tests is an oracle edit. What is allowed: a pull
request gated with its own tests as hidden tests (``repogate gate --fail-to-pass``) carries them
exactly, and the graded tree resets and reapplies them anyway, so nothing can be forged so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _task import make_task, scripted
from conftest import run_json

CALC = "def add(a, b):\n    return a {op} b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
BASE: dict[str, str | bytes | None] = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "1.0.0"\n',
    "calc/__init__.py": CALC.format(op="-"),
}
WEAK = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) is not None\n"


def test_carrying_the_hidden_tests_exactly_is_no_oracle_edit_but_changing_them_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cache"))
    contract, _, _ = make_task(
        tmp_path,
        BASE,
        {"calc/__init__.py": CALC.format(op="+"), "tests/test_add.py": TEST},
        install=["uv pip install pytest"],
        fail_to_pass=["tests/test_add.py::test_add"],
    )
    fixed = {"calc/__init__.py": CALC.format(op="+")}
    carries = scripted(tmp_path, "carries", {**fixed, "tests/test_add.py": TEST})
    weakens = scripted(tmp_path, "weakens", {**fixed, "tests/test_add.py": WEAK})
    code, rows = run_json(
        capsys, str(contract), "--agent", carries, "--agent", weakens, "--out", str(tmp_path / "r")
    )
    assert code == 0
    oracle = {}
    for row in rows:
        checks = row["checks"]
        assert isinstance(checks, list)
        found = next(c for c in checks if c["name"] == "oracle_untouched")
        oracle[Path(str(row["agent"])).stem] = found
    assert oracle["carries"]["status"] == "passed"
    assert oracle["weakens"]["status"] == "failed"
    assert "tests/test_add.py (touched by the hidden tests)" in oracle["weakens"]["detail"]
