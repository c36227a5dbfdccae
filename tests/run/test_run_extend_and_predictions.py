"""Run ergonomics found on real input: extending a run with an agent, a predictions file of several
models, and ``run --json`` carrying what ``show --json`` has."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _scenario_variant import contract_with
from conftest import run_json
from repogate import git
from repogate.cli import ExitCode, main
from repogate.store import Store
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow


def test_adding_an_agent_extends_the_run(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second command naming a new agent adds its attempts; finished ones are kept as they were."""
    out = tmp_path / "run"
    contract = str(parser.contracts[0])
    code, first = run_json(capsys, contract, "--agent", "gold", "--out", str(out))
    assert code == ExitCode.OK
    gold_decision = (out / "attempts" / str(first[0]["attempt_id"]) / "decision.json").read_bytes()
    code, rows = run_json(capsys, contract, "--agent", "null", "--out", str(out))
    assert code == ExitCode.OK
    assert [r["agent"] for r in rows] == ["gold", "null"]
    assert rows[0] == first[0]  # kept, not redone
    gold_path = out / "attempts" / str(first[0]["attempt_id"]) / "decision.json"
    assert gold_path.read_bytes() == gold_decision
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(a["spec"] for a in manifest["agents"]) == ["gold", "null"]
    # the run plans both agents' attempts, not the last command's only: an extended run that
    # was interrupted was reported "complete, 5 of 3 done" (new user)
    assert manifest["planned_attempts"] == 2
    with Store.open(out) as store:
        assert store.changed_evidence() == {}
    # Extending keeps the contracts and epochs: anything else is another run.
    other = contract_with(parser, "", "other.toml")
    other.write_text(other.read_text().replace("time_budget_s = 120", "time_budget_s = 60"))
    assert main(["run", str(other), "--agent", "null", "--out", str(out)]) == ExitCode.USAGE
    assert (
        "its contracts differ (parser-bounded-config: permissions.time_budget_s 60.0 here, 120.0 "
        "in the run); give the same contracts"
    ) in capsys.readouterr().err
    code = main(["run", contract, "--agent", "null", "--epochs", "2", "--out", str(out)])
    assert code == ExitCode.USAGE
    assert "give --epochs 1" in capsys.readouterr().err


def test_a_predictions_file_of_several_models_is_one_agent_per_model(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = git.diff_binary(
        parser.repo, parser.commits["base"], parser.commits["fix"], (), ["tests/"]
    ).decode()
    preds = tmp_path / "preds.jsonl"
    rows = [
        {"instance_id": "parser-bounded-config", "model_name_or_path": m, "model_patch": p}
        for m, p in (("org/model-good", good), ("model-empty", ""))
    ]
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    code, results = run_json(
        capsys, str(parser.contracts[0]), "--agent", f"predictions:{preds}", "--out", str(out)
    )
    assert code == ExitCode.OK
    verdicts = {str(r["agent"]): r["outcome"] for r in results}
    assert verdicts == {
        f"predictions:{preds}#model-empty": "rejected",
        f"predictions:{preds}#org/model-good": "accepted",
    }
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(a["model"] for a in manifest["agents"]) == ["model-empty", "org/model-good"]
    assert main(["show", str(out)]) == ExitCode.OK
    table = capsys.readouterr().out
    assert "org/model-good" in table and "model-empty" in table  # named by the model


def test_run_json_has_wall_time_failing_tests_and_the_sentinel(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code, rows = run_json(capsys, str(parser.contracts[0]), "--agent", "null", "--out", str(out))
    assert code == ExitCode.OK
    (row,) = rows
    assert isinstance(row["wall_time_s"], float) and row["wall_time_s"] > 0
    assert row["failing_tests"] == [
        "tests/test_limits.py::test_upper_bounds[retries=11]",
        "tests/test_limits.py::test_upper_bounds[timeout=301]",
        "tests/test_limits.py::test_upper_bounds[timeout=1000]",
        "tests/test_limits.py::test_unknown_key_rejected",
    ]
    assert main(["show", str(out), "--json"]) == ExitCode.OK
    (shown,) = json.loads(capsys.readouterr().out)
    assert row["sentinel"] == {
        "status": shown["decision"]["stages"]["sentinel passed"],
        "checks": [],
    }
    assert row["wall_time_s"] == shown["decision"]["soft"]["wall_time_s"]
    assert row["checks"] == shown["decision"]["checks"]


def test_a_moved_run_folder_plans_the_same_inputs(tmp_path: Path) -> None:
    """A copied or moved run folder of the embedded default must resume: its contracts (by
    policy digest) and agents (by spec, hence attempt id) may not name the folder's old path,
    or the copy is refused as "a run of other inputs" (the contracts named ``repo`` by its
    absolute path, and the shipped scripted agents their files)."""
    from repogate.cli.run import default_plans
    from repogate.store import attempt_id_for

    def inputs(out: Path) -> list[tuple[str, str, str]]:
        return [
            (
                p.contract.policy_digest(),
                p.agent_spec.text,
                attempt_id_for(p.contract.id, p.agent_spec, 0),
            )
            for p in default_plans(out.resolve(), [])
        ]

    first = inputs(tmp_path / "first")
    assert first == inputs(tmp_path / "elsewhere" / "moved")
    assert not any(str(tmp_path) in text for _, text, _ in first)


def test_a_contract_named_twice_runs_once_and_two_files_of_one_id_are_refused(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same contract given twice ran every attempt twice, silently (new user); two files
    holding one task id would share attempt ids."""
    contract = str(parser.contracts[0])
    out = tmp_path / "run"
    code, rows = run_json(capsys, contract, contract, "--agent", "gold", "--out", str(out))
    assert code == ExitCode.OK
    assert [r["agent"] for r in rows] == ["gold"]
    twin = contract_with(parser, "", "twin.toml")
    assert main(["run", contract, str(twin), "--agent", "gold", "--out", str(tmp_path / "r2")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: two contracts share the id 'parser-bounded-config'"), err
    assert not (tmp_path / "r2").exists()
