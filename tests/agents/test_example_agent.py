"""The example `cmd:` agent of docs/agents.md runs as the page says, through the real protocol.

A protocol page whose example does not run teaches the wrong thing: this runs
`examples/agents/bounds_agent.py` with `repogate run` on the parser scenario (the contract the
README's first command builds into `runs/demo/scenarios/parser/`) and reads back each of its
output files where the page says they go.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repogate.cli import ExitCode, main
from repogate.receipt import Receipt
from repogate.store import AttemptRecord, Store
from repogate.tasks.scenarios import BuiltScenario


def _accepted(
    parser: BuiltScenario, spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[AttemptRecord, Path, Receipt]:
    """Run agent ``spec`` on the parser scenario; its record, folder and proposal receipt."""
    out = tmp_path / "run"
    code = main(["run", str(parser.contracts[0]), "--agent", spec, "--out", str(out), "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert code == ExitCode.OK, rows
    (row,) = rows
    assert row["outcome"] == "accepted", row
    with Store.open(out) as store:
        (record,) = store.attempts()
        folder = store.attempt_dir(record.attempt_id)
        propose = next(r for r in store.receipts(record.attempt_id) if r.gate == "propose")
    return record, folder, propose


@pytest.mark.slow
def test_the_example_agent_is_accepted_with_its_claims_usage_and_trajectory(
    parser: BuiltScenario, tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = root / "examples" / "agents" / "bounds_agent.py"
    record, folder, propose = _accepted(parser, f"cmd:python3 {agent}", tmp_path, capsys)
    assert record.decision is not None
    assert record.decision.soft.tokens == 1234  # usage.json
    assert record.decision.soft.agent_cost_usd == pytest.approx(0.01)
    proposal = propose.details["proposal"]
    assert proposal["model"] == "none (a fixed rule)"  # agent.json
    assert proposal["status"] == "done"
    claims = proposal["requirements"]  # requirements.json, the stated criteria and one inferred
    assert {c.get("criterion") for c in claims} >= {"R1", "R2"}
    assert any(c["source"] == "inferred" for c in claims)
    lines = (folder / "agent" / "trajectory.jsonl").read_text().splitlines()
    steps = [json.loads(line) for line in lines]
    assert [s["action"] for s in steps] == ["read_task", "edit"]  # kept as the agent wrote it
    assert "parser-bounded-config: 2 steps" in (folder / "agent.stdout.txt").read_text()


def test_the_built_in_task_list_names_every_embedded_scenario() -> None:
    """docs/agents.md's "Built-in" tasks name every scenario the embedded default builds.

    New-user finding: the list stopped at identical-diff, without the weak-oracle scenario."""
    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "agents.md").read_text()
    line = next(p for p in page.split("\n- ") if p.startswith("**Built-in**"))
    scenarios = root / "src" / "repogate" / "tasks" / "scenarios"
    names = sorted(p.name for p in scenarios.iterdir() if (p / "scenario.toml").is_file())
    assert len(names) >= 5, names
    missing = [n for n in names if n not in line]
    assert not missing, (missing, line)


@pytest.mark.slow
def test_the_example_trajectory_replays_as_a_baseline_without_an_endpoint(
    parser: BuiltScenario, tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/model-agents.md's replay example runs: ``baseline:@FILE`` needs no endpoint or key.

    New-user finding: the page named ``baseline:@FILE`` but showed no trajectory to replay, so
    a newcomer without an endpoint had nothing to run it on."""
    name = "examples/agents/parser-baseline.trajectory.json"
    assert name in (root / "docs" / "model-agents.md").read_text()
    _, folder, _ = _accepted(parser, f"baseline:@{root / name}", tmp_path, capsys)
    replayed = json.loads((folder / "agent" / "trajectory.json").read_text())
    assert (replayed["status"], replayed["model_calls"], replayed["edits"]) == ("done", 2, 2)
