"""The weak-oracle scenario: surviving mutants, weak_oracle, and a wrong-but-passing agent flagged.

The gauge task's tests check only the upper side of a clamp. The ``upper-only`` agent passes every
graded test and every hard check, so it is accepted; the differential oracle (advisory here)
finds the input that tells it from the reference, shrunk to ``value=-1``. Gold, compared with
itself, shows no difference. ``tasks strength`` finds surviving mutants of the reference and tags
the task ``weak_oracle``, as the scenario's contract says.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import tomli_w

from conftest import stored_attempts
from repogate.cli import main
from repogate.contract import load_contract
from repogate.errors import ContractError
from repogate.store import AttemptRecord
from repogate.tasks.scenarios import BuiltScenario, build_scenario
from repogate.tasks.taskset import Selection, TaskEntry, TaskSet
from repogate.tasks.validate import Validation

CHECK = "behaviour_matches_reference"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltScenario:
    return build_scenario("weak-oracle", tmp_path_factory.mktemp("weak"))


def _run(built: BuiltScenario, contract: Path, out: Path, cache: Path) -> dict[str, AttemptRecord]:
    agent = f"scripted:{built.agents[0]}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REPOGATE_CACHE", str(cache))
        code = main(
            [
                "run",
                str(contract),
                "--agent",
                "gold",
                "--agent",
                "null",
                "--agent",
                agent,
                "--out",
                str(out),
            ]
        )
    assert code == 0
    return _records(out)


def _records(out: Path) -> dict[str, AttemptRecord]:
    return {r.agent.rsplit("/", 1)[-1].removesuffix(".toml"): r for r in stored_attempts(out)}


@pytest.fixture(scope="module")
def run_dir(built: BuiltScenario, cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("run") / "run"
    _run(built, built.contracts[0], folder, cache)
    return folder


@pytest.fixture(scope="module")
def runs(run_dir: Path) -> dict[str, AttemptRecord]:
    return _records(run_dir)


def _advisory(record: AttemptRecord) -> tuple[str, str]:
    assert record.decision is not None
    found = [c for c in record.decision.advisory if c.name == CHECK]
    assert len(found) == 1, record.decision.advisory
    return found[0].status, found[0].detail


def test_gold_is_never_flagged(runs: dict[str, AttemptRecord]) -> None:
    """The reference compared with itself: 0 differences."""
    assert runs["gold"].decision is not None and runs["gold"].decision.accepted
    status, detail = _advisory(runs["gold"])
    assert status == "passed"
    assert (
        detail == "1 function(s), 100 inputs in both states (100 returned, 0 raised), 0 differences"
    )


def test_a_wrong_but_passing_agent_is_accepted_and_flagged_with_the_shrunk_input(
    runs: dict[str, AttemptRecord],
) -> None:
    decision = runs["upper-only"].decision
    assert decision is not None and decision.accepted  # advisory: the verdict is the tests'
    status, detail = _advisory(runs["upper-only"])
    assert status == "failed"
    assert detail.startswith(
        "differs from the reference on gauge.percent.clamp_percent(value=-1): "
        "the candidate returned -1"
    )


def test_a_rejected_candidate_is_not_compared_and_says_so(runs: dict[str, AttemptRecord]) -> None:
    status, detail = _advisory(runs["null"])
    assert (status, detail) == (
        "skipped",
        "not applicable: the candidate did not pass its graded tests",
    )


def test_the_report_counts_accepted_attempts_that_differ(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(run_dir), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {r["agent"]: r for r in report["differs"]}
    assert (rows["gold"]["accepted"], rows["gold"]["compared"], rows["gold"]["differs"]) == (
        1,
        1,
        0,
    )
    flagged = rows["upper-only"]
    assert (flagged["accepted"], flagged["differs"]) == (1, 1)
    assert "clamp_percent(value=-1)" in flagged["attempts"][0]["detail"]
    page = run_dir.parent / "page.html"
    assert main(["report", str(run_dir), "--html", str(page)]) == 0
    html = page.read_text()
    assert "Accepted, differs from reference" in html and "-V-differential.intoto.json" in html


def test_a_contract_can_make_the_differential_oracle_hard(
    built: BuiltScenario, cache: Path, tmp_path: Path
) -> None:
    data = tomllib.loads(built.contracts[0].read_text())
    data["oracles"]["differential"] = "hard"
    hard = built.contracts[0].with_name("hard.toml")
    hard.write_text(tomli_w.dumps(data))
    runs = _run(built, hard, tmp_path / "run", cache)
    upper = runs["upper-only"].decision
    assert upper is not None and upper.failed == (CHECK,)
    gold = runs["gold"].decision
    assert gold is not None and gold.accepted and gold.advisory == ()


def test_strength_finds_survivors_and_tags_the_task_weak(
    built: BuiltScenario,
    cache: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A task set: the record is appended, the contract tagged, a rerun measures nothing again."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    root = tmp_path / "set"
    taskset = TaskSet.create(root, Selection(source="mined", origin="gauge", rule="one", repeats=1))
    folder = taskset.contract_dir("gauge-clamp-percent")
    folder.mkdir(parents=True)
    data = tomllib.loads(built.contracts[0].read_text())
    data["repo"] = str(built.repo)
    (folder / "contract.toml").write_text(tomli_w.dumps(data))
    taskset.add_task(
        TaskEntry(
            id="gauge-clamp-percent",
            source={"repo": "gauge"},
            contract="contracts/gauge-clamp-percent/contract.toml",
            contract_digest="",
            validation=Validation(repeats=1, validation_seconds=2.0, gold_seconds=3.0),
        )
    )
    assert main(["tasks", "strength", str(root), "--budget", "4"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "gauge-clamp-percent: mutation score 0.25 (1 killed, 3 survived, 0 equivalent-looking, "
        "0 equivalent, 0 invalid, 0 errors; 4 run of 10 made); weak_oracle yes; cost "
    )
    assert "x its validation (5.0 s)" in out
    assert "survived: gauge/percent.py:13 '< 0' -> '<= 0' (operator_swap_op)" in out
    record = json.loads((root / "strength.jsonl").read_text())
    survivors = [m for m in record["mutants"] if m["status"] == "survived"]
    assert len(survivors) == 3 and all(
        m["diff"].startswith("diff --git a/gauge/percent.py") for m in survivors
    )
    killed = [m for m in record["mutants"] if m["status"] == "killed"]
    assert [m["reason"] for m in killed] == ["focused_tests_passed"]
    cohort = tomllib.loads((folder / "contract.toml").read_text())["cohort"]
    assert (cohort["weak_oracle"], cohort["mutation_score"]) == ("yes", "0.25")
    assert (
        cohort["weak_oracle"]
        == tomllib.loads(built.contracts[0].read_text())["cohort"]["weak_oracle"]
    )
    assert main(["tasks", "strength", str(root), "--budget", "4"]) == 0  # resumed: nothing runs
    assert capsys.readouterr().out.startswith("gauge-clamp-percent: mutation score 0.25")
    assert len((root / "strength.jsonl").read_text().splitlines()) == 1


@pytest.mark.parametrize("name", ["no_such", "lists", "_internal"])
def test_a_strategy_hypothesis_cannot_draw_alone_is_refused_when_the_contract_loads(
    built: BuiltScenario, name: str
) -> None:
    """Bad input is named at load time (``lists`` needs an argument), never met mid-run."""
    data = tomllib.loads(built.contracts[0].read_text())
    data["oracles"]["strategies"] = {"gauge.percent.clamp_percent": {"value": name}}
    bad = built.contracts[0].with_name(f"bad-{name}.toml")
    bad.write_text(tomli_w.dumps(data))
    with pytest.raises(ContractError, match=f"clamp_percent.value = '{name}' is not a function"):
        load_contract(bad)
