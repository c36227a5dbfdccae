"""Start-up time of `repogate version` against loading every command's modules, in one run.

`repogate version` and `repogate --help` load the command line and nothing else: each command
loads what it uses when it runs (the run's pipeline, the store, the report's statistics with
scipy). The baseline, measured in the same run, is a process that loads what the command line
loaded before it was lazy (the run and report commands' modules: `repogate.cli.run`,
`repogate.cli.report`, `repogate.cli.terminal`, `repogate.contract`, `repogate.decision`,
`repogate.store`, `repogate.runner`). Each is a fresh interpreter, timed from outside, median of
``--repeats``; the modules `version` loaded are checked (no scipy, numpy, matplotlib or report).
Usage: `uv run python benchmarks/cli_import.py [--repeats K]`. Last line:
`ratio: <time(version)/time(every module)>`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

VERSION = "import sys; sys.argv = ['repogate', 'version']; from repogate._entry import main; main()"
EAGER = (
    "import repogate.cli, repogate.cli.run, repogate.cli.report, repogate.cli.terminal, "
    "repogate.contract, repogate.decision, repogate.store, repogate.runner"
)
HEAVY = ("scipy", "numpy", "matplotlib", "repogate.report.aggregate", "repogate.runner")


def _wall(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - start


def _loaded_by_version() -> list[str]:
    probe = VERSION + "; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    names = set(done.stdout.split())
    return [name for name in HEAVY if name in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    _wall(EAGER)  # fills the bytecode cache and the page cache for both
    version: list[float] = []
    eager: list[float] = []
    for _ in range(args.repeats):
        version.append(_wall(VERSION))
        eager.append(_wall(EAGER))
    heavy = _loaded_by_version()
    load = os.getloadavg()[0]
    print(f"`repogate version`: median {statistics.median(version):.3f} s of {args.repeats}")
    print(f"every command's modules: median {statistics.median(eager):.3f} s; load {load:.1f}")
    print(f"heavy modules `repogate version` loaded: {', '.join(heavy) or 'none'}")
    print(f"ratio: {statistics.median(version) / statistics.median(eager):.3f}")


if __name__ == "__main__":
    main()
