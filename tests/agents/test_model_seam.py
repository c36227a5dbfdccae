"""The model seam's parts without a run: specs, search/replace edits, the recorder, budgets."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from _model_endpoint import REPORTED_MODEL, scripted_endpoint
from repogate.agent_spec import ModelSpec, parse_agent_spec
from repogate.agents import fingerprint
from repogate.agents._edits import EditSession, parse_edits
from repogate.agents._localise import rank
from repogate.agents.model_agent import endpoint_of
from repogate.errors import AgentSpecError, BudgetExceeded, ModelError
from repogate.models.meter import Budget, Meter
from repogate.models.openai_compat import OpenAIModel, Sampling, require_key
from repogate.models.replay import ReplayModel
from repogate.models.trajectory import ModelCall, Recorder, write_trajectory
from repogate.protocols import ChatMessage, ModelReply, Usage


def test_model_specs_read_model_config_and_replay() -> None:
    spec = parse_agent_spec("baseline:gpt-4o-mini:cfg.toml")
    assert isinstance(spec, ModelSpec)
    assert (spec.model, spec.config, spec.name) == (
        "gpt-4o-mini",
        Path("cfg.toml"),
        "baseline:gpt-4o-mini",
    )
    # A colon inside the model name is kept when what follows is no configuration file.
    tagged = parse_agent_spec("mini:qwen2.5-coder:7b")
    assert isinstance(tagged, ModelSpec) and (tagged.model, tagged.config) == (
        "qwen2.5-coder:7b",
        None,
    )
    replay = parse_agent_spec("baseline:@runs/trajectory.json")
    assert isinstance(replay, ModelSpec)
    assert replay.replay == Path("runs/trajectory.json") and replay.name == "baseline:@trajectory"
    with pytest.raises(AgentSpecError, match="needs an argument"):
        parse_agent_spec("baseline:")


def test_fingerprint_covers_the_configuration_and_the_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rerun under another configuration must not pass for the same agent."""
    config = tmp_path / "cfg.toml"
    config.write_text("samples = 2\n")
    spec = parse_agent_spec(f"baseline:m:{config}")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    first = fingerprint(spec)
    config.write_text("samples = 3\n")
    second = fingerprint(spec)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:2/v1")
    third = fingerprint(spec)
    assert len({first, second, third}) == 3


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(AgentSpecError, match="OPENAI_API_KEY is not set"):
        require_key()


REPLY = """first
a/b.py
<<<<<<< SEARCH
x = 1
=======
x = 2
>>>>>>> REPLACE
### new.py
```python
<<<<<<< SEARCH
=======
print("new")
>>>>>>> REPLACE
```
"""


def test_edits_apply_exactly_and_undo(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.py").write_text("x = 1\ny = 1\n")
    edits = parse_edits(REPLY)
    assert [(e.path, e.search, e.replace) for e in edits] == [
        ("a/b.py", "x = 1\n", "x = 2\n"),
        ("new.py", "", 'print("new")\n'),
    ]
    session = EditSession(tmp_path)
    steps, ok = session.apply_all(edits)
    assert ok and [s.applied for s in steps] == [True, True]
    assert (tmp_path / "a" / "b.py").read_text() == "x = 2\ny = 1\n"
    session.undo()
    assert (tmp_path / "a" / "b.py").read_text() == "x = 1\ny = 1\n"
    assert not (tmp_path / "new.py").exists()


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (
            "f.py\n<<<<<<< SEARCH\nz = 9\n=======\nz = 0\n>>>>>>> REPLACE\n",
            "SEARCH occurs 0 times, not once",
        ),
        (
            "f.py\n<<<<<<< SEARCH\nq\n=======\nr\n>>>>>>> REPLACE\n",
            "SEARCH occurs 2 times, not once",
        ),
        (
            "../f.py\n<<<<<<< SEARCH\nq\n=======\nr\n>>>>>>> REPLACE\n",
            "'../f.py' is not a path inside the workspace",
        ),
        (
            ".git/config\n<<<<<<< SEARCH\n=======\nr\n>>>>>>> REPLACE\n",
            "'.git/config' is not a path inside the workspace",
        ),
        ("f.py\n<<<<<<< SEARCH\n=======\nr\n>>>>>>> REPLACE\n", "the file exists, not once"),
    ],
)
def test_an_edit_that_does_not_match_exactly_is_rejected_and_the_sample_undone(
    tmp_path: Path, reply: str, why: str
) -> None:
    (tmp_path / "f.py").write_text("q\nq\n")
    (tmp_path / "g.py").write_text("keep\n")
    first = "g.py\n<<<<<<< SEARCH\nkeep\n=======\nchanged\n>>>>>>> REPLACE\n"
    steps, ok = EditSession(tmp_path).apply_all(parse_edits(first + reply))
    assert not ok and steps[-1].detail == why
    assert (tmp_path / "g.py").read_text() == "keep\n"  # the whole sample undone


