"""Wall time of the same attempts as Ray tasks against the local pool, measured in one run.

The attempts are the embedded scenarios' (see ``benchmarks/workers.py``). A first run fills the
caches; a local two-CPU Ray cluster is started (its start-up time is printed, not counted: it is
paid once per cluster, not per run); then the same attempts run into fresh run folders through
the local pool of 2 workers and through Ray (tasks of one CPU each on the two-CPU cluster),
alternating ``--repeats`` times; medians are compared. Ray's uv hook (which would rebuild the
project's environment in every worker when the driver runs under ``uv run``) is switched off with
``RAY_ENABLE_UV_RUN_RUNTIME_ENV=0``: repogate's workers need only the installed package. The
cluster starts through :func:`repogate.executors.ray.start_local_cluster`, which retries when
Ray's node misses its fixed 30 s start-up wait (as it did at a load of ~20).
Usage: `uv run python benchmarks/ray_overhead.py [--repeats K]`. Last line: `ratio: <ray/local>`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from _attempts import load, plans, timed

from repogate.executors.local import LocalExecutor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    os.environ["RAY_ENABLE_UV_RUN_RUNTIME_ENV"] = "0"
    import ray

    from repogate.executors.ray import RayExecutor, start_local_cluster

    with tempfile.TemporaryDirectory(prefix="repogate-bench-ray-") as tmp:
        scratch, cache = Path(tmp), Path(tmp) / "cache"
        attempts = plans(scratch)
        warm = timed(attempts, scratch, cache, "warm-up", LocalExecutor(1))
        print(f"{len(attempts)} attempts; warm-up (fills the caches): {warm:.1f} s; {load()}")
        start = time.perf_counter()
        tries = start_local_cluster(num_cpus=2, include_dashboard=False, log_to_driver=False)
        print(
            f"ray cluster start-up (not counted): {time.perf_counter() - start:.1f} s, try {tries}"
        )
        walls: dict[str, list[float]] = {"local": [], "ray": []}
        try:
            for repeat in range(args.repeats):
                for name, executor in (("local", LocalExecutor(2)), ("ray", RayExecutor())):
                    wall = timed(attempts, scratch, cache, f"{name}-{repeat}", executor)
                    walls[name].append(wall)
                    print(f"{name} repeat={repeat}: {wall:.1f} s; {load()}")
        finally:
            ray.shutdown()
        local, remote = statistics.median(walls["local"]), statistics.median(walls["ray"])
        print(f"median wall: local pool {local:.1f} s, ray {remote:.1f} s")
        print(f"ratio: {remote / local:.2f}")


if __name__ == "__main__":
    main()
