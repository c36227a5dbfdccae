"""A small repository with known history for the task-supply tests, and SWE-bench instances of it.

History (first parent, oldest first)::

    base      calc.add and its test
    sub       calc.sub + test_sub                 -> a task: F2P test_sub, P2P test_add
    docs      README only                         -> not a candidate (no code, no tests)
    negative  a comment in calc + a test that already passes at the base -> no_fail_to_pass
    mul       calc.mul + a test whose outcome alternates between runs    -> flaky
    div       calc.div + test_div + a CI file     -> the gold attempt edits the oracle (CI):
                                                     reference_not_accepted
"""

from __future__ import annotations

import json
from pathlib import Path

from repogate import git

ENV_MAP = """
[[recipe]]
repo = "{name}"
python = "3.11"
install = ["uv pip install pytest"]
"""

_CALC = "def add(a, b):\n    return a + b\n"
_TEST = "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n"


def _write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def build_history(repo: Path) -> dict[str, str]:
    """Build the repository at ``repo``; return each label's commit."""
    git.init_repo(repo)
    commits: dict[str, str] = {}
    calc = _CALC
    test = _TEST
    _write(repo, {"calc.py": calc, "tests/test_calc.py": test, "README.md": "calc\n"})
    commits["base"] = git.commit_all(repo, "base: add")
    calc += "\n\ndef sub(a, b):\n    return a - b\n"
    test += "\n\ndef test_sub():\n    assert calc.sub(5, 3) == 2\n"
    _write(repo, {"calc.py": calc, "tests/test_calc.py": test})
    commits["sub"] = git.commit_all(repo, "Add calc.sub\n\nSubtraction, as asked in issue 1.")
    _write(repo, {"README.md": "calc: add and sub\n"})
    commits["docs"] = git.commit_all(repo, "docs")
    calc = "# integers and floats alike\n" + calc
    test += "\n\ndef test_add_negative():\n    assert calc.add(-1, -1) == -2\n"
    _write(repo, {"calc.py": calc, "tests/test_calc.py": test})
    commits["negative"] = git.commit_all(repo, "Test negative numbers")
    calc += "\n\ndef mul(a, b):\n    return a * b\n"
    flaky = (
        "from pathlib import Path\n\nimport calc\n\n\n"
        "def test_mul_sometimes():\n"
        "    counter = Path(__file__).with_name('runs.txt')\n"
        "    n = int(counter.read_text()) if counter.exists() else 0\n"
        "    counter.write_text(str(n + 1))\n"
        "    assert calc.mul(2, 3) == (6 if n % 2 == 0 else 7)\n"
    )
    _write(repo, {"calc.py": calc, "tests/test_mul.py": flaky})
    commits["mul"] = git.commit_all(repo, "Add calc.mul")
    calc += "\n\ndef div(a, b):\n    return a / b\n"
    test = "from calc import div\n" + test  # cannot be collected at the base
    test += "\n\ndef test_div():\n    assert div(6, 3) == 2\n"
    _write(
        repo,
        {"calc.py": calc, "tests/test_calc.py": test, ".github/workflows/ci.yml": "on: push\n"},
    )
    commits["div"] = git.commit_all(repo, "Add calc.div and CI")
    return commits


def diff(
    repo: Path, a: str, b: str, paths: tuple[str, ...] = (), exclude: tuple[str, ...] = ()
) -> str:
    """The diff of ``a..b`` as SWE-bench stores a patch (text)."""
    return git.diff_binary(repo, a, b, paths, exclude).decode()


def instance(repo: Path, commits: dict[str, str], /, **fields: object) -> dict[str, object]:
    """A valid SWE-bench instance of the ``sub`` commit; ``fields`` override."""
    row: dict[str, object] = {
        "instance_id": "acme__calc-1",
        "repo": "acme/calc",
        "base_commit": commits["base"],
        "patch": diff(repo, commits["base"], commits["sub"], exclude=("tests/",)),
        "test_patch": diff(repo, commits["base"], commits["sub"], paths=("tests/",)),
        "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_sub"]),
        "PASS_TO_PASS": ["tests/test_calc.py::test_add"],
        "version": "1.0",
        "problem_statement": "calc has no subtraction",
        "created_at": "2024-05-01T00:00:00Z",
    }
    row.update(fields)
    return row
