"""``mini:MODEL``: mini-swe-agent's own loop in the harness, each action in repogate's sandbox.

The model is a script served over real HTTP on loopback; the loop is mini-swe-agent's
``DefaultAgent`` with its text-based configuration.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from _model_endpoint import REPORTED_MODEL, scripted_endpoint
from conftest import run_json
from repogate.cli import ExitCode
from repogate.models.trajectory import Action, ModelCall, Trajectory
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow

KEY = "sk-mini-test-never-in-the-sandbox-99"


def _command(text: str, thought: str = "THOUGHT: next step.") -> str:
    return f"{thought}\n\n```mswea_bash_command\n{text}\n```\n"


def _fixed_parser(scenario: BuiltScenario) -> str:
    done = subprocess.run(
        ["git", "show", f"{scenario.commits['fix']}:confparse/parser.py"],
        cwd=scenario.repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def _trajectory(out: Path) -> tuple[Path, Trajectory]:
    (folder,) = (out / "attempts").iterdir()
    data = (folder / "agent" / "trajectory.json").read_bytes()
    return folder, Trajectory.model_validate_json(data)


def test_mini_that_fixes_the_bug_is_accepted_and_its_actions_ran_sandboxed(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    replies = [
        _command("env"),
        _command(f"cat > confparse/parser.py <<'EOF'\n{_fixed_parser(parser)}EOF"),
        _command("python -m pytest -q -p no:cacheprovider 2>&1 | tail -1"),
        _command("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ]
    out = tmp_path / "run"
    with scripted_endpoint(replies, tokens_per_call=120) as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.base_url)
        code, rows = run_json(
            capsys, str(parser.contracts[0]), "--agent", "mini:fake-coder", "--out", str(out)
        )
    assert code == ExitCode.OK
    (row,) = rows
    assert row["accepted"] is True, row
    assert row["agent_status"] == "done"
    assert row["agent_detail"] == "mini-swe-agent exit status Submitted"
    folder, trajectory = _trajectory(out)
    actions = [s for s in trajectory.steps if isinstance(s, Action)]
    assert [a.returncode for a in actions] == [0, 0, 0, 0]
    # The sandbox gave the action no key: the model's key stays in the harness.
    assert "OPENAI" not in actions[0].output
    assert "passed" in actions[2].output
    # What the model saw after each action is the rendered observation, kept in the next prompt.
    calls = [s for s in trajectory.steps if isinstance(s, ModelCall)]
    assert len(calls) == 4 and calls[1].continues == 3  # system, task, reply
    assert "<returncode>0</returncode>" in calls[1].messages[-1].content
    assert [m["content"] for m in endpoint.chat_calls()[3]["messages"]][-1] == (
        calls[3].messages[-1].content
    )
    assert {c.model for c in calls} == {REPORTED_MODEL}
    assert trajectory.usage.tokens == 480
    own = json.loads((folder / "agent" / "mini-trajectory.json").read_text())
    assert own["info"]["exit_status"] == "Submitted"
    manifest = json.loads((out / "manifest.json").read_text())
    (described,) = manifest["agents"]
    assert described["config"]["name"] == "mini_textbased.yaml"
    assert described["agent_version"].startswith("mini-swe-agent 2.")
    assert "agent.system_template" in described["prompts"]
    for path in out.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_mini_looping_past_its_token_budget_stops_with_its_status(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    text = parser.contracts[0].read_text()
    contract = parser.contracts[0].parent / "budget.toml"
    contract.write_text(text.replace("[permissions]\n", "[permissions]\ntoken_budget = 1000\n", 1))
    out = tmp_path / "run"
    with scripted_endpoint([_command("ls")], tokens_per_call=300) as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.base_url)
        code, rows = run_json(
            capsys, str(contract), "--agent", "mini:fake-coder", "--out", str(out)
        )
    assert code == ExitCode.OK
    (row,) = rows
    assert row["agent_status"] == "budget_exceeded"
    assert row["agent_detail"] == "tokens budget of 1000 reached (spent 1200)"
    assert len(endpoint.chat_calls()) == 4
    assert row["accepted"] is False
    _, trajectory = _trajectory(out)
    assert trajectory.status == "budget_exceeded"
    assert trajectory.actions == 3  # the fourth reply was paid for; its action never ran


def test_mini_against_an_unreachable_endpoint_is_the_agents_failure(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with scripted_endpoint([]) as gone:
        url = gone.base_url
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    code, rows = run_json(
        capsys, str(parser.contracts[0]), "--agent", "mini:fake-coder", "--out", str(tmp_path / "r")
    )
    assert code == ExitCode.OK
    (row,) = rows
    assert row["agent_status"] == "agent_error"
    assert str(row["agent_detail"]).startswith("model call failed: APIConnectionError")
