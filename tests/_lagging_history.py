"""Repositories shaped like imported SWE-bench instances whose base lags the fix's landing.

An instance's base is its pull request's base; the fix lands later, after other commits of the
branch (the *lag*), and the maintainers' next commits are written on top of the landing. Each
builder makes one shape of the lag (history on ``main``, oldest first):

- ``lag-elsewhere``: base; the pull request branches off; ``Add util.two`` (another module, its
  test, ``setup.py``); the pull request cherry-picked (it landed rebased); a follow-up adding
  ``c()`` to the fix's file, built on ``util.two``, with its test (flask-5063's kind);
- ``same-file``: base; ``b steps by two`` (the fix's own file, away from the fix); the pull
  request cherry-picked; a follow-up changing the lines the lag changed;
- ``merge-landing``: base; ``Add util.two, version 1.1``; the pull request's merge; a follow-up
  changing the fix's file and ``setup.py`` again (flask-4045's kind).

The fix: ``a()`` clamps at zero (``pkg/m.py``), FAIL_TO_PASS ``tests/test_m.py::test_a_negative``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from _lifecycle_git import commit, diff, git, new_repo

M = (
    "def a(x):\n    return x\n"
    + "\n" * 2
    + "".join(f"K{i} = {i}\n" for i in range(8))
    + ("\n\ndef b(x):\n    return x + 1\n")
)
TEST_M = (
    "from pkg.m import a, b\n\n\ndef test_a():\n    assert a(2) == 2\n\n\n"
    "def test_b():\n    assert b(1) >= 2\n"
)
FIX_TEST = "\n\ndef test_a_negative():\n    assert a(-3) == 0\n"
BASE = {
    "pkg/__init__.py": "",
    "pkg/m.py": M,
    "pkg/util.py": "def one():\n    return 1\n",
    "setup.py": 'VERSION = "1.0"\n',
    "tests/test_m.py": TEST_M,
    "tests/test_util.py": "from pkg.util import one\n\n\ndef test_one():\n    assert one() == 1\n",
}
FIXED = {
    "pkg/m.py": M.replace("    return x\n", "    return max(x, 0)\n", 1),
    "tests/test_m.py": TEST_M + FIX_TEST,
}
LAG = {  # unrelated to the fix: another module, its test, the version
    "pkg/util.py": "def one():\n    return 1\n\n\ndef two():\n    return 2\n",
    "tests/test_util.py": BASE["tests/test_util.py"]
    + "\n\ndef test_two():\n    assert two() == 2\n",
    "setup.py": 'VERSION = "1.1"\n',
}
LAG["tests/test_util.py"] = LAG["tests/test_util.py"].replace("import one", "import one, two")


def pull_request(repo: Path, base: str) -> str:
    """The pull request: one commit on a branch from the base."""
    git(repo, "checkout", "-q", "-b", "pr", base)
    fix = commit(repo, FIXED, "Clamp a() at zero")
    git(repo, "checkout", "-q", "main")
    return fix


def _lag_elsewhere(repo: Path) -> tuple[str, str]:
    """Build the shape at ``repo``; return the base and the pull request's commit."""
    repo, base = new_repo(repo, BASE)
    pr = pull_request(repo, base)
    commit(repo, LAG, "Add util.two")
    git(repo, "cherry-pick", pr)  # the pull request rebased onto the branch as it landed
    m = FIXED["pkg/m.py"] + "\n\ndef c(x):\n    return a(x) * two()\n"
    later = {
        "pkg/m.py": "from pkg.util import two\n\n\n" + m,
        "tests/test_m.py": FIXED["tests/test_m.py"].replace("import a, b", "import a, b, c")
        + "\n\ndef test_c():\n    assert c(2) == 4\n",
    }
    commit(repo, later, "Add c, built on util.two")
    return base, pr


def _same_file(repo: Path) -> tuple[str, str]:
    """Build the shape at ``repo``; return the base and the pull request's commit."""
    repo, base = new_repo(repo, BASE)
    pr = pull_request(repo, base)
    commit(repo, {"pkg/m.py": M.replace("x + 1", "x + 2")}, "b steps by two")
    git(repo, "cherry-pick", pr)
    landed = FIXED["pkg/m.py"].replace("x + 1", "x + 2")
    commit(repo, {"pkg/m.py": landed.replace("x + 2", "x + 3")}, "b steps by three")
    return base, pr


def _merge_landing(repo: Path) -> tuple[str, str]:
    """Build the shape at ``repo``; return the base and the pull request's commit."""
    repo, base = new_repo(repo, BASE)
    pr = pull_request(repo, base)
    commit(repo, LAG, "Add util.two, version 1.1")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #2 from pr", "pr")
    later = {"pkg/m.py": FIXED["pkg/m.py"] + "\n\ndef d(x):\n    return -x\n"}
    commit(repo, {**later, "setup.py": 'VERSION = "1.2"\n'}, "Add d, version 1.2")
    return base, pr


SHAPES: dict[str, Callable[[Path], tuple[str, str]]] = {
    "lag-elsewhere": _lag_elsewhere,
    "same-file": _same_file,
    "merge-landing": _merge_landing,
}


def instance(name: str, repo: Path, base: str, pr: str) -> dict[str, object]:
    """The SWE-bench instance of shape ``name``: the pull request's diff at the base."""
    change = diff(repo, base, pr).decode()
    sections = ["diff --git" + s for s in change.split("diff --git")[1:]]
    return {
        "instance_id": f"acme__{name}-1",
        "repo": f"acme/{name}",
        "base_commit": base,
        "patch": "".join(s for s in sections if " b/tests/" not in s.splitlines()[0]),
        "test_patch": "".join(s for s in sections if " b/tests/" in s.splitlines()[0]),
        "FAIL_TO_PASS": ["tests/test_m.py::test_a_negative"],
        "PASS_TO_PASS": ["tests/test_m.py::test_a", "tests/test_m.py::test_b"],
        "version": "1.0",
        "problem_statement": "a() must not return a negative number",
        "created_at": "2024-05-01T00:00:00Z",
    }
