"""`report --format swebench` over a real run of predictions files: a missing row is not an empty patch.

SWE-bench's ``harness/reporting.py`` ``make_run_report`` puts an instance the predictions have no
row for among ``incomplete_ids`` (``if instance_id not in predictions: incomplete_ids.add``),
an instance whose row has an empty ``model_patch`` among ``empty_patch_ids``, and counts
``submitted_instances`` as the predictions it was given (``len(predictions)``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repogate.cli import ExitCode, main
from repogate.tasks.scenarios import build_scenario

pytestmark = pytest.mark.slow

PARSER, GAUGE = "parser-bounded-config", "gauge-clamp-percent"


def _write(path: Path, *instances: str) -> Path:
    """A predictions file with an empty-patch row for each of ``instances``."""
    rows = [{"instance_id": i, "model_name_or_path": "m", "model_patch": ""} for i in instances]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One run of the parser and weak-oracle contracts with three predictions files: ``missing``
    (a row for neither), ``empty`` (an empty-patch row for both), ``mixed`` (an empty-patch row
    for the parser contract, none for the other)."""
    tmp = tmp_path_factory.mktemp("swebench")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REPOGATE_CACHE", str(tmp / "cache"))
        parser = build_scenario("parser", tmp / "parser")
        gauge = build_scenario("weak-oracle", tmp / "gauge")
        files = [
            _write(tmp / "missing.jsonl", "some-other-instance"),
            _write(tmp / "empty.jsonl", PARSER, GAUGE),
            _write(tmp / "mixed.jsonl", PARSER),
        ]
        out = tmp / "run"
        agents = [w for f in files for w in ("--agent", f"predictions:{f}")]
        contracts = [str(parser.contracts[0]), str(gauge.contracts[0]), "--out", str(out)]
        assert main(["run", *contracts, *agents]) == ExitCode.OK
        yield out


def _swebench(capsys: pytest.CaptureFixture[str], run_dir: Path, agent: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["report", str(run_dir), "--format", "swebench", "--agent", agent]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def _counts(report: dict[str, Any]) -> tuple[Any, ...]:
    keys = ("total", "submitted", "completed", "empty_patch", "error")
    return tuple(report[f"{k}_instances"] for k in keys)


def test_a_missing_row_is_incomplete_and_not_submitted(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _swebench(capsys, run_dir, "missing")
    assert _counts(report) == (2, 0, 0, 0, 0)
    assert report["incomplete_ids"] == [GAUGE, PARSER]
    assert report["submitted_ids"] == [] and report["empty_patch_ids"] == []


def test_a_row_with_an_empty_patch_is_submitted_and_an_empty_patch(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _swebench(capsys, run_dir, "empty")
    assert _counts(report) == (2, 2, 0, 2, 0)
    assert report["empty_patch_ids"] == report["submitted_ids"] == [GAUGE, PARSER]
    assert report["incomplete_ids"] == []


def test_a_mixed_file_splits_the_two(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = _swebench(capsys, run_dir, "mixed")
    assert _counts(report) == (2, 1, 0, 1, 0)
    assert report["submitted_ids"] == report["empty_patch_ids"] == [PARSER]
    assert report["incomplete_ids"] == [GAUGE]
    assert report["resolved_ids"] == report["unresolved_ids"] == report["error_ids"] == []
