"""Model-driven agents end to end on the parser scenario, against a scripted endpoint on loopback.

The model is a script; everything else is real: the OpenAI client's HTTP calls to a local
server, the sandbox running each action, real git, uv venvs and pytest, the gates.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _git_calls import git_calls
from _model_endpoint import REPORTED_MODEL, TEST_KEY, ModelRuns
from repogate.cli import ExitCode, main
from repogate.models.trajectory import Action, EditStep, ModelCall

pytestmark = pytest.mark.slow


LOCALISE = "confparse/parser.py::_int\nconfparse/parser.py::parse\n"

FIX = """I will bound both ends and reject unknown keys.

confparse/parser.py
<<<<<<< SEARCH
    if value < low:
        raise ConfigError(f"{key}: {value} is below {low}")
=======
    if not low <= value <= high:
        raise ConfigError(f"{key}: {value} is outside {low}..{high}")
>>>>>>> REPLACE

confparse/parser.py
<<<<<<< SEARCH
            settings["mode"] = raw
    return settings
=======
            settings["mode"] = raw
        else:
            raise ConfigError(f"unknown key {key!r}")
    return settings
>>>>>>> REPLACE

```reproduce
from confparse import ConfigError, parse
for bad in ("retries=11", "timeout=301", "colour=red"):
    try:
        parse(bad)
    except ConfigError:
        continue
    raise SystemExit(f"accepted {bad}")
```
"""

EDITS_TESTS = (
    FIX
    + """
tests/test_parser.py
<<<<<<< SEARCH
@pytest.mark.parametrize("text", ["timeout", "timeout=abc", "timeout=0", "mode=slow", "retries=-1"])
=======
@pytest.mark.parametrize("text", ["timeout", "timeout=abc", "mode=slow", "retries=-1"])
>>>>>>> REPLACE
"""
)


def test_baseline_that_finds_the_bug_is_accepted(model_runs: ModelRuns) -> None:
    row, endpoint = model_runs.served("baseline:fake-coder", [LOCALISE, FIX], tokens=250)
    assert row["accepted"] is True, row
    assert row["agent_status"] == "done"
    # Two model calls over HTTP, with the key in the header, the model as named.
    calls = endpoint.chat_calls()
    assert [c["model"] for c in calls] == ["fake-coder", "fake-coder"]
    assert set(endpoint.authorizations) == {f"Bearer {TEST_KEY}"}
    assert "confparse/parser.py" in calls[0]["messages"][1]["content"]  # BM25 put it in front
    trajectory = model_runs.trajectory()
    model_calls = [s for s in trajectory.steps if isinstance(s, ModelCall)]
    assert [c.model for c in model_calls] == [REPORTED_MODEL, REPORTED_MODEL]
    assert model_calls[1].reply == FIX
    # What the model saw is kept whole: the prompt as sent.
    assert [m.content for m in model_calls[1].messages] == [
        m["content"] for m in calls[1]["messages"]
    ]
    actions = [s for s in trajectory.steps if isinstance(s, Action)]
    assert [a.returncode for a in actions] == [0, 0]  # visible tests, then the reproduction
    assert "passed" in actions[0].output
    assert trajectory.usage.tokens == 500
    # Soft measures carry the tokens; the manifest records the configuration.
    decision = json.loads(model_runs.attempt().joinpath("decision.json").read_text())
    assert decision["soft"]["tokens"] == 500
    manifest = json.loads((model_runs.out / "manifest.json").read_text())
    (described,) = manifest["agents"]
    assert described["reported_model"]["id"] == REPORTED_MODEL
    assert described["endpoint"] == endpoint.base_url
    assert set(described["prompts"]) == {"system", "localise", "repair"}
    assert described["config"]["samples"] == 4
    model_runs.no_key_anywhere(TEST_KEY)
    # show prints the trajectory's summary line.
    assert main(["show", str(model_runs.out), "1"]) == ExitCode.OK
    shown = model_runs.capsys.readouterr().out
    assert "trajectory: done: 2 model calls; 2 commands; 2 edits; 500 tokens" in shown
    assert REPORTED_MODEL in shown
    # The same agent text against another endpoint is another configuration: refused, exit 2.
    model_runs.monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    contract = str(model_runs.scenario.contracts[0])
    again = main(["run", contract, "--agent", "baseline:fake-coder", "--out", str(model_runs.out)])
    assert again == ExitCode.USAGE
    assert "agent baseline:fake-coder changed" in model_runs.capsys.readouterr().err


def test_baseline_that_edits_the_tests_is_rejected_by_integrity(model_runs: ModelRuns) -> None:
    """A model's edit to the tests it is graded on is applied by the agent, and the gate says no."""
    row, _ = model_runs.served("baseline:fake-coder", [LOCALISE, EDITS_TESTS])
    assert row["accepted"] is False
    assert "oracle_untouched" in row["failed"]  # type: ignore[operator]
    assert row["agent_status"] == "done"


