"""`repogate run --executor ray` on a real local Ray cluster (started here, no mock)."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_workers import assert_whole

from conftest import run_json
from repogate._descendants import descendants
from repogate.cli import ExitCode
from repogate.store import Store
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow

SLOW_START_TRIES = 6
"""Starts of the test's cluster tried: each waits Ray's fixed 30 s, missed at a load of 10-20.
When all miss it (seen at a load average of 20 to 25), the test is skipped saying so and the load:
the machine's limit, not repogate's; any other start-up failure fails the test."""


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A two-CPU Ray cluster on this machine, for one test.

    Ray's uv hook is switched off: under `uv run` it would start every Ray worker with `uv run` in
    a copy of this folder, a fresh environment without the extra (docs/distributed.md).
    """
    monkeypatch.setenv("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    import ray  # the optional extra; scripts/check installs it

    from repogate.executors.ray import RayStartError, start_local_cluster

    before = descendants()
    try:
        with _ray_daemons():  # a slow machine gets more tries than a run's default
            start_local_cluster(
                SLOW_START_TRIES, num_cpus=2, include_dashboard=False, log_to_driver=False
            )
    except RayStartError as exc:  # the machine's load, not repogate's fault: said, with the load
        _kill_what_ray_left(before)
        pytest.skip(f"{exc} (load average {os.getloadavg()[0]:.1f})")
    try:
        yield
    finally:
        with _ray_daemons():
            ray.shutdown()
        _kill_what_ray_left(before)


def _kill_what_ray_left(before: set[int]) -> None:
    """Kill every process started since ``before`` was taken: whatever Ray left running."""
    for pid in descendants() - before:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def _ray_daemons() -> Iterator[None]:
    """Ray drops the handles of its own daemons (GCS, raylet) while they run: not our leak."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "subprocess .* is still running", ResourceWarning)
        try:
            yield
        finally:
            gc.collect()


def test_attempts_as_ray_tasks_stream_into_the_heads_store(
    cluster: None, parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ray tasks decide as the local path does; each receipt reaches the head's store once."""
    cheat = next(p for p in parser.agents if p.stem == "edits-tests")
    agents = ["--agent", "gold", "--agent", "null", "--agent", f"scripted:{cheat}"]
    contract = str(parser.contracts[0])
    code, local = run_json(capsys, contract, *agents, "--out", str(tmp_path / "local"))
    assert code == ExitCode.OK
    out = tmp_path / "ray"
    code, remote = run_json(capsys, contract, *agents, "--out", str(out), "--executor", "ray")
    assert code == ExitCode.OK, [r["crash"] for r in remote]
    assert [(r["agent"], r["outcome"], r["failed"]) for r in remote] == [
        (r["agent"], r["outcome"], r["failed"]) for r in local
    ]
    assert [r["outcome"] for r in remote] == ["accepted", "rejected", "rejected"]
    assert_whole(out, 3)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["executor"]["name"] == "ray"
    with Store.open(out) as store:
        gates = [[r.gate for r in store.receipts(a.attempt_id)] for a in store.attempts()]
    assert all(g[0] == "E" and "propose" in g for g in gates)
