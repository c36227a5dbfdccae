"""The sentinel on imported SWE-bench instances: the replay is anchored where history continued.

An instance's base is the pull request's base; the fix lands later, after other commits of the
branch (the *lag*), and the maintainers' next commits were written on top of the landing. Replayed
from the base, those commits conflicted or failed on every attempt, the reference patch's too
(pallets__flask-4045, -4992, -5063 and pylint-dev__pylint-5859, issue 21). Each repository here is
shaped like one such instance, one shape of the lag each:

- ``lag-elsewhere``: the fix is committed on the branch after commits in other files; the
  follow-up's new test calls code the lag added (flask-5063's kind: a regression);
- ``same-file``: the lag changed the fix's own file, away from the fix; the follow-up changes the
  lines the lag changed (a conflict in the fix's file);
- ``merge-landing``: the fix reaches the branch with a merge commit, after a packaging change made
  meanwhile on the branch that the follow-up changes again (flask-4045's kind: ``setup.py``).

The reference patch (the gold attempt) must pass the sentinel on each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _lifecycle_git import commit, diff, git, new_repo
from _tasks_repo import ENV_MAP
from repogate.cli import main

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


def _pr(repo: Path, base: str) -> str:
    """The pull request: one commit on a branch from the base."""
    git(repo, "checkout", "-q", "-b", "pr", base)
    fix = commit(repo, FIXED, "Clamp a() at zero")
    git(repo, "checkout", "-q", "main")
    return fix


def _lag_elsewhere(repo: Path) -> tuple[str, str]:
    repo, base = new_repo(repo, BASE)
    pr = _pr(repo, base)
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
    repo, base = new_repo(repo, BASE)
    pr = _pr(repo, base)
    commit(repo, {"pkg/m.py": M.replace("x + 1", "x + 2")}, "b steps by two")
    git(repo, "cherry-pick", pr)
    landed = FIXED["pkg/m.py"].replace("x + 1", "x + 2")
    commit(repo, {"pkg/m.py": landed.replace("x + 2", "x + 3")}, "b steps by three")
    return base, pr


def _merge_landing(repo: Path) -> tuple[str, str]:
    repo, base = new_repo(repo, BASE)
    pr = _pr(repo, base)
    commit(repo, LAG, "Add util.two, version 1.1")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #2 from pr", "pr")
    later = {"pkg/m.py": FIXED["pkg/m.py"] + "\n\ndef d(x):\n    return -x\n"}
    commit(repo, {**later, "setup.py": 'VERSION = "1.2"\n'}, "Add d, version 1.2")
    return base, pr


SHAPES = {
    "lag-elsewhere": _lag_elsewhere,
    "same-file": _same_file,
    "merge-landing": _merge_landing,
}


def _instance(name: str, repo: Path, base: str, pr: str) -> dict[str, object]:
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


@pytest.mark.slow
def test_the_reference_passes_the_sentinel_whatever_the_base_lags_behind(
    tmp_path: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mirrors = tmp_path / "mirrors"
    rows, env = [], ""
    for name, build in SHAPES.items():
        base, pr = build(mirrors / f"acme+{name}")
        rows.append(_instance(name, mirrors / f"acme+{name}", base, pr))
        env += ENV_MAP.format(name=f"acme/{name}")
    (tmp_path / "env.toml").write_text(env)
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    taskset = tmp_path / "set"
    args = ["tasks", "import", str(path), "--out", str(taskset), "--repo-cache", str(mirrors)]
    assert main([*args, "--env-map", str(tmp_path / "env.toml")]) == 0
    lines = (taskset / "tasks.jsonl").read_text().splitlines()
    validated = [json.loads(line)["id"] for line in lines]
    assert sorted(validated) == sorted(f"acme__{n}-1" for n in SHAPES)
    capsys.readouterr()
    run = ["run", str(taskset), "--agent", "gold", "--repo-cache", str(mirrors)]
    assert main([*run, "--out", str(tmp_path / "run"), "--json"]) == 0
    decided = {str(r["contract"]): r for r in json.loads(capsys.readouterr().out)}
    assert sorted(decided) == sorted(validated)
    sentinel = {}
    for task, row in decided.items():
        assert row["accepted"] is True, (task, row["failed"])
        (check,) = row["sentinel"]["checks"]
        assert check["name"] == "post_merge_sentinel_passed"
        sentinel[task] = (check["status"], check["detail"])
    assert {t: s for t, (s, _) in sentinel.items()} == dict.fromkeys(validated, "passed"), sentinel