def test_baseline_looping_past_its_token_budget_stops_with_its_status(
    model_runs: ModelRuns,
) -> None:
    contract = model_runs.contract("token_budget = 700")
    looping = [LOCALISE, "Let me think about it some more."]
    row, endpoint = model_runs.served("baseline:fake-coder", looping, 300, contract)
    assert row["agent_status"] == "budget_exceeded"
    assert "tokens budget of 700 reached (spent 900)" in str(row["agent_detail"])
    assert len(endpoint.chat_calls()) == 3  # localise, two samples; the fourth never sent
    assert row["accepted"] is False  # judged on what it left: nothing
    assert "patch_is_a_new_state" in row["failed"]  # type: ignore[operator]
    trajectory = model_runs.trajectory()
    assert trajectory.status == "budget_exceeded" and trajectory.model_calls == 3


def test_sample_budget_of_the_contract_caps_the_samples(model_runs: ModelRuns) -> None:
    contract = model_runs.contract("sample_budget = 2")
    row, endpoint = model_runs.served("baseline:fake-coder", [LOCALISE, "No edit."], 100, contract)
    assert len(endpoint.chat_calls()) == 3
    assert row["agent_status"] == "agent_error"
    assert row["agent_detail"] == "no usable edit in 2 samples (none applied exactly)"


def test_unreachable_endpoint_is_the_agents_failure(model_runs: ModelRuns) -> None:
    row = model_runs.unreachable("baseline:fake-coder")
    assert row["agent_status"] == "agent_error"
    assert str(row["agent_detail"]).startswith("model call failed: APIConnectionError")
    assert row["outcome"] == "rejected"
    manifest = json.loads((model_runs.out / "manifest.json").read_text())
    assert "APIConnectionError" in manifest["agents"][0]["reported_model"]["error"]
    last = model_runs.trajectory().steps[-1]
    assert isinstance(last, ModelCall) and last.error
    model_runs.no_key_anywhere(TEST_KEY)


def test_answer_with_no_matching_edit_is_the_agents_failure(model_runs: ModelRuns) -> None:
    """An edit whose SEARCH text is not in the file is rejected, never applied loosely."""
    wrong = FIX.replace("is below {low}", "is under {low}")
    row, _ = model_runs.served("baseline:fake-coder", [LOCALISE, wrong])
    assert row["agent_status"] == "agent_error"
    assert "no usable edit in 4 samples" in str(row["agent_detail"])
    assert row["accepted"] is False
    edits = [s for s in model_runs.trajectory().steps if isinstance(s, EditStep)]
    assert edits[0].applied is False
    assert edits[0].detail == "SEARCH occurs 0 times, not once"


def test_missing_key_is_one_line_and_exit_2(model_runs: ModelRuns) -> None:
    model_runs.monkeypatch.delenv("OPENAI_API_KEY")
    out = model_runs.tmp_path / "run"
    contract = str(model_runs.scenario.contracts[0])
    code = main(["run", contract, "--agent", "baseline:fake-coder", "--out", str(out)])
    err = model_runs.capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert err.startswith("error: OPENAI_API_KEY is not set") and err.count("\n") == 1
    assert not out.exists()


def test_missing_key_on_the_embedded_default_is_refused_before_it_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key was checked when the agent was made, once every built-in scenario's repository
    had been built (tens of seconds, then removed); it is checked with the agent spec."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    log = git_calls(tmp_path, monkeypatch)
    out = tmp_path / "run"
    code = main(["run", "--agent", "baseline:fake-coder", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    assert err.startswith("error: OPENAI_API_KEY is not set") and err.count("\n") == 1
    assert not out.exists()
    assert not log.exists(), log.read_text()[:300]  # no scenario repository was built


def test_replay_of_a_recorded_trajectory_is_accepted_without_an_endpoint(
    model_runs: ModelRuns, tmp_path: Path
) -> None:
    model_runs.served("baseline:fake-coder", [LOCALISE, FIX])
    recording = tmp_path / "recorded.json"
    recording.write_bytes(model_runs.attempt().joinpath("agent", "trajectory.json").read_bytes())
    model_runs.monkeypatch.delenv("OPENAI_API_KEY")
    model_runs.monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    again = tmp_path / "again"
    agents = ["--agent", f"baseline:@{recording}", "--agent", "null"]
    code = main(
        ["run", str(model_runs.scenario.contracts[0]), "--json", "--out", str(again), *agents]
    )
    assert code == ExitCode.OK
    rows = json.loads(model_runs.capsys.readouterr().out)
    replayed = next(r for r in rows if r["agent"] != "null")
    assert replayed["accepted"] is True and replayed["agent_status"] == "done"
    # The report's autonomy rule can take the baseline agent as its baseline.
    assert main(["report", str(again), "--json", "--baseline", "baseline:@recorded"]) == ExitCode.OK
    report = json.loads(model_runs.capsys.readouterr().out)
    assert report["baseline"] == "baseline:@recorded"
