"""Coverage-selected regression tests against the whole suite, on real repositories' real commits.

For each repository (a local clone; fetch it yourself, nothing of it is kept) and each of its
last N first-parent commits C with parent P, two candidate states are replayed the way the
attempt sees one: the tree of the "candidate" with every test file reset to the "base" (the
hidden tests stay fixed; SWE-bench applies its test patch the same way):

- forward: base P, candidate C (the real follow-up commit, as the sentinel replays it);
- reverse: base C, candidate P (the commit reverted: the tests C added or changed now fail,
  which gives real regressions to catch).

For each base, the whole suite is recorded once under per-test coverage
(:func:`repogate.oracles.base_suite.record_base_suite`, as gate V does); for each candidate,
:func:`repogate.oracles.selection.select` picks the tests, which run with the regression plugin,
and the whole suite runs too. Printed per pair: the fallback reasons, the selected and whole run
times, regressions (base-passing tests failing in the whole run) and regressions the selection
missed (must be 0). The figure is the selected tests' run time over the whole suite's, summed
over every pair (a pair that falls back counts its whole run on both sides; an empty selection
costs nothing).

Usage: ``uv run python benchmarks/regression_selection.py REPO=CLONE[@N|@BASE..FIX] ...`` where
``REPO`` names a known repository (``pallets/click``, ``marshmallow-code/marshmallow``,
``python-attrs/attrs``), ``CLONE`` its clone, and then either the last N first-parent commits
(default 6) or one pair, e.g. a task's base commit and its fix (the shape of an agent's patch).
Last line: ``ratio: <selected/whole>``.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import tempfile
from pathlib import Path

from repogate import environments, git
from repogate.contract import EnvironmentRecipe
from repogate.environments import Environment
from repogate.oracles.base_suite import (
    BaseSuite,
    record_base_suite,
    run_selected,
    suite_command,
)
from repogate.oracles.pytest_runner import run_tests
from repogate.oracles.regress_tools import tool_folder
from repogate.oracles.selection import FileChange, Lookups, lookups, select
from repogate.sandbox import SandboxPolicy

COMMAND = "python -m pytest -p no:cacheprovider -q"
TEST_ROOTS = ("tests/", "testing/", "conftest.py")
INSTALL = {
    "pallets/click": ("uv pip install -e .", "uv pip install pytest"),
    "marshmallow-code/marshmallow": ("uv pip install -e .", "uv pip install pytest simplejson"),
    "python-attrs/attrs": ("uv pip install -e .[tests-mypy]",),
}


def _is_test(path: str) -> bool:
    return path.startswith(TEST_ROOTS)


def _candidate(clone: Path, base: str, code: str, dest: Path) -> list[FileChange]:
    """Write the tree of ``code`` with test files as at ``base``; return the code's changes."""
    git.export_tree(clone, code, dest)
    changes: list[FileChange] = []
    for c in git.changed_paths(clone, base, code):
        before = git.show_file(clone, base, c.path)
        if _is_test(c.path):
            target = dest / c.path
            target.unlink(missing_ok=True)
            if before is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(before)
            continue
        after = git.show_file(clone, code, c.path)
        changes.append(FileChange(c.path, c.status, before, after, c.is_symlink))
    return changes


def _named(tree: Path, clone: Path, base: str, asks: Lookups) -> tuple[set[str], set[str]]:
    text = b"\n".join(p.read_bytes() for p in tree.rglob("*.py") if not p.is_symlink())
    documents = {name for name in asks.documents if name.encode() in text}
    return documents, {word for word in asks.new_names if git.names_word(clone, base, word)}


