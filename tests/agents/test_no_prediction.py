"""A predictions file without a row for an instance: that agent's empty patch, as SWE-bench counts it.

SWE-bench's harness scores an instance a model has no prediction for as unresolved (its report's
``empty_patch_ids`` and the denominator of the resolved rate count it). repogate used to refuse the
whole run instead, so one missing row hid every other attempt of the file; ``--require-all-predictions``
keeps that refusal for users who want it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from _git_calls import git_calls
from conftest import run_json
from repogate.cli import ExitCode, main
from repogate.contract import load_contract
from repogate.tasks.scenarios import BuiltScenario, build_scenario
from repogate.tasks.taskset import TaskEntry, TaskSet
from repogate.tasks.validate import Validation

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

    The file covers the run's other contract (the weak-oracle scenario's); a file that covers
    none of them is the next test's."""
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


def _written(tmp_path: Path, shape: str, instance: str) -> Path:
    """A predictions file of ``shape`` (``jsonl``, or ``json``: a JSON list) with one row."""
    row = {"instance_id": instance, "model_name_or_path": "m", "model_patch": "diff --git a b\n"}
    if shape == "jsonl":
        return _preds(tmp_path, instance)
    path = tmp_path / "preds.json"
    path.write_text(json.dumps([row]))
    return path


@pytest.mark.parametrize("shape", ["jsonl", "json"])
@pytest.mark.parametrize("contracts", [1, 2])
def test_a_file_covering_no_contract_of_the_run_is_recorded_as_no_prediction_with_one_warning(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    shape: str,
    contracts: int,
) -> None:
    """Issue 21: a one-instance run with an agent that has no row for it (SWE-agent has none for
    sphinx-7975) was refused ("no row for any of the 1 contracts"), so it could not be recorded.

    Each contract without a row is that agent's empty patch, as for a file that covers some;
    one warning line says the file covers none of them and how to refuse instead."""
    paths = [parser.contracts[0]]
    if contracts == 2:
        paths.append(build_scenario("weak-oracle", tmp_path / "other").contracts[0])
    preds = _written(tmp_path, shape, "sphinx-doc__sphinx-7975")
    spec = f"predictions:{preds}"
    code = main(
        ["run", *map(str, paths), "--agent", spec, "--out", str(tmp_path / "run"), "--json"]
    )
    said = capsys.readouterr()
    rows = json.loads(said.out)
    assert code == ExitCode.OK, said.err
    assert len(rows) == contracts
    assert [r["agent_status"] for r in rows] == ["no_prediction"] * contracts
    assert not any(r["accepted"] or r["resolved"] for r in rows)
    noun = "1 contract" if contracts == 1 else "2 contracts"
    warning = (
        f"warning: agent {spec!r}: the predictions file has no row for any of the {noun} of "
        "this run; each is recorded as no_prediction (pass --require-all-predictions to refuse)"
    )
    assert [line for line in said.err.splitlines() if "predictions file" in line] == [warning]


@pytest.mark.parametrize("shape", ["jsonl", "json"])
def test_require_all_predictions_refuses_a_file_covering_no_contract(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    preds = _written(tmp_path, shape, "sphinx-doc__sphinx-7975")
    out = tmp_path / "run"
    args = [str(parser.contracts[0]), "--agent", f"predictions:{preds}", "--out", str(out)]
    code = main(["run", *args, "--require-all-predictions"])
    err = capsys.readouterr().err
    assert int(code) == 2
    assert err == (
        f"error: predictions file {preds} has no instance 'parser-bounded-config' (it has: "
        "sphinx-doc__sphinx-7975); add a row for that instance_id, run only the contracts it "
        "covers, or drop --require-all-predictions to count it as an empty patch\n"
    )
    assert not out.exists()


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


def _refused(capsys: pytest.CaptureFixture[str], out: Path, *args: str) -> str:
    """Run ``repogate run ARGS --out OUT --require-all-predictions``; return its one error line."""
    code = main(["run", *args, "--out", str(out), "--require-all-predictions"])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    assert err.startswith("error: predictions file") and err.count("\n") == 1, err
    assert not out.exists()  # no store, no attempt, no built scenario
    return err


def test_require_all_predictions_refuses_a_contract_before_any_repository_is_read(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The refusal came after every contract's repository and hidden tests were read (git):
    the contract ids, known once the contract files are read, are enough."""
    preds = _preds(tmp_path, "some-other-instance")
    log = git_calls(tmp_path, monkeypatch)
    contract = str(parser.contracts[0])
    err = _refused(capsys, tmp_path / "run", contract, "--agent", f"predictions:{preds}")
    assert "has no instance 'parser-bounded-config' (it has: some-other-instance)" in err
    assert not log.exists(), log.read_text()[:300]


def test_require_all_predictions_names_every_missing_contract_before_any_repository_is_read(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Several contracts, the file covering one: the others are named at once, in one line."""
    other = build_scenario("weak-oracle", tmp_path / "other")
    third = parser.contracts[0].parent / "third.toml"
    own = parser.contracts[0].read_text()
    third.write_text(own.replace('id = "parser-bounded-config"', 'id = "third"', 1))
    preds = _preds(tmp_path, "gauge-clamp-percent")
    log = git_calls(tmp_path, monkeypatch)
    paths = [str(parser.contracts[0]), str(other.contracts[0]), str(third)]
    err = _refused(capsys, tmp_path / "run", *paths, "--agent", f"predictions:{preds}")
    assert (
        f"error: predictions file {preds} has no instance 'parser-bounded-config', 'third' "
        "(it has: gauge-clamp-percent); add rows for those instance_ids, run only the contracts "
        "it covers, or drop --require-all-predictions to count it as an empty patch\n"
    ) == err
    assert not log.exists(), log.read_text()[:300]


def test_require_all_predictions_refuses_a_task_set_before_any_repository_is_read(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A task-set folder stands for the contracts its ``tasks.jsonl`` lists: read, not run."""
    folder = parser.repo.parent
    contract = load_contract(parser.contracts[0])
    TaskSet(folder).add_task(
        TaskEntry(
            id=contract.id,
            source={},
            contract=parser.contracts[0].name,
            contract_digest=contract.policy_digest(),
            validation=Validation(repeats=1),
        )
    )
    preds = _preds(tmp_path, "some-other-instance")
    log = git_calls(tmp_path, monkeypatch)
    err = _refused(capsys, tmp_path / "run", str(folder), "--agent", f"predictions:{preds}")
    assert "has no instance 'parser-bounded-config'" in err
    assert not log.exists(), log.read_text()[:300]


def test_require_all_predictions_refuses_the_embedded_default_before_building_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red team: the refusal came 41 s in, once every built-in scenario's repository had been
    built (and was then removed). Their contract ids are read from the shipped files instead."""
    from repogate.cli.run import default_contract_ids

    preds = _preds(tmp_path, "parser-bounded-config")
    log = git_calls(tmp_path, monkeypatch)
    started = time.monotonic()
    err = _refused(capsys, tmp_path / "run", "--agent", f"predictions:{preds}")
    took = time.monotonic() - started
    missing = [i for i in default_contract_ids() if i != "parser-bounded-config"]
    named = ", ".join(repr(i) for i in missing[:5])
    assert f"has no instance {named} and {len(missing) - 5} more (it has: " in err
    assert not log.exists(), log.read_text()[:300]  # no scenario repository was built
    assert took < 20, took  # building them took 41 s on a 2-core machine
