"""Wall time of the same attempts with 1 and 2 local workers, measured in one run.

The attempts are the embedded scenarios' (every built-in scenario with its shipped agents: 18
attempts, each a real git checkout, uv venv, pytest runs and sentinel replays). A first run fills
the environment, base-state and history caches; then the same attempts run into fresh run folders
with 1 worker (in this process, as a plain `repogate run`) and with 2 worker processes, alternating
``--repeats`` times; medians are compared. The machine's load is printed beside each figure: the
figure means little when other work shares the cores.
Usage: `uv run python benchmarks/workers.py [--repeats K]`. Last line: `ratio: <wall(1)/wall(2)>`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from _attempts import load, plans, timed

from repogate.executors.local import LocalExecutor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repogate-bench-workers-") as tmp:
        scratch, cache = Path(tmp), Path(tmp) / "cache"
        attempts = plans(scratch)
        warm = timed(attempts, scratch, cache, "warm-up", LocalExecutor(1))
        print(f"{len(attempts)} attempts; warm-up (fills the caches): {warm:.1f} s; {load()}")
        walls: dict[int, list[float]] = {1: [], 2: []}
        for repeat in range(args.repeats):
            for workers in (1, 2):
                wall = timed(
                    attempts, scratch, cache, f"w{workers}-{repeat}", LocalExecutor(workers)
                )
                walls[workers].append(wall)
                print(f"workers={workers} repeat={repeat}: {wall:.1f} s; {load()}")
        one, two = statistics.median(walls[1]), statistics.median(walls[2])
        print(f"median wall: 1 worker {one:.1f} s, 2 workers {two:.1f} s")
        print(f"ratio: {one / two:.2f}")


if __name__ == "__main__":
    main()
