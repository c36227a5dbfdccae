"""Model-driven agents end to end on the parser scenario, against a scripted endpoint on loopback.

The model is a script; everything else is real: the OpenAI client's HTTP calls to a local
server, the sandbox running each action, real git, uv venvs and pytest, the gates.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from _model_endpoint import REPORTED_MODEL, Endpoint, scripted_endpoint
from conftest import run_json
from repogate.cli import ExitCode, main
from repogate.models.trajectory import Action, ModelCall, Trajectory
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow

KEY = "sk-test-never-written-4711"

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


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    yield


def _serve(monkeypatch: pytest.MonkeyPatch, endpoint: Endpoint) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", endpoint.base_url)


def _trajectory(out: Path) -> Trajectory:
    (folder,) = (out / "attempts").iterdir()
    return Trajectory.model_validate_json((folder / "agent" / "trajectory.json").read_bytes())


def _no_key_anywhere(out: Path) -> None:
    for path in out.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert KEY.encode() not in path.read_bytes(), path


def _run(
    capsys: pytest.CaptureFixture[str], contract: Path, agent: str, out: Path
) -> dict[str, object]:
    code, rows = run_json(capsys, str(contract), "--agent", agent, "--out", str(out))
    assert code == ExitCode.OK
    (row,) = rows
    return row


def test_baseline_that_finds_the_bug_is_accepted(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    live: None,
) -> None:
    out = tmp_path / "run"
    with scripted_endpoint([LOCALISE, FIX], tokens_per_call=250) as endpoint:
        _serve(monkeypatch, endpoint)
        row = _run(capsys, parser.contracts[0], "baseline:fake-coder", out)
    assert row["accepted"] is True, row
    assert row["agent_status"] == "done"
    # Two model calls over HTTP, with the key in the header, the model as named.
    calls = endpoint.chat_calls()
    assert [c["model"] for c in calls] == ["fake-coder", "fake-coder"]
    assert set(endpoint.authorizations) == {f"Bearer {KEY}"}
    assert "confparse/parser.py" in calls[0]["messages"][1]["content"]  # BM25 put it in front
    trajectory = _trajectory(out)
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
    decision = json.loads(next((out / "attempts").iterdir()).joinpath("decision.json").read_text())
    assert decision["soft"]["tokens"] == 500
    manifest = json.loads((out / "manifest.json").read_text())
    (described,) = manifest["agents"]
    assert described["reported_model"]["id"] == REPORTED_MODEL
    assert described["endpoint"] == endpoint.base_url
    assert set(described["prompts"]) == {"system", "localise", "repair"}
    assert described["config"]["samples"] == 4
    _no_key_anywhere(out)
    # show prints the trajectory's summary line.
    assert main(["show", str(out), "1"]) == ExitCode.OK
    shown = capsys.readouterr().out
    assert "trajectory: done: 2 model calls; 2 commands; 2 edits; 500 tokens" in shown
    assert REPORTED_MODEL in shown
    # The same agent text against another endpoint is another configuration: refused, exit 2.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    again = main(
        ["run", str(parser.contracts[0]), "--agent", "baseline:fake-coder", "--out", str(out)]
    )
    assert again == ExitCode.USAGE
    assert "agent baseline:fake-coder changed" in capsys.readouterr().err


def test_baseline_that_edits_the_tests_is_rejected_by_integrity(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    live: None,
) -> None:
    """A model's edit to the tests it is graded on is applied by the agent, and the gate says no."""
    out = tmp_path / "run"
    with scripted_endpoint([LOCALISE, EDITS_TESTS]) as endpoint:
        _serve(monkeypatch, endpoint)
        row = _run(capsys, parser.contracts[0], "baseline:fake-coder", out)
    assert row["accepted"] is False
    assert "oracle_untouched" in row["failed"]  # type: ignore[operator]
    assert row["agent_status"] == "done"


def _with_permissions(scenario: BuiltScenario, extra: str) -> Path:
    text = scenario.contracts[0].read_text()
    path = scenario.contracts[0].parent / "budget.toml"
    path.write_text(text.replace("[permissions]\n", "[permissions]\n" + extra + "\n", 1))
    return path


