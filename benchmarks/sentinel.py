"""Sentinel wall time for k follow-ups against running those k states' tests directly.

A fixture repository is generated: a package with a fix commit and k follow-up commits after it,
each adding a module and a test file. A candidate that differs from the fix (same behaviour, other
code) is merged and the sentinel replays the k follow-ups onto it. Measured in the same run:

- direct: check out each follow-up commit and run the tests the sentinel selects for it (k pytest
  runs on the real history states);
- sentinel, cold: an empty history cache (k runs in history plus k on the replayed states), in
  order (``workers=1``) and with history on a second thread beside the replay (``workers=2``);
- sentinel, warm: a repeated attempt, history read from the cache (k runs on replayed states).

Each round measures cold, then direct and warm in alternating order (the machine is shared; a load
spike should hit both sides alike). The last line is ``ratio: <median over rounds of warm /
direct>``: the sentinel's cost per attempt once history is cached, the mode it runs in across
attempts. The cold ratio (first attempt: history and replayed states both run) is printed above.

Usage: uv run python benchmarks/sentinel.py [--k 5] [--tests 40] [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from repogate import clock, git
from repogate.contract import Sentinel
from repogate.gates.sentinel import SentinelInputs, check_sentinel, follow_up_commits
from repogate.gates.sentinel._history import select_tests
from repogate.oracles import pytest_runner
from repogate.sandbox import SandboxPolicy

BASE = "def clamp(x, lo, hi):\n    return x\n"
FIX = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"
CANDIDATE = "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return min(x, hi)\n"


def run_pytest(checkout: Path, files: Sequence[str]) -> Mapping[str, str]:
    with tempfile.TemporaryDirectory(prefix="bench-report-") as report:
        run = pytest_runner.run_tests(
            Path(sys.executable), checkout, "python -m pytest", files, Path(report), SandboxPolicy()
        )
    return run.outcomes


def _write(repo: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _tests(module: str, func: str, n: int) -> str:
    cases = "".join(
        f"\n\ndef test_{func}_{i}():\n    assert {func}({i}) == {i} * {i} + 1\n" for i in range(n)
    )
    return f"from calc.{module} import {func}\n{cases}"


def build(root: Path, k: int, n: int) -> tuple[Path, str, str, tuple[str, ...]]:
    """Return (repo, base, fix, test ids of the fix) for a fixture with k follow-ups."""
    repo = root / "repo"
    git.init_repo(repo)
    clamp_tests = "from calc.core import clamp\n" + "".join(
        f"\n\ndef test_clamp_{i}():\n    assert clamp({i}, 3, 30) == {min(max(i, 3), 30)}\n"
        for i in range(n)
    )
    _write(repo, {"calc/__init__.py": "", "calc/core.py": BASE, "CHANGES.md": "# Changes\n"})
    base = git.commit_all(repo, "calc: clamp")
    _write(repo, {"calc/core.py": FIX, "tests/test_core.py": clamp_tests})
    fix = git.commit_all(repo, "calc: clamp really clamps")
    for i in range(k):
        func = f"f{i}"
        module = f"mod{i}"
        _write(
            repo,
            {
                f"calc/{module}.py": f"def {func}(x):\n    return x * x + 1\n",
                f"tests/test_{module}.py": _tests(module, func, n),
            },
        )
        git.commit_all(repo, f"calc: add {func}")
    ids = tuple(f"tests/test_core.py::test_clamp_{i}" for i in range(n))
    return repo, base, fix, ids


def _timed(call: object) -> float:
    start = clock.monotonic()
    call()  # type: ignore[operator]
    return clock.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=5, help="follow-up commits")
    parser.add_argument("--tests", type=int, default=40, help="tests per test file")
    parser.add_argument("--repeat", type=int, default=5, help="rounds; medians are reported")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-sentinel-"))
    try:
        repo, base, fix, ids = build(root, args.k, args.tests)
        tree = git.tree_with_files(
            repo, git.tree_of(repo, fix), {"calc/core.py": CANDIDATE.encode()}
        )
        candidate = git.commit_tree(repo, tree, [base], "candidate")
        follow = follow_up_commits(repo, base, fix, (), args.k, "main", True)
        selections = [select_tests(repo, f.sha, f.parent, ids) for f in follow]

        def direct() -> None:
            for f, files in zip(follow, selections, strict=True):
                with tempfile.TemporaryDirectory(dir=root) as tmp:
                    git.checkout_tree(repo, f.sha, Path(tmp) / "c")
                    run_pytest(Path(tmp) / "c", files)

        def sentinel(cache: Path, workers: int = 1) -> None:
            ctx = SentinelInputs(
                repo=repo,
                base=base,
                candidate=candidate,
                start_tree=tree,
                config=Sentinel(follow_up_count=args.k),
                run_tests=run_pytest,
                cache_dir=cache,
                reference=fix,
                regression_tests=ids,
                work_dir=root,
                workers=workers,
            )
            obs = check_sentinel(ctx)
            assert obs.checks[0].status == "passed", obs.checks[0].detail

        rounds: dict[str, list[float]] = {"direct": [], "cold": [], "cold2": [], "warm": []}
        warm_ratios: list[float] = []
        for r in range(args.repeat):
            cache = root / f"cache{r}"
            rounds["cold2"].append(_timed(lambda c=root / f"pool{r}": sentinel(c, 2)))
            rounds["cold"].append(_timed(lambda c=cache: sentinel(c)))
            # alternate the order so a load spike from other processes hits both sides alike
            if r % 2:
                warm, plain = _timed(lambda c=cache: sentinel(c)), _timed(direct)
            else:
                plain, warm = _timed(direct), _timed(lambda c=cache: sentinel(c))
            rounds["direct"].append(plain)
            rounds["warm"].append(warm)
            warm_ratios.append(warm / plain)
        med = {name: statistics.median(values) for name, values in rounds.items()}
        cold_ratio, cold2_ratio = (
            statistics.median(c / d for c, d in zip(rounds[key], rounds["direct"], strict=True))
            for key in ("cold", "cold2")
        )
        print(f"k={args.k} follow-ups, {args.tests} tests per file, {args.repeat} rounds (medians)")
        print(f"direct, k history states:     {med['direct']:.2f} s")
        print(f"sentinel, cold history cache: {med['cold']:.2f} s (ratio {cold_ratio:.2f})")
        print(
            f"sentinel, cold, history beside the replay (workers=2): {med['cold2']:.2f} s "
            f"(ratio {cold2_ratio:.2f})"
        )
        print(f"sentinel, warm history cache: {med['warm']:.2f} s")
        print(f"per-round warm ratios: {', '.join(f'{x:.2f}' for x in warm_ratios)}")
        print(f"ratio: {statistics.median(warm_ratios):.3f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
