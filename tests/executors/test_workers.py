"""`repogate run --workers N`: attempts in worker processes, the head the store's one writer.

Real git, real uv venvs, real pytest, real worker processes; a kill -9 and a Ctrl-C are real
signals sent to a real `repogate run` subprocess.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from _lifecycle_git import new_repo
from _loaded import modules_loaded_by
from _sentinel_support import CountingRunner
from conftest import run_json
from repogate.agent_spec import GoldSpec
from repogate.cli import ExitCode, main
from repogate.gates.sentinel._history import HistoryCache, history_results
from repogate.receipt import Crash
from repogate.store import Store
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow


def _agents(scenario: BuiltScenario) -> list[str]:
    cheat = next(p for p in scenario.agents if p.stem == "edits-tests")
    return ["--agent", "gold", "--agent", "null", "--agent", f"scripted:{cheat}"]


def _verdicts(rows: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return sorted(
        (r["contract"], r["agent"], r["epoch"], r["outcome"], tuple(r["failed"]))  # type: ignore[arg-type]
        for r in rows
    )


def assert_whole(out: Path, attempts: int) -> None:
    """Every attempt present once and done; its receipts numbered 0..n-1 with one file each."""
    with Store.open(out) as store:
        records = store.attempts()
        assert len(records) == attempts
        assert len({(r.contract_id, r.agent, r.epoch) for r in records}) == attempts
        for record in records:
            assert record.status == "done", record
            receipts = store.receipts(record.attempt_id)
            files = sorted((store.attempt_dir(record.attempt_id) / "receipts").iterdir())
            assert [f.name for f in files] == [
                f"{seq:02d}-{r.gate}.intoto.json" for seq, r in enumerate(receipts)
            ]
            assert (store.attempt_dir(record.attempt_id) / "decision.json").is_file()
    leftovers = [p for p in out.rglob("*.tmp") if p.is_file()]
    assert leftovers == []


def test_two_workers_decide_as_one_does(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Parallel attempts give the decisions a serial run gives, each attempt stored once."""
    contract = str(parser.contracts[0])
    code, serial = run_json(capsys, contract, *_agents(parser), "--out", str(tmp_path / "one"))
    assert code == ExitCode.OK
    code, parallel = run_json(
        capsys, contract, *_agents(parser), "--out", str(tmp_path / "two"), "--workers", "2"
    )
    assert code == ExitCode.OK
    assert _verdicts(parallel) == _verdicts(serial)
    assert [r["outcome"] for r in parallel] == ["accepted", "rejected", "rejected"]
    assert_whole(tmp_path / "two", 3)
    manifest = json.loads((tmp_path / "two" / "manifest.json").read_text())
    assert manifest["executor"] == {"name": "local", "workers": 2}