def _pair(
    label: str,
    clone: Path,
    env: Environment,
    suite: BaseSuite,
    base: str,
    code: str,
    work: Path,
    policy: SandboxPolicy,
    tools: Path,
) -> tuple[float, float, int, int]:
    tree = work / f"cand-{label}"
    changes = _candidate(clone, base, code, tree)
    documents, names = _named(tree, clone, base, lookups(changes, suite.coverage))
    chosen = select(changes, suite.passing, suite.coverage, documents, names)
    whole = run_tests(env, tree, suite_command(COMMAND), None, work / f"whole-{label}", policy)
    passing = set(suite.passing)
    regressions = {
        t for t, o in whole.outcomes.items() if t in passing and o in ("failed", "error")
    }
    if chosen.whole:
        selected_s, caught = whole.execution.duration_s, regressions
    elif chosen.tests:
        run = run_selected(env, tree, COMMAND, chosen.tests, work / f"sel-{label}", policy, tools)
        selected_s = run.execution.duration_s
        caught = {t for t, o in run.outcomes.items() if o in ("failed", "error")}
    else:
        selected_s, caught = 0.0, set()
    missed = regressions - caught
    why = "; ".join(chosen.reasons)[:110] if chosen.whole else f"{len(chosen.tests)} selected"
    print(
        f"  {label:<22} {selected_s:7.2f}s / {whole.execution.duration_s:7.2f}s  "
        f"regressions {len(regressions):3d}  missed {len(missed)}  ({why})",
        flush=True,
    )
    for test in sorted(missed):
        print(f"    MISSED {test}")
    return selected_s, whole.execution.duration_s, len(regressions), len(missed)


def bench_repo(
    name: str, clone: Path, commits: str, work: Path, cache: Path
) -> list[tuple[float, float, int, int]]:
    if ".." in commits:  # one pair: a task's base and its fix (the shape of an agent's patch)
        chain = [git.rev_parse(clone, rev) for rev in commits.split("..", 1)]
    else:
        start = git.rev_parse(clone, f"HEAD~{commits}")
        chain = [start, *git.log_range(clone, start, "HEAD", first_parent=True)]
    policy = SandboxPolicy(network=False, timeout_s=1800, writable=(work,))
    install = work / "install"
    git.export_tree(clone, chain[0], install)
    recipe = EnvironmentRecipe(python="3.11", install=INSTALL[name])
    env = environments.build(
        environments.BuildRequest(
            recipe=recipe,
            base_checkout=install,
            cache_dir=cache,
            policy=SandboxPolicy(network=True, timeout_s=1800),
        )
    )
    tools = tool_folder(env, cache)
    suites: dict[str, BaseSuite] = {}

    def suite_at(commit: str) -> BaseSuite:
        if commit not in suites:
            tree = work / f"base-{commit[:10]}"
            git.export_tree(clone, commit, tree)
            suites[commit] = record_base_suite(
                env, tree, COMMAND, work / f"rec-{commit[:10]}", policy, tools
            )
            rec = suites[commit]
            print(
                f"  base {commit[:10]}: {len(rec.passing)} passing, {rec.duration_s:.2f}s, coverage: {rec.coverage is not None} {rec.coverage_reason}",
                flush=True,
            )
        return suites[commit]

    rows = []
    print(f"{name} ({len(chain) - 1} follow-up commits from {chain[0][:10]})", flush=True)
    for parent, child in itertools.pairwise(chain):
        rows.append(
            _pair(
                f"{child[:10]} forward",
                clone,
                env,
                suite_at(parent),
                parent,
                child,
                work,
                policy,
                tools,
            )
        )
        rows.append(
            _pair(
                f"{child[:10]} reverse",
                clone,
                env,
                suite_at(child),
                child,
                parent,
                work,
                policy,
                tools,
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "repos", nargs="+", help="REPO=CLONE[@N|@BASE..FIX], e.g. pallets/click=/tmp/click@6"
    )
    args = parser.parse_args()
    rows: list[tuple[float, float, int, int]] = []
    with tempfile.TemporaryDirectory(prefix="regression-bench-") as scratch:
        for spec in args.repos:
            name, _, where = spec.partition("=")
            clone, _, count = where.partition("@")
            work = Path(scratch) / name.replace("/", "+")
            work.mkdir(parents=True)
            rows += bench_repo(name, Path(clone), count or "6", work, Path(scratch) / "cache")
            shutil.rmtree(work, ignore_errors=True)
    selected = sum(r[0] for r in rows)
    whole = sum(r[1] for r in rows)
    print(
        f"pairs: {len(rows)}; regressions found by the whole suite: {sum(r[2] for r in rows)}; "
        f"missed by the selection: {sum(r[3] for r in rows)}"
    )
    forward = rows[0::2]  # pairs alternate: forward, then reverse
    forward_ratio = sum(r[0] for r in forward) / sum(r[1] for r in forward)
    print(f"forward pairs only (real follow-ups): ratio {forward_ratio:.3f}")
    print(f"selected {selected:.2f}s, whole {whole:.2f}s (every pair)")
    print(f"ratio: {selected / whole:.3f}")


if __name__ == "__main__":
    main()
