"""Names a predictions file holds reach one error line cut, and counted past a few (red team rt33).

A predictions file is a model's output: its ``instance_id`` and ``model_name_or_path`` values are
the model's to choose. ``--require-all-predictions`` named the file's ids in full (``it has:
...``), and a file of several models listed every model name in full: a 100,000-character id made
a 100 KB "one line" error, and 2,000 models a 30 KB one. Each name is now cut, and past
:data:`repogate.agents.predictions.SHOWN` names the rest are counted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repogate.agent_spec import PredSpec
from repogate.agents.predictions import SHOWN, require_predictions
from repogate.errors import AgentSpecError

LONG = "x" * 100_000
LINE = 2_000
"""An error line is at most this many characters here (it was 100 KB and more)."""


def _file(tmp_path: Path, rows: list[tuple[str, str]]) -> Path:
    path = tmp_path / "preds.jsonl"
    lines = (
        json.dumps({"instance_id": i, "model_name_or_path": m, "model_patch": ""}) for i, m in rows
    )
    path.write_text("\n".join(lines) + "\n")
    return path


def _refusal(path: Path, model: str | None = None) -> str:
    spec = PredSpec(arg=str(path), file=path, model=model, require_all=True)
    with pytest.raises(AgentSpecError) as caught:
        require_predictions([spec], ["wanted-1"])
    return str(caught.value)


def test_a_huge_instance_id_is_cut_in_the_missing_row_refusal(tmp_path: Path) -> None:
    message = _refusal(_file(tmp_path, [(LONG, "m")]))
    assert "has no instance 'wanted-1'" in message
    assert len(message) < LINE, len(message)
    assert "xxx..." in message


def test_huge_model_names_are_cut_in_the_several_models_refusal(tmp_path: Path) -> None:
    message = _refusal(_file(tmp_path, [("wanted-1", LONG + "a"), ("wanted-1", LONG + "b")]))
    assert "holds 2 models" in message
    assert len(message) < LINE, len(message)


def test_many_models_are_counted_past_the_first_few(tmp_path: Path) -> None:
    rows = [("wanted-1", f"model-{n:04d}") for n in range(2_000)]
    message = _refusal(_file(tmp_path, rows))
    assert "holds 2000 models" in message
    assert len(message) < LINE, len(message)
    assert f"model-{SHOWN - 1:04d}" in message and f"model-{SHOWN:04d}" not in message
    assert f"and {2_000 - SHOWN} more" in message


def test_an_unknown_model_names_the_files_models_cut_and_counted(tmp_path: Path) -> None:
    rows = [("wanted-1", LONG + str(n)) for n in range(50)]
    message = _refusal(_file(tmp_path, rows), model="other")
    assert "has no model 'other'" in message
    assert len(message) < LINE, len(message)
    assert f"and {50 - SHOWN} more" in message