def test_an_environment_two_workers_want_at_once_is_built_once(
    parser: BuiltScenario,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two workers starting on one task with a cold cache: one builds, the other waits and reuses.

    Covers both the environment and the base-state result (the hidden tests at the base): without
    a lock both workers would run the base's tests.
    """
    monkeypatch.setenv("REPOGATE_CACHE", str(tmp_path / "cold-cache"))
    out = tmp_path / "run"
    code, _ = run_json(
        capsys,
        str(parser.contracts[0]),
        "--agent",
        "gold",
        "--agent",
        "null",
        "--out",
        str(out),
        "--workers",
        "2",
    )
    assert code == ExitCode.OK
    with Store.open(out) as store:
        env_receipts = [
            next(r for r in store.receipts(a.attempt_id) if r.gate == "E") for a in store.attempts()
        ]
    assert sorted(r.details["environment"]["cold"] for r in env_receipts) == [False, True]
    assert sorted(r.details["base_state_cached"] for r in env_receipts) == [False, True]


def test_two_workers_wanting_one_commits_history_run_its_tests_once(tmp_path: Path) -> None:
    """The sentinel's real-history results for one key are computed by one worker at a time."""
    repo, base = new_repo(
        tmp_path / "repo", {"tests/test_a.py": "import time\n\ndef test_a():\n    time.sleep(1)\n"}
    )
    runner = CountingRunner()
    cache = HistoryCache(tmp_path / "cache")
    got: list[tuple[dict[str, str], bool]] = []

    def worker() -> None:
        got.append(history_results(repo, base, ["tests/test_a.py"], "env", cache, runner, None))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert runner.calls == 1
    assert sorted(cached for _, cached in got) == [False, True]
    assert got[0][0] == got[1][0] == {"tests/test_a.py::test_a": "passed"}


def _command(parser: BuiltScenario, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "repogate.cli",
        "run",
        str(parser.contracts[0]),
        *_agents(parser),
        "--epochs",
        "2",
        "--workers",
        "2",
        "--out",
        str(out),
        "--json",
    ]


def _start(parser: BuiltScenario, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _command(parser, out),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the head, its workers, their commands
    )


def _wait_for(proc: subprocess.Popen[str], out: Path, done: int, receipts: int) -> None:
    """Wait until ``done`` attempts are done and another has ``receipts`` receipts stored."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if (out / "manifest.json").is_file():  # written once the store's schema is made
            with Store.open(out) as store:
                records = store.attempts()
                finished = [r for r in records if r.status == "done"]
                busy = [len(store.receipts(r.attempt_id)) for r in records if r.status == "running"]
            if len(finished) >= done and max(busy, default=0) >= receipts:
                return
        time.sleep(0.2)
    pytest.fail("the run made no progress in 600 s")


def _members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(stat.parent.name))
    return found


def _group_gone(pgid: int) -> bool:
    deadline = time.monotonic() + 30
    while _members(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def test_kill_9_mid_run_with_two_workers_then_resume(parser: BuiltScenario, tmp_path: Path) -> None:
    """A run killed mid-way resumes with every attempt once; finished ones are not redone."""
    out = tmp_path / "run"
    proc = _start(parser, out)
    _wait_for(proc, out, done=1, receipts=2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert _group_gone(proc.pid)
    with Store.open(out) as store:
        before = {r.attempt_id: r for r in store.attempts() if r.status == "done"}
        interrupted = [r.attempt_id for r in store.attempts() if r.status == "running"]
    assert before and interrupted  # killed mid-run: some done, some not

    again = subprocess.run(_command(parser, out), capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr
    assert_whole(out, 6)
    with Store.open(out) as store:
        after = {r.attempt_id: r for r in store.attempts()}
    for attempt_id, record in before.items():
        assert after[attempt_id].finished_at == record.finished_at  # kept, not redone
        assert after[attempt_id].decision == record.decision


def test_ctrl_c_stops_the_workers_and_exits_130(parser: BuiltScenario, tmp_path: Path) -> None:
    """SIGINT to the head alone: exit 130, no worker left, the store whole, and a rerun resumes."""
    out = tmp_path / "run"
    proc = _start(parser, out)
    _wait_for(proc, out, done=0, receipts=2)
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert "rerun the same command to resume" in err
    assert _group_gone(proc.pid)  # every worker stopped with the head
    with Store.open(out) as store:
        statuses = {r.status for r in store.attempts()}
    assert "running" in statuses
    assert "crashed" not in statuses  # an interrupted attempt is not the evaluator's crash
    again = subprocess.run(_command(parser, out), capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr
    assert_whole(out, 6)


def test_a_worker_killed_mid_attempt_is_a_crash_and_the_run_goes_on(
    parser: BuiltScenario, tmp_path: Path
) -> None:
    """kill -9 of one worker: its attempt is stored as crashed; the others finish."""
    out = tmp_path / "run"
    proc = _start(parser, out)
    _wait_for(proc, out, done=0, receipts=1)
    workers = [
        int(pid)
        for pid in subprocess.run(
            ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
    ]
    spawned = [pid for pid in workers if "spawn_main" in Path(f"/proc/{pid}/cmdline").read_text()]
    assert len(spawned) == 2, workers
    os.kill(spawned[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 3, err  # 3: an attempt crashed
    with Store.open(out) as store:
        records = store.attempts()
    crashed = [r for r in records if r.status == "crashed"]
    assert len(crashed) == 1 and crashed[0].crash is not None
    assert crashed[0].crash == Crash(type="WorkerDied", message="worker exited with -9")
    assert sum(r.status == "done" for r in records) == 5


def test_the_default_path_never_imports_ray(parser: BuiltScenario, tmp_path: Path) -> None:
    """Ray is an optional extra: a run without --executor ray must not need it, nor load it."""
    args = [str(parser.contracts[0]), "--agent", "null", "--agent", "gold", "--workers", "2"]
    loaded = modules_loaded_by(["run", *args, "--out", str(tmp_path / "run"), "--json"])
    assert "repogate.executors.local" in loaded and "ray" not in loaded


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "0"], "error: --workers 0 is below 1; give 1 or more workers"),
        (["--executor", "spark"], "error: unknown executor 'spark'; use one of: local, ray"),
    ],
)
def test_bad_workers_or_executor_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    out = tmp_path / "run"
    assert main(["run", "--out", str(out), *args]) == ExitCode.USAGE
    assert capsys.readouterr().err.strip() == message
    assert not out.exists()  # nothing written


def test_a_worker_that_cannot_isolate_as_the_head_recorded_refuses_the_attempt(
    parser: BuiltScenario, tmp_path: Path
) -> None:
    """Isolation never weakens silently on another node: the attempt is refused, not run."""
    from repogate import git
    from repogate.agents import make_agent
    from repogate.contract import load_contract
    from repogate.executors._perform import perform
    from repogate.jobs import AttemptEvent, AttemptJob, Finished

    contract = load_contract(parser.contracts[0])
    source = git.resolve_source(contract.repo, contract.base_dir, None)
    job = AttemptJob(
        attempt_id="a",
        label="a",
        contract=contract,
        agent=make_agent(GoldSpec(), contract, source),
        agent_name="gold",
        source=source,
        run_dir=tmp_path / "run",
        work=tmp_path / "run" / "work" / "a",
        evidence=tmp_path / "run" / "attempts" / "a",
        env_cache=tmp_path / "cache" / "envs",
        history_cache=tmp_path / "cache" / "history",
        git_cache=tmp_path / "cache" / "git",
        isolation="bwrap --unshare-net --unshare-pid",
        isolation_kind="a-sandbox-this-machine-lacks",
        weak_isolation=None,
    )
    events: list[AttemptEvent] = []
    perform(job, events.append)
    assert len(events) == 2
    finished = events[-1]
    assert isinstance(finished, Finished) and finished.decision is None
    assert finished.crash is not None
    assert finished.crash.type == "IsolationError"
    assert finished.crash.message.startswith("worker on ")
    assert "the run manifest says 'a-sandbox-this-machine-lacks'" in finished.crash.message
    assert not (tmp_path / "cache").exists()  # nothing was built or run
