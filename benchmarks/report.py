"""The report over a synthetic store of 10,000 attempts against a plain read of the same rows.

The store is built with the real Store API (``Store.create``, ``begin_attempt``,
``finish_attempt``): 500 contracts in three cohorts, four agents, five epochs, with decisions taken
from the example evidence files (accepted; rejected on the lifecycle gates while resolved) and a
share of crashed attempts. Then, in this one process, alternating, with medians of the repeats:

1. plain read: open the store and read every attempt with its decision (``Store.attempts``);
2. report: read the runs (``load_runs``), compute the whole report (``build_report``, with
   ``--by change_type``: intervals, pass@k, funnel, paired, autonomy, gate
   informativeness) and render it as JSON.

The HTML page (matplotlib charts, links to evidence) is timed once and printed beside.
Usage: `uv run python benchmarks/report.py [--attempts N] [--repeats K]`. Last line: `ratio: <x>`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from repogate.agent_spec import parse_agent_spec
from repogate.cli import load_evidence
from repogate.decision import decide
from repogate.receipt import Crash
from repogate.report.aggregate import build_report
from repogate.report.html import write_html
from repogate.report.json import to_json
from repogate.report.load import load_runs
from repogate.sandbox import Isolation
from repogate.store import ContractEntry, RunManifest, Store

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ("gold", "null", "scripted:/a/careful.toml", "scripted:/a/hasty.toml")
EPOCHS = 5
COHORTS = ("bug", "feature", "config")


def build(run_dir: Path, attempts: int) -> None:
    evidence = ROOT / "examples" / "evidence"
    good = decide(load_evidence(evidence / "pure-parser-function.json"))
    stale = decide(load_evidence(evidence / "payments-sdk-retry-stale.json"))
    contracts = attempts // (len(AGENTS) * EPOCHS)
    iso = Isolation(kind="bwrap", network_off=True)
    entries = tuple(
        ContractEntry(
            id=f"task-{i:04d}",
            source="synthetic",
            policy_digest="0" * 64,
            profile="lifecycle",
            cohort={"change_type": COHORTS[i % 3]},
            time_budget_s=120,
            token_budget=None,
            agent_network=False,
            install_network=False,
            editable=("src/**",),
            commands=(),
        )
        for i in range(contracts)
    )
    with Store.create(run_dir) as store:
        store.write_manifest(
            RunManifest(
                agents=tuple({"spec": a} for a in AGENTS),
                contracts=entries,
                selection="synthetic benchmark store",
                epochs=EPOCHS,
                planned_attempts=contracts * len(AGENTS) * EPOCHS,
                isolation_agent=iso,
                isolation_tests=iso,
            )
        )
        n = 0
        for epoch in range(EPOCHS):
            for i, entry in enumerate(entries):
                for j, agent in enumerate(AGENTS):
                    record = store.begin_attempt(entry.id, parse_agent_spec(agent), epoch)
                    pick = (i * 7 + j * 3 + epoch) % 10
                    if pick == 9:
                        store.finish_attempt(
                            record.attempt_id,
                            None,
                            crash=Crash(type="RuntimeError", message="synthetic"),
                        )
                    else:
                        chosen = good if (pick < 5 + j) else stale
                        store.finish_attempt(record.attempt_id, chosen)
                    n += 1
    print(f"built {n} attempts in {run_dir}")


def plain(run_dir: Path) -> int:
    with Store.open(run_dir) as store:
        return len(store.attempts())


def report(run_dir: Path) -> int:
    built = build_report(load_runs([run_dir]), "change_type", None)
    return len(to_json(built))


def timed(call: object, run_dir: Path) -> float:
    assert callable(call)
    t0 = time.perf_counter()
    call(run_dir)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repogate-bench-report-") as tmp:
        run_dir = Path(tmp) / "run"
        t0 = time.perf_counter()
        build(run_dir, args.attempts)
        print(f"store built with the Store API in {time.perf_counter() - t0:.1f} s")
        report(run_dir)  # warm imports and caches once for both
        plains, reports = [], []
        for _ in range(args.repeats):
            plains.append(timed(plain, run_dir))
            reports.append(timed(report, run_dir))
        t0 = time.perf_counter()
        write_html(build_report(load_runs([run_dir]), "change_type", None), Path(tmp) / "r.html")
        html_s = time.perf_counter() - t0
        p, r = statistics.median(plains), statistics.median(reports)
        print(f"plain read of {plain(run_dir)} rows: {p:.3f} s (median of {args.repeats})")
        print(f"report (load, statistics, JSON): {r:.3f} s (median of {args.repeats})")
        print(f"HTML page once (report, charts, evidence links): {html_s:.3f} s")
        print(f"ratio: {r / p:.2f}")


if __name__ == "__main__":
    main()
