"""The cost of oracle strength and of the differential oracle, against baselines from the same run.

1. **Mutation analysis** (`repogate tasks strength`): for each contract, one validation of the
   task (`repogate tasks check`: the state checks and the gold attempt, caches warm) is the
   baseline; then the mutants of its reference run with ``--budget N``. Printed per task: mutants
   run, wall seconds, and the ratio strength / validation.
2. **Differential oracle**: the gold attempt with ``oracles.differential = "off"`` (baseline) and
   with the default (``soft``), alternating ``--repeats`` times on warm caches; medians compared.

Without contracts, the embedded weak-oracle scenario (gauge) is built in a temporary folder.
Usage: `uv run python benchmarks/strength_cost.py [CONTRACT.toml ...] [--budget N] [--repeats K]
[--repo-cache DIR]`. Last lines: `ratio strength/validation: <median over tasks>` and
`ratio differential on/off: <ratio>`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from repogate.agent_spec import GoldSpec
from repogate.cli import main as cli
from repogate.contract import load_contract
from repogate.runner import PlannedAttempt, RunOptions, run
from repogate.tasks import strength as st
from repogate.tasks.scenarios import build_scenario


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}"


def _gold_wall(contract_path: Path, differential: str, out: Path, repo_cache: Path | None) -> float:
    contract = load_contract(contract_path)
    contract = contract.model_copy(
        update={"oracles": contract.oracles.model_copy(update={"differential": differential})}
    )
    started = time.monotonic()
    run(
        [PlannedAttempt(contract, str(contract_path), GoldSpec())],
        RunOptions(out=out, repo_cache=repo_cache),
    )
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("contracts", nargs="*", type=Path)
    parser.add_argument("--budget", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--repo-cache", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repogate-bench-strength-") as tmp:
        scratch = Path(tmp)
        os.environ.setdefault("REPOGATE_CACHE", str(scratch / "cache"))
        paths = args.contracts or [build_scenario("weak-oracle", scratch / "gauge").contracts[0]]
        ratios = []
        for path in paths:
            check = ["tasks", "check", str(path)]
            check += ["--repo-cache", str(args.repo_cache)] if args.repo_cache else []
            cli(check)  # warm the caches
            started = time.monotonic()
            cli(check)
            validation = time.monotonic() - started
            contract = load_contract(path)
            work = scratch / "strength" / contract.id
            options = RunOptions(out=work / "run", repo_cache=args.repo_cache)
            started = time.monotonic()
            result = st.measure(contract, str(path), work, options, budget=args.budget)
            cost = time.monotonic() - started
            ratios.append(cost / validation)
            print(
                f"{contract.id}: validation {validation:.1f} s; strength {cost:.1f} s for "
                f"{result.run} mutants ({result.made} made; score {result.score}); "
                f"ratio {cost / validation:.2f} ({cost / max(result.run, 1) / validation:.2f} "
                f"per mutant); {_load()}"
            )
        walls: dict[str, list[float]] = {"off": [], "soft": []}
        first = paths[0]
        _gold_wall(first, "soft", scratch / "warm", args.repo_cache)
        for repeat in range(args.repeats):
            for mode in ("off", "soft"):
                wall = _gold_wall(first, mode, scratch / f"{mode}-{repeat}", args.repo_cache)
                walls[mode].append(wall)
                print(f"gold, differential {mode}, repeat {repeat}: {wall:.1f} s; {_load()}")
        off, soft = statistics.median(walls["off"]), statistics.median(walls["soft"])
        print(f"median gold attempt: differential off {off:.1f} s, on {soft:.1f} s")
        print(f"ratio strength/validation: {statistics.median(ratios):.2f}")
        print(f"ratio differential on/off: {soft / off:.2f}")


if __name__ == "__main__":
    main()
