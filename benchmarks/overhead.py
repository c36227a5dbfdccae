"""Overhead of one `gold` attempt against running the same tests directly, measured in one run.

A fixture repository is generated (a package and a suite of a few thousand parametrized tests
taking about ten seconds, the size of a real project's focused test files), with a base commit
and a fix commit. Then, in this one process:

1. cold: one attempt with an empty environment cache (the venv is built and pytest installed);
2. warm: attempts with the cache filled (environment and base-state result reused);
3. direct: the same test command, on the same candidate state with the hidden tests applied, run
   in the same venv with no harness at all.

Warm attempts and direct runs alternate, several times; medians are compared. The figure is the
attempt's own wall time (prepare to decision, as the run store records it) against the direct
`python -m pytest` process; the whole `repogate run` process, which also pays the interpreter's
start and imports once per run, is printed beside it.
Usage: `uv run python benchmarks/overhead.py [--tests N] [--repeats K]`. Last line: `ratio: <x>`.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]


def sh(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def make_fixture(root: Path, tests: int) -> dict[str, str]:
    repo = root / "repo"
    (repo / "calc").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "calc" / "__init__.py").write_text(
        "def checksum(n):\n    total = 0\n    for i in range(n):\n        total = (total * 31 + i) % 1000003\n    return total\n\n"
        "def clamp(x, lo, hi):\n    return max(lo, x)\n"
    )
    (repo / "tests" / "test_suite.py").write_text(
        "import pytest\nfrom calc import checksum, clamp\n\n"
        f"@pytest.mark.parametrize('n', range({tests}))\n"
        "def test_checksum(n):\n    assert checksum(15000 + n % 400) == checksum(15000 + n % 400)\n\n"
        "def test_clamp_low():\n    assert clamp(-1, 0, 10) == 0\n"
    )
    sh(["git", "init", "-q", "-b", "main"], repo)
    sh([*GIT, "add", "-A"], repo)
    sh([*GIT, "commit", "-qm", "base"], repo)
    base = sh(["git", "rev-parse", "HEAD"], repo).strip()
    init = repo / "calc" / "__init__.py"
    init.write_text(init.read_text().replace("return max(lo, x)", "return min(hi, max(lo, x))"))
    with (repo / "tests" / "test_suite.py").open("a") as handle:
        handle.write("\ndef test_clamp_high():\n    assert clamp(11, 0, 10) == 10\n")
    sh([*GIT, "commit", "-qam", "fix"], repo)
    fix = sh(["git", "rev-parse", "HEAD"], repo).strip()
    p2p = [f"tests/test_suite.py::test_checksum[{i}]" for i in range(tests)]
    contract = f"""
id = "overhead-fixture"
repo = "repo"
base_commit = "{base}"
[requirement]
statement = "clamp must respect the upper bound"
[[requirement.criteria]]
id = "R1"
claim = "values above hi are clamped"
oracles = ["tests/test_suite.py::test_clamp_high"]
[environment]
install = ["uv pip install pytest"]
network = true
[permissions]
editable = ["calc/**"]
[oracles]
hidden_tests = {{ commit = "{fix}", paths = ["tests/"] }}
fail_to_pass = ["tests/test_suite.py::test_clamp_high"]
pass_to_pass = {json.dumps(["tests/test_suite.py::test_clamp_low", *p2p])}
[reference]
commit = "{fix}"
exclude = ["tests/"]
"""
    (root / "contract.toml").write_text(contract)
    return {"base": base, "fix": fix}


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    sh(args, cwd, env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tests", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repogate-bench-") as tmp:
        root = Path(tmp)
        make_fixture(root, options.tests)
        env = {**os.environ, "REPOGATE_CACHE": str(root / "cache")}
        run = [
            sys.executable,
            "-m",
            "repogate.cli",
            "run",
            str(root / "contract.toml"),
            "--agent",
            "gold",
            "--json",
        ]

        cold = timed([*run, "--out", str(root / "cold")], root, env)
        warm_first = timed([*run, "--out", str(root / "warm0")], root, env)
        # The same state, hidden tests applied, tested directly in the same venv.
        direct_tree = root / "direct"
        sh(["git", "clone", "-q", str(root / "repo"), str(direct_tree)], root)
        venv = next((root / "cache" / "envs").glob("*/venv"))
        direct_env = {
            **env,
            "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}",
            "VIRTUAL_ENV": str(venv),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        direct = [
            str(venv / "bin" / "python"),
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "tests/test_suite.py",
            f"--junitxml={root / 'direct.xml'}",
        ]
        gold_times, attempt_times, direct_times = [], [], []
        for i in range(options.repeats):
            out = root / f"warm{i + 1}"
            gold_times.append(timed([*run, "--out", str(out)], root, env))
            attempt_times.append(attempt_wall(out))
            direct_times.append(timed(direct, direct_tree, direct_env))
        gold = statistics.median(gold_times)
        attempt = statistics.median(attempt_times)
        plain = statistics.median(direct_times)
        print(f"fixture: {options.tests + 2} tests; repeats: {options.repeats}")
        print(f"cold attempt (venv built, pytest installed, base state checked): {cold:.2f} s")
        print(f"first warm attempt (venv and base-state result reused): {warm_first:.2f} s")
        print(f"cold / warm: {cold / warm_first:.2f}")
        print(f"direct test command, median: {plain:.2f} s  (runs: {fmt(direct_times)})")
        print(
            f"warm gold attempt (prepare to decision), median: {attempt:.2f} s  (runs: {fmt(attempt_times)})"
        )
        print(f"warm `repogate run` process, median: {gold:.2f} s  (runs: {fmt(gold_times)})")
        print(
            f"whole process / direct: {gold / plain:.3f}  (includes interpreter start and imports, paid once per run)"
        )
        print(f"ratio: {attempt / plain:.3f}")


def fmt(times: list[float]) -> str:
    return ", ".join(f"{t:.2f}" for t in times)


def attempt_wall(out: Path) -> float:
    """The attempt's own wall time, as the run store records it (soft metric wall_time_s)."""
    with sqlite3.connect(out / "store.sqlite") as db:
        (decision,) = db.execute("SELECT decision FROM attempts").fetchone()
    return float(json.loads(decision)["soft"]["wall_time_s"])


if __name__ == "__main__":
    main()
