"""SWE-bench import: time per imported instance (validation and one attempt) over its bare test runs.

In one run:

1. `repogate tasks import FILE --repeats N` runs as a subprocess on local mirrors (``--repo-cache``)
   into a fresh task-set folder, with the environment cache given by ``$REPOGATE_CACHE`` (warm it
   with a first run to leave environment builds out; builds are printed apart either way). Each
   validated instance's record gives repogate's time: ``validation_seconds`` (the state checks,
   build excluded) plus ``gold_seconds`` (the gold attempt through the real pipeline: one attempt).
2. For every validated instance, the bare pytest runs that work needs are made directly on the
   same states, in the same venv, with no harness (:func:`mining.bare_run`): N runs of (base +
   hidden tests) and N runs of (reference + hidden tests) on the touched test files, one more of
   the reference under the shifted clock when libfaketime is installed (the date check), and the
   gold attempt's own: one graded run of the reference, plus its regression run's ids when the
   contract's regression set reaches beyond the graded ones. Trees are written beforehand with
   ``git archive`` and ``git apply`` and not timed.

Printed: one line per instance (ours, bare, ratio, and where our time went: pytest inside the
sandbox during validation, the rest of validation, and the gold attempt by gate), the totals by
phase, then the last line ``ratio: <x>`` (sum of ours over sum of bare). An existing ``--out``
resumes the import (its wall time then covers only what was left). Usage::

    REPOGATE_CACHE=/tmp/rgcache uv run python benchmarks/swebench_import.py \\
        --instances lite-flask.jsonl --repo-cache MIRRORS [--env-map env.toml] [--repeats 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from mining import archive, bare_run, environment, mirror_of, ours_env, regression_ids

from repogate.contract import load_contract
from repogate.sandbox import SandboxPolicy
from repogate.store import Store
from repogate.tasks.dates import libfaketime, shifted
from repogate.tasks.taskset import TaskEntry, TaskSet

ROOT = Path(__file__).resolve().parent.parent


def _apply(tree: Path, patch: Path) -> None:
    subprocess.run(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=tree, check=True)


def _trees(taskset: TaskSet, task: TaskEntry, mirrors: Path, scratch: Path) -> tuple[Path, Path]:
    """(base + hidden tests, reference + hidden tests) of one task, written with git."""
    folder = taskset.root / Path(task.contract).parent
    contract = load_contract(taskset.root / task.contract)
    repo = mirror_of(mirrors, contract.repo)
    base, ref = scratch / "base", scratch / "reference"
    for tree in (base, ref):
        archive(repo, contract.base_commit, tree)
        _apply(tree, folder / "hidden_tests.diff")
    _apply(ref, folder / "reference.diff")
    return base, ref


def _gates(run_dir: Path) -> defaultdict[str, float]:
    """Seconds per gate of the gold attempt stored in ``run_dir``."""
    spent: defaultdict[str, float] = defaultdict(float)
    with Store.open(run_dir) as store:
        for attempt in store.attempts():
            for receipt in store.receipts(attempt.attempt_id):
                spent[receipt.gate] += receipt.duration_s
    return spent


def _bare(taskset: TaskSet, task: TaskEntry, mirrors: Path, env_cache: Path, repeats: int) -> float:
    """Seconds of the bare runs one validated instance needs (see the module docstring)."""
    checked = task.validation
    env = environment(env_cache, checked.environment_digest)
    files = list(checked.test_files)
    with tempfile.TemporaryDirectory(prefix="swebench-bare-") as scratch:
        base, ref = _trees(taskset, task, mirrors, Path(scratch))
        spent = sum(bare_run(env, base, files) for _ in range(repeats))
        spent += sum(bare_run(env, ref, files) for _ in range(repeats + 1))  # + the gold's V run
        library = libfaketime()
        if checked.date_check.startswith("reference run") and library is not None:
            spent += bare_run(env, ref, files, dict(shifted(SandboxPolicy(), library).env))
        chosen = regression_ids(taskset.validation_dir(task.id))
        if chosen:
            spent += bare_run(env, ref, chosen)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--instances", type=Path, required=True)
    parser.add_argument("--repo-cache", type=Path, required=True)
    parser.add_argument("--env-map", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    cache = Path(os.environ.get("REPOGATE_CACHE", Path.home() / ".cache" / "repogate"))
    # an existing --out resumes the import: per-instance times come from its records either way
    out = args.out or Path(tempfile.mkdtemp(prefix="swebench-bench-")) / "set"
    command = [
        sys.executable, "-m", "repogate.cli", "tasks", "import", str(args.instances),
        "--out", str(out), "--repo-cache", str(args.repo_cache), "--repeats", str(args.repeats),
        *(["--env-map", str(args.env_map)] if args.env_map else []),
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=ours_env(), check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"repogate tasks import exited {done.returncode}")
    taskset = TaskSet.open(out)
    tasks, rejected = taskset.tasks(), taskset.rejected()
    print(f"import: {len(tasks)} validated, {len(rejected)} rejected, {wall:.1f} s wall")
    for reason, count in Counter(r.reason for r in rejected).most_common():
        print(f"  rejected {reason}: {count}")
    ours_total = bare_total = 0.0
    phases: defaultdict[str, float] = defaultdict(float)
    overheads: list[float] = []
    for task in tasks:
        checked = task.validation
        gates = _gates(taskset.validation_dir(task.id))
        ours = checked.validation_seconds + checked.gold_seconds
        bare = _bare(taskset, task, args.repo_cache, cache / "envs", args.repeats)
        phases["build (apart)"] += checked.build_seconds
        phases["validation: pytest in the sandbox"] += checked.test_seconds
        phases["validation: the rest"] += checked.validation_seconds - checked.test_seconds
        for gate, seconds in gates.items():
            phases[f"gold attempt: gate {gate}"] += seconds
        phases["gold attempt: outside the gates"] += checked.gold_seconds - sum(gates.values())
        ours_total += ours
        bare_total += bare
        overheads.append(ours - bare)
        by_gate = " ".join(f"{g}={s:.1f}" for g, s in sorted(gates.items()))
        print(
            f"{task.id}: ours {ours:.1f} s (validation {checked.validation_seconds:.1f}, of it "
            f"pytest {checked.test_seconds:.1f}; gold {checked.gold_seconds:.1f}: {by_gate}), "
            f"bare {bare:.1f} s, ratio {ours / bare:.2f}"
        )
    if not tasks:
        raise SystemExit("no instance validated: nothing to compare")
    print("where the time went (seconds, all validated instances):")
    for phase, seconds in sorted(phases.items(), key=lambda item: -item[1]):
        print(f"  {phase}: {seconds:.1f}")
    print(f"median overhead per instance: {statistics.median(overheads):.1f} s")
    print(f"ratio: {ours_total / bare_total:.3f}")


if __name__ == "__main__":
    main()