def test_baseline_looping_past_its_token_budget_stops_with_its_status(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    live: None,
) -> None:
    contract = _with_permissions(parser, "token_budget = 700")
    out = tmp_path / "run"
    with scripted_endpoint([LOCALISE, "Let me think about it some more."], 300) as endpoint:
        _serve(monkeypatch, endpoint)
        row = _run(capsys, contract, "baseline:fake-coder", out)
    assert row["agent_status"] == "budget_exceeded"
    assert "tokens budget of 700 reached (spent 900)" in str(row["agent_detail"])
    assert len(endpoint.chat_calls()) == 3  # localise, two samples; the fourth never sent
    assert row["accepted"] is False  # judged on what it left: nothing
    assert "patch_is_a_new_state" in row["failed"]  # type: ignore[operator]
    trajectory = _trajectory(out)
    assert trajectory.status == "budget_exceeded" and trajectory.model_calls == 3


def test_sample_budget_of_the_contract_caps_the_samples(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    live: None,
) -> None:
    contract = _with_permissions(parser, "sample_budget = 2")
    out = tmp_path / "run"
    with scripted_endpoint([LOCALISE, "No edit from me."]) as endpoint:
        _serve(monkeypatch, endpoint)
        row = _run(capsys, contract, "baseline:fake-coder", out)
    assert len(endpoint.chat_calls()) == 3
    assert row["agent_status"] == "agent_error"
    assert row["agent_detail"] == "no usable edit in 2 samples (none applied exactly)"


def test_unreachable_endpoint_is_the_agents_failure(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    live: None,
) -> None:
    with scripted_endpoint([]) as gone:
        url = gone.base_url  # a port nothing listens on once the block ends
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    out = tmp_path / "run"
    row = _run(capsys, parser.contracts[0], "baseline:fake-coder", out)
    assert row["agent_status"] == "agent_error"
    assert str(row["agent_detail"]).startswith("model call failed: APIConnectionError")
    assert row["outcome"] == "rejected"
    manifest = json.loads((out / "manifest.json").read_text())
    assert "APIConnectionError" in manifest["agents"][0]["reported_model"]["error"]
    assert _trajectory(out).steps[-1].error  # type: ignore[union-attr]
    _no_key_anywhere(out)


def test_answer_with_no_matching_edit_is_the_agents_failure(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    live: None,
) -> None:
    """An edit whose SEARCH text is not in the file is rejected, never applied loosely."""
    wrong = FIX.replace("is below {low}", "is under {low}")
    out = tmp_path / "run"
    with scripted_endpoint([LOCALISE, wrong]) as endpoint:
        _serve(monkeypatch, endpoint)
        row = _run(capsys, parser.contracts[0], "baseline:fake-coder", out)
    assert row["agent_status"] == "agent_error"
    assert "no usable edit in 4 samples" in str(row["agent_detail"])
    assert row["accepted"] is False
    edits = [s for s in _trajectory(out).steps if s.kind == "edit"]
    assert edits[0].applied is False
    assert edits[0].detail == "SEARCH occurs 0 times, not once"


def test_missing_key_is_one_line_and_exit_2(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "run"
    code = main(
        ["run", str(parser.contracts[0]), "--agent", "baseline:fake-coder", "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert err.startswith("error: OPENAI_API_KEY is not set") and err.count("\n") == 1
    assert not out.exists()


def test_replay_of_a_recorded_trajectory_is_accepted_without_an_endpoint(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    live: None,
) -> None:
    first = tmp_path / "first"
    with scripted_endpoint([LOCALISE, FIX]) as endpoint:
        _serve(monkeypatch, endpoint)
        _run(capsys, parser.contracts[0], "baseline:fake-coder", first)
    recording = tmp_path / "recorded.json"
    recording.write_bytes(
        next((first / "attempts").iterdir()).joinpath("agent", "trajectory.json").read_bytes()
    )
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    again = tmp_path / "again"
    code, rows = run_json(
        capsys,
        str(parser.contracts[0]),
        *("--agent", f"baseline:@{recording}", "--agent", "null", "--out", str(again)),
    )
    assert code == ExitCode.OK
    replayed = next(r for r in rows if r["agent"] != "null")
    assert replayed["accepted"] is True and replayed["agent_status"] == "done"
    # The report's autonomy rule can take the baseline agent as its baseline.
    assert main(["report", str(again), "--json", "--baseline", "baseline:@recorded"]) == ExitCode.OK
    report = json.loads(capsys.readouterr().out)
    assert report["baseline"] == "baseline:@recorded"
