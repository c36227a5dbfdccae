"""The base's whole-suite record: one run under coverage against the two runs it replaced.

Gate V records, once per base state, the tests passing at the base and what each one executes.
It used to run the whole suite twice: plainly with the guard's read trace (the regression set),
then under per-test coverage. :func:`repogate.oracles.base_suite.record_base_suite` now runs it
once under coverage with the read trace, and reruns plainly only the ids that did not pass there.

On one local clone (fetch it yourself; nothing of it is kept), at one commit, in one environment
built from the repository's install commands, this measures in the same process, one after the
other on fresh exports of the same tree: the old way (a plain traced run of the whole suite, then
:func:`~repogate.oracles.base_suite.coverage_run`) and the new record. It prints each run's time,
the passing counts, whether the passing sets and the read traces agree, and last
``ratio: <new/old>`` (wall seconds of the new record over the old two runs).

Usage: ``nice -n 5 uv run python benchmarks/base_suite_runs.py REPO=CLONE[@REV]``, where ``REPO``
is a known repository (``psf/requests``) and ``CLONE`` a clone of it (of a fetched mirror's bare
git folder, say, cloned under ``/tmp``), e.g. ``psf/requests=/tmp/requests``. About 5 minutes for
requests on 2 cores.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from repogate import environments, git
from repogate.contract import EnvironmentRecipe
from repogate.oracles.base_suite import (
    coverage_run,
    record_base_suite,
    suite_command,
)
from repogate.oracles.pytest_runner import run_tests
from repogate.oracles.regress_tools import tool_folder
from repogate.sandbox import SandboxPolicy

COMMAND = "python -m pytest -p no:cacheprovider -q"
INSTALL = {
    "psf/requests": (
        "uv pip install -e .[socks]",
        "uv pip install pytest pytest-httpbin==2.1.0 httpbin~=0.10.0 trustme pytest-mock",
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", help="REPO=CLONE[@REV], e.g. psf/requests=/tmp/requests@HEAD")
    args = parser.parse_args()
    name, _, where = args.repo.partition("=")
    clone_text, _, rev = where.partition("@")
    clone = Path(clone_text)
    commit = git.rev_parse(clone, rev or "HEAD")
    with tempfile.TemporaryDirectory(prefix="base-suite-runs-") as scratch:
        work = Path(scratch)
        git.export_tree(clone, commit, work / "install")
        env = environments.build(
            environments.BuildRequest(
                recipe=EnvironmentRecipe(python="3.11", install=INSTALL[name]),
                base_checkout=work / "install",
                cache_dir=work / "cache",
                policy=SandboxPolicy(network=True, timeout_s=1800),
            )
        )
        tools = tool_folder(env, work / "cache")
        policy = SandboxPolicy(network=False, timeout_s=1800)
        print(f"{name} at {commit[:10]}", flush=True)

        old_tree = work / "old"
        git.export_tree(clone, commit, old_tree)
        started = time.perf_counter()
        plain = run_tests(
            env,
            old_tree,
            suite_command(COMMAND),
            None,
            work / "old-plain",
            policy,
            trace_reads=True,
        )
        covered, old_coverage, why = coverage_run(
            env, old_tree, COMMAND, work / "old-coverage", policy, tools
        )
        old_s = time.perf_counter() - started
        old_passing = {t for t, o in plain.outcomes.items() if o == "passed"}
        print(
            f"old: plain {plain.execution.duration_s:.1f} s ({len(old_passing)} passing of "
            f"{plain.collected}), coverage {covered.execution.duration_s:.1f} s "
            f"(coverage: {old_coverage is not None} {why}); {old_s:.1f} s",
            flush=True,
        )

        new_tree = work / "new-tree"
        git.export_tree(clone, commit, new_tree)
        started = time.perf_counter()
        suite = record_base_suite(env, new_tree, COMMAND, work / "new-evidence", policy, tools)
        new_s = time.perf_counter() - started
        runs = ", ".join(f"{r.kind} {r.duration_s:.1f} s ({r.collected} ids)" for r in suite.runs)
        print(
            f"new: {runs}; {len(suite.passing)} passing, {len(suite.passing_only_plainly)} only "
            f"plainly (coverage: {suite.coverage is not None} {suite.coverage_reason}); "
            f"{new_s:.1f} s",
            flush=True,
        )
        # an id may embed its tree's path (a parameter): compared with the path taken out
        old_ids = {t.replace(str(old_tree), "TREE") for t in old_passing}
        new_ids = {t.replace(str(new_tree), "TREE") for t in suite.passing}
        differ = sorted(old_ids.symmetric_difference(new_ids))
        print(f"passing sets differ in {len(differ)} ids: {differ[:5]}")
        print(f"read traces equal: {plain.reads == suite.reads}")
        print(f"old {old_s:.1f} s, new {new_s:.1f} s")
        print(f"ratio: {new_s / old_s:.3f}")


if __name__ == "__main__":
    main()
