"""``mini:MODEL``: mini-swe-agent's own loop in the harness, each action in repogate's sandbox.

The model is a script served over real HTTP on loopback; the loop is mini-swe-agent's
``DefaultAgent`` with its text-based configuration.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from _model_endpoint import REPORTED_MODEL, TEST_KEY, ModelRuns
from repogate.models.trajectory import Action, ModelCall
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow


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


def test_mini_that_fixes_the_bug_is_accepted_and_its_actions_ran_sandboxed(
    model_runs: ModelRuns,
) -> None:
    replies = [
        _command("env"),
        _command(f"cat > confparse/parser.py <<'EOF'\n{_fixed_parser(model_runs.scenario)}EOF"),
        _command("python -m pytest -q -p no:cacheprovider 2>&1 | tail -1"),
        _command("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ]
    row, endpoint = model_runs.served("mini:fake-coder", replies, tokens=120)
    assert row["accepted"] is True, row
    assert row["agent_status"] == "done"
    assert row["agent_detail"] == "mini-swe-agent exit status Submitted"
    trajectory = model_runs.trajectory()
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
    own = json.loads(model_runs.attempt().joinpath("agent", "mini-trajectory.json").read_text())
    assert own["info"]["exit_status"] == "Submitted"
    manifest = json.loads((model_runs.out / "manifest.json").read_text())
    (described,) = manifest["agents"]
    assert described["config"]["name"] == "mini_textbased.yaml"
    assert described["agent_version"].startswith("mini-swe-agent 2.")
    assert "agent.system_template" in described["prompts"]
    model_runs.no_key_anywhere(TEST_KEY)


def test_mini_looping_past_its_token_budget_stops_with_its_status(model_runs: ModelRuns) -> None:
    contract = model_runs.contract("token_budget = 1000")
    row, endpoint = model_runs.served("mini:fake-coder", [_command("ls")], 300, contract)
    assert row["agent_status"] == "budget_exceeded"
    assert row["agent_detail"] == "tokens budget of 1000 reached (spent 1200)"
    assert len(endpoint.chat_calls()) == 4
    assert row["accepted"] is False
    trajectory = model_runs.trajectory()
    assert trajectory.status == "budget_exceeded"
    assert trajectory.actions == 3  # the fourth reply was paid for; its action never ran


def test_mini_against_an_unreachable_endpoint_is_the_agents_failure(model_runs: ModelRuns) -> None:
    row = model_runs.unreachable("mini:fake-coder")
    assert row["agent_status"] == "agent_error"
    assert str(row["agent_detail"]).startswith("model call failed: APIConnectionError")


def test_mini_that_edits_the_tests_is_rejected_by_integrity(model_runs: ModelRuns) -> None:
    """A loop that weakens the tests it is graded on gets through the agent, not the gate."""
    replies = [
        _command("sed -i 's/\"timeout=0\", //' tests/test_parser.py"),
        _command("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ]
    row, _ = model_runs.served("mini:fake-coder", replies)
    assert row["agent_status"] == "done"
    assert row["accepted"] is False
    assert "oracle_untouched" in row["failed"]  # type: ignore[operator]


def test_mini_past_its_wall_time_is_stopped_inside_the_action(model_runs: ModelRuns) -> None:
    """A sandboxed action gets at most the wall time left; then the agent stops."""
    text = (
        model_runs.scenario.contracts[0]
        .read_text()
        .replace("time_budget_s = 120", "time_budget_s = 4")
    )
    contract = model_runs.scenario.contracts[0].parent / "short.toml"
    contract.write_text(text)
    row, endpoint = model_runs.served("mini:fake-coder", [_command("sleep 60")], 10, contract)
    assert row["agent_status"] == "budget_exceeded"
    assert str(row["agent_detail"]).startswith("wall_time_s budget of 4 reached")
    (action,) = [s for s in model_runs.trajectory().steps if isinstance(s, Action)]
    assert action.timed_out and action.seconds < 10
    assert len(endpoint.chat_calls()) == 1
