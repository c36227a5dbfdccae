"""The run manifest's records: typed agent and executor entries, and manifests written before them.

``tests/store/manifests/before-typed-agents.json`` was written by the manifest writer when ``agents`` and
``executor`` were plain dicts, with an entry of every shape an agent's or executor's ``describe``
gives (gold, null, cmd, commit, scripted, predictions without a row, baseline, mini; Ray).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from repogate.store import AgentEntry, ExecutorEntry, RunManifest

BEFORE = Path(__file__).parent / "manifests" / "before-typed-agents.json"


def test_a_manifest_written_before_typed_entries_loads_typed() -> None:
    manifest = RunManifest.model_validate_json(BEFORE.read_text())
    gold, _null, cmd, commit, scripted, pred, baseline, mini = manifest.agents
    assert (gold.spec, gold.model, gold.scaffold) == ("gold", "gold", "reference patch")
    assert cmd.argv == ("python3", "/abs/agent.py") and cmd.model is None
    assert commit.commit == "b" * 40
    assert scripted.description == "does it all"
    assert pred.spec == "pred:preds.jsonl#m" and pred.model is None
    assert baseline.kind == "baseline" and baseline.config == {"samples": 2, "temperature": 0.0}
    assert mini.limits == {"step_limit": 30} and mini.reported_model == {
        "id": "gpt",
        "source": "replay",
    }
    assert manifest.executor == ExecutorEntry(name="ray", workers=None, ray="2.40.0")


def test_it_is_written_back_with_the_keys_it_had() -> None:
    """The typed entries write back what the untyped ones held (fields added since to other
    parts, such as a contract's profile version or the isolation's root, are not theirs)."""
    manifest = RunManifest.model_validate_json(BEFORE.read_text())
    after, before = json.loads(manifest.model_dump_json()), json.loads(BEFORE.read_text())
    assert (after["agents"], after["executor"]) == (before["agents"], before["executor"])
    assert set(before) <= set(after)


def test_entries_give_only_the_keys_their_agent_gave() -> None:
    assert AgentEntry(spec="null", model="null").model_dump() == {"spec": "null", "model": "null"}
    assert AgentEntry(spec="pred:p#m", model=None).model_dump() == {
        "spec": "pred:p#m",
        "model": None,
    }
    assert ExecutorEntry(name="local", workers=2).model_dump() == {"name": "local", "workers": 2}
    data = json.loads(BEFORE.read_text())
    del data["executor"]["ray"]
    assert RunManifest.model_validate(data).executor.model_dump() == {
        "name": "ray",
        "workers": None,
    }
    del data["executor"]  # written before executors were recorded: the one executor there was
    assert RunManifest.model_validate(data).executor.model_dump() == {"name": "local", "workers": 1}


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("agent", '"scaffold": "none",\n      "comit": "x",'),
        ("executor", '"name": "ray",\n    "worker": 2,'),
    ],
)
def test_a_misspelt_entry_key_is_refused(where: str, text: str) -> None:
    before = BEFORE.read_text()
    first = '"scaffold": "none",' if where == "agent" else '"name": "ray",'
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        RunManifest.model_validate_json(before.replace(first, text, 1))
