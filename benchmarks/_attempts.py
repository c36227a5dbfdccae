"""Shared by the executor benchmarks: the embedded scenarios' attempts, timed on a warm cache."""

from __future__ import annotations

import os
import time
from pathlib import Path

from repogate.cli.run import default_plans
from repogate.jobs import Executor
from repogate.runner import PlannedAttempt, RunOptions, run


def plans(scratch: Path) -> list[PlannedAttempt]:
    """Build every embedded scenario once under ``scratch`` and plan its shipped agents."""
    return default_plans(scratch / "scenarios", [])


def timed(
    attempts: list[PlannedAttempt], scratch: Path, cache: Path, name: str, executor: Executor
) -> float:
    """Run ``attempts`` into a fresh run folder with ``executor``; return the wall seconds."""
    options = RunOptions(out=scratch / name, cache_dir=cache)
    start = time.perf_counter()
    records = run(attempts, options, executor=executor)
    wall = time.perf_counter() - start
    crashed = [r.attempt_id for r in records if r.status != "done"]
    if crashed:
        raise SystemExit(f"{name}: attempts did not finish: {crashed}")
    return wall


def load() -> str:
    """The machine's 1-minute load average and its core count, for the report beside a figure."""
    return f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
