"""Measured coverage of the report's intervals on synthetic tasks with a known rate.

Each replicate draws ``tasks`` tasks whose own success chances vary (a Beta distribution with mean
``rate`` and concentration 2: some tasks easy, some hard), then ``epochs`` attempts per task, and
hands the per-task counts, the very input :mod:`repogate.report.aggregate` gives them, to each
interval method of :mod:`repogate.report.stats` and :mod:`repogate.report.differences`. The
known rate is the mean of the per-task chances' distribution, the report's estimand. Coverage is
the share of replicates whose 95% interval holds it; the nominal 0.95 is the baseline each is
compared with (``ratio`` = coverage / 0.95).

Methods of a single rate: the default (Wilson with continuity correction over tasks), Wilson over
attempts (epochs taken as independent), the cluster t-interval (Miller 2024) and the percentile
cluster bootstrap. Paired (two agents of equal per-task chances, correlated through the task): the
paired interval's coverage of 0 and the sign test's false-positive rate at 0.05.

Usage: `uv run python benchmarks/interval_coverage.py [--reps N] [--seed S]`. Prints one line per method,
task count and epoch count (mean and minimum coverage over the rates), then
``default at >= 10 tasks: min coverage <x>``.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from repogate.report import differences, stats

TASKS = (5, 10, 20, 40)
EPOCHS = (1, 3)
RATES = (0.1, 0.3, 0.5, 0.7, 0.9)
CONCENTRATION = 2.0
Method = Callable[[Sequence[tuple[int, int]]], stats.Interval]


def _naive(per_task: Sequence[tuple[int, int]]) -> stats.Interval:
    return stats.wilson(sum(s for s, _ in per_task), sum(t for _, t in per_task))


METHODS: dict[str, Method] = {
    "default (Wilson cc over tasks)": stats.over_tasks,
    "Wilson over attempts": _naive,
    "cluster t (Miller 2024)": stats.cluster_t,
    "cluster bootstrap": stats.cluster_bootstrap,
}


def _chances(rng: np.random.Generator, rate: float, tasks: int) -> np.ndarray:
    return rng.beta(rate * CONCENTRATION, (1 - rate) * CONCENTRATION, size=tasks)


def single(reps: int, rng: np.random.Generator) -> dict[tuple[str, int, int], list[float]]:
    """Coverage per (method, tasks, epochs), one value per rate."""
    found: dict[tuple[str, int, int], list[float]] = defaultdict(list)
    for tasks in TASKS:
        for epochs in EPOCHS:
            for rate in RATES:
                hits = dict.fromkeys(METHODS, 0)
                for _ in range(reps):
                    wins = rng.binomial(epochs, _chances(rng, rate, tasks))
                    per_task = [(int(w), epochs) for w in wins]
                    for name, method in METHODS.items():
                        i = method(per_task)
                        hits[name] += i.low <= rate <= i.high
                for name in METHODS:
                    found[name, tasks, epochs].append(hits[name] / reps)
    return found


def paired(reps: int, rng: np.random.Generator) -> dict[tuple[int, int], tuple[float, float]]:
    """Per (tasks, epochs): the paired interval's coverage of 0 and the sign test's rejections."""
    found = {}
    for tasks in TASKS:
        for epochs in EPOCHS:
            covered = rejected = 0
            for _ in range(reps):
                chances = _chances(rng, 0.5, tasks)
                a = rng.binomial(epochs, chances) / epochs
                b = rng.binomial(epochs, chances) / epochs
                result = differences.paired(list(a), list(b))
                covered += result.difference.low <= 0.0 <= result.difference.high
                rejected += result.p_value < 0.05
            found[tasks, epochs] = (covered / reps, rejected / reps)
    return found


def main() -> None:
    """Run the simulation and print the table (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400, help="replicates per cell")
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"{args.reps} replicates per cell; rates {RATES}; task chances Beta, concentration 2")
    print(f"{'method':32} {'tasks':>5} {'epochs':>6} {'mean':>6} {'min':>6} {'ratio':>6}")
    results = single(args.reps, rng)
    for (name, tasks, epochs), covs in results.items():
        mean = sum(covs) / len(covs)
        print(
            f"{name:32} {tasks:>5} {epochs:>6} {mean:6.3f} {min(covs):6.3f} "
            f"{mean / stats.CONFIDENCE:6.3f}"
        )
    print(f"{'paired (rate 0.5, no difference)':32} {'tasks':>5} {'epochs':>6} {'cover0':>6} "
          f"{'FPR':>6}")  # fmt: skip
    for (tasks, epochs), (covered, rejected) in paired(args.reps, rng).items():
        print(f"{'Newcombe / MOVER + sign test':32} {tasks:>5} {epochs:>6} {covered:6.3f} "
              f"{rejected:6.3f}")  # fmt: skip
    default = [
        min(covs)
        for (name, tasks, _), covs in results.items()
        if name.startswith("default") and tasks >= 10
    ]
    print(f"took {time.perf_counter() - started:.0f} s")
    print(f"default at >= 10 tasks: min coverage {min(default):.3f}")


if __name__ == "__main__":
    main()