def test_an_edit_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    """A sandboxed command could plant a link in the workspace; the harness must not follow it."""
    outside = tmp_path / "outside.txt"
    outside.write_text("x = 1\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "f.py").symlink_to(outside)
    (workspace / "d").symlink_to(tmp_path, target_is_directory=True)
    edits = parse_edits(
        "f.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n"
        "d/outside.txt\n<<<<<<< SEARCH\nx = 1\n=======\nx = 3\n>>>>>>> REPLACE\n"
    )
    for edit in edits:
        step = EditSession(workspace).apply(edit)
        assert not step.applied and "cannot be read" in step.detail
    assert outside.read_text() == "x = 1\n"


def test_bm25_puts_the_matching_file_first() -> None:
    files = {
        "README.md": "A parser library.",
        "pkg/limits.py": "def check_upper_bound(value, high):\n    return value <= high\n",
        "pkg/io.py": "def read(path):\n    return open(path).read()\n",
    }
    ranked = rank(files, "values above their upper bounds are rejected", 2)
    assert ranked[0][0] == "pkg/limits.py" and ranked[0][1] > 0
    assert len(ranked) == 2


def _reply(text: str, tokens: int) -> ModelReply:
    return ModelReply(text=text, model="m-1", usage=Usage(tokens=tokens, cost_usd=tokens / 1000))


def test_recorder_keeps_each_prompt_once_and_the_replay_answers_in_order(tmp_path: Path) -> None:
    recorder = Recorder()
    system = ChatMessage(role="system", content="s")
    ask = ChatMessage(role="user", content="u")
    recorder.call([system, ask], 0.0, _reply("a1", 10), 0.1)
    then = ChatMessage(role="user", content="u2")
    recorder.call(
        [system, ask, ChatMessage(role="assistant", content="a1"), then], 0.0, _reply("a2", 5), 0.1
    )
    recorder.call([system], 0.5, None, 0.1, error="down")
    calls = [s for s in recorder.steps if isinstance(s, ModelCall)]
    assert [c.continues for c in calls] == [0, 3, 0]
    assert calls[1].messages == (then,)
    trajectory = recorder.finish("baseline:m", "m", "done", "")
    assert trajectory.usage.tokens == 15 and trajectory.model_calls == 3
    write_trajectory(tmp_path, trajectory)
    replay = ReplayModel(tmp_path / "trajectory.json")
    assert [replay.complete([ask], 0.0).text for _ in range(2)] == ["a1", "a2"]
    with pytest.raises(ModelError, match="no more replies"):
        replay.complete([ask], 0.0)


def test_meter_stops_at_each_budget(tmp_path: Path) -> None:
    recorder = Recorder()
    for n in range(3):
        recorder.call([ChatMessage(role="user", content=str(n))], 0.0, _reply("r", 400), 0.0)
    write_trajectory(tmp_path, recorder.finish("", "", "", ""))
    ask = [ChatMessage(role="user", content="?")]
    for budget, which in (
        (Budget(wall_time_s=60, tokens=700), "tokens"),
        (Budget(wall_time_s=60, cost_usd=0.5), "cost_usd"),
    ):
        meter = Meter(ReplayModel(tmp_path / "trajectory.json"), budget, Recorder())
        meter.complete(ask)
        meter.complete(ask)  # 800 tokens, $0.80: kept, paid for
        with pytest.raises(BudgetExceeded) as caught:
            meter.complete(ask)
        assert caught.value.which == which
    late = Meter(ReplayModel(tmp_path / "trajectory.json"), Budget(wall_time_s=1e-9), Recorder())
    with pytest.raises(BudgetExceeded, match="wall_time_s"):
        late.complete(ask)


def test_openai_model_over_http_prices_tokens_and_keeps_the_key_out_of_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "sk-unit-secret"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    sampling = Sampling(price_prompt_per_mtok=1.0, price_completion_per_mtok=3.0, seed=7)
    with scripted_endpoint(["hello"], tokens_per_call=1000) as endpoint:
        monkeypatch.setenv("OPENAI_BASE_URL", endpoint.base_url)
        model = OpenAIModel("m", sampling)
        reply = model.complete([ChatMessage(role="user", content="hi")], 0.3)
        assert model.reported()["id"] == REPORTED_MODEL
    assert (reply.text, reply.model, reply.usage.tokens) == ("hello", REPORTED_MODEL, 1000)
    assert reply.usage.cost_usd == pytest.approx((500 * 1.0 + 500 * 3.0) / 1e6)
    (body,) = endpoint.chat_calls()
    assert (body["temperature"], body["seed"], body["max_tokens"]) == (0.3, 7, 4096)
    assert key not in str(model.describe())
    assert key.encode() not in pickle.dumps(model)  # its client, which holds the key, stays here
    with scripted_endpoint(["priced"], cost_per_call=0.0125) as priced:
        monkeypatch.setenv("OPENAI_BASE_URL", priced.base_url)
        said = model.complete([ChatMessage(role="user", content="hi")], 0.0)
    assert said.usage.cost_usd == 0.0125  # the endpoint's own figure beats the configured prices
    monkeypatch.setenv("OPENAI_BASE_URL", priced.base_url)  # nothing listens there now
    offline = OpenAIModel("m", Sampling(max_retries=0, timeout_s=5))
    with pytest.raises(ModelError) as caught:
        offline.complete([ChatMessage(role="user", content="hi")], 0.0)
    assert key not in str(caught.value) and "APIConnectionError" in str(caught.value)
    assert "error" in offline.reported()
    assert os.environ["OPENAI_API_KEY"] == key


def test_model_agents_travel_to_worker_processes_without_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent is pickled to a worker (``--workers``): it must go whole, and carry no key."""
    from repogate.agents import make_agent
    from repogate.contract import load_contract
    from repogate.tasks.scenarios import build_scenario

    key = "sk-never-pickled-31337"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    built = build_scenario("parser", tmp_path / "scenario")
    contract = load_contract(built.contracts[0])
    for text in ("baseline:m", "mini:m"):
        agent = make_agent(parse_agent_spec(text), contract, built.repo)
        data = pickle.dumps(agent)
        assert key.encode() not in data
        assert pickle.loads(data).spec == text  # noqa: S301 - our own bytes, just made


def test_a_cmd_agents_trajectory_file_is_read_and_a_bad_one_named(tmp_path: Path) -> None:
    from repogate.agents.command import read_agent_output

    good = tmp_path / "good"
    good.mkdir()
    recorder = Recorder()
    recorder.call([ChatMessage(role="user", content="fix it")], 0.0, _reply("done", 42), 1.0)
    write_trajectory(good, recorder.finish("cmd:agent", "m", "done", ""))
    found = read_agent_output(good)
    assert (found["trajectory"], found["model_calls"], found["steps"]) == ("trajectory.json", 1, 0)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "trajectory.json").write_text('{"steps": [{"kind": "dance"}]}')
    said = read_agent_output(bad)
    assert "trajectory" not in said
    assert said["detail"].startswith("trajectory.json is not a repogate trajectory")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "trajectory.json").symlink_to(good / "trajectory.json")
    refused = read_agent_output(linked)
    assert "trajectory" not in refused and refused["refused_links"] == ("trajectory.json",)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://alice:pw-s3cret@127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
        ("http://tok-s3cret@127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
        ("http://127.0.0.1:9/v1?api-key=q-s3cret#f-s3cret", "http://127.0.0.1:9/v1"),
    ],
)
def test_credentials_in_the_endpoint_url_are_never_recorded(
    monkeypatch: pytest.MonkeyPatch, url: str, shown: str
) -> None:
    """Threat (red team): ``OPENAI_BASE_URL`` may carry a secret (userinfo, a key in the query).

    The URL went whole into the model's description, hence the run manifest, every decision's
    agent record and the trajectory; and into error text. Each shape is recorded without it.
    """
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unit-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    model = OpenAIModel("m", Sampling(max_retries=0, timeout_s=2))
    assert model.describe()["endpoint"] == shown
    assert endpoint_of(ModelSpec(kind="baseline", arg="m", model="m")) == shown
    with pytest.raises(ModelError) as caught:
        model.complete([ChatMessage(role="user", content="hi")], 0.0)
    said = f"{caught.value} {model.reported()}"
    assert "s3cret" not in said, said
