"""A predictions file without a row for an instance: that agent's empty patch, as SWE-bench counts it.

SWE-bench's harness scores an instance a model has no prediction for as unresolved (its report's
``empty_patch_ids`` and the denominator of the resolved rate count it). repogate used to refuse the
whole run instead, so one missing row hid every other attempt of the file; ``--require-all-predictions``
keeps that refusal for users who want it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_json
from repogate.cli import ExitCode, main
from repogate.tasks.scenarios import BuiltScenario, build_scenario

pytestmark = pytest.mark.slow


def _preds(tmp_path: Path, instance: str) -> Path:
    path = tmp_path / "preds.jsonl"
    row = {"instance_id": instance, "model_name_or_path": "m", "model_patch": "diff --git a b\n"}
    path.write_text(json.dumps(row) + "\n")
    return path


def test_a_missing_row_is_the_agents_empty_patch_counted_and_named(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing row must not pass, must not vanish from the count, and must say why.

    The file covers the run's other contract (the weak-oracle scenario's): a file that covers
    none of the run's contracts is the wrong file, refused (``tests/cli/test_bad_input.py``)."""
    other = build_scenario("weak-oracle", tmp_path / "other")
    preds = _preds(tmp_path, "gauge-clamp-percent")
    code, rows = run_json(
        capsys,
        str(parser.contracts[0]),
        str(other.contracts[0]),
        *("--agent", f"predictions:{preds}", "--out", str(tmp_path / "run")),
    )
    assert code == ExitCode.OK
    assert len(rows) == 2  # counted: both attempts exist and are decided
    (row,) = [r for r in rows if r["contract"] == "parser-bounded-config"]
    assert row["agent_status"] == "no_prediction"
    assert row["accepted"] is False and row["resolved"] is False
    assert row["outcome"] == "rejected"
    assert "patch_is_a_new_state" in row["failed"]  # type: ignore[operator]
    assert "no row for instance 'parser-bounded-config'" in str(row["agent_detail"])


def test_require_all_predictions_refuses_a_missing_row_in_one_line(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preds = _preds(tmp_path, "some-other-instance")
    out = tmp_path / "run"
    code = main(
        [
            "run",
            str(parser.contracts[0]),
            *("--agent", f"predictions:{preds}", "--out", str(out)),
            "--require-all-predictions",
        ]
    )
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert int(code) == 2
    assert err.startswith("error: predictions file") and err.count("\n") == 1
    assert "has no instance 'parser-bounded-config'" in err
    assert not out.exists()  # bad input writes nothing
