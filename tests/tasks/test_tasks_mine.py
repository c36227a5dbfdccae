"""``repogate tasks mine`` on a repository with known history: derivation, rejections, resume, run."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from _tasks_repo import ENV_MAP, build_history
from conftest import run_json
from repogate.cli import main
from repogate.store import Store
from repogate.tasks.mine import is_test_path, select_commits
from repogate.tasks.taskset import TaskSet

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mined(
    tmp_path_factory: pytest.TempPathFactory, cache: Path
) -> tuple[Path, Path, dict[str, str]]:
    """Mine the whole fixture history once (2 repeats) and return (repo, task set, commits)."""
    root = tmp_path_factory.mktemp("mine")
    repo = root / "calc"
    commits = build_history(repo)
    env_map = root / "env.toml"
    env_map.write_text(ENV_MAP.format(name="calc"))
    out = root / "set"
    mp = pytest.MonkeyPatch()
    mp.setenv("REPOGATE_CACHE", str(cache))
    try:
        code = main(
            [
                "tasks",
                "mine",
                str(repo),
                "--range",
                f"{commits['base']}..main",
                "--out",
                str(out),
                "--env-map",
                str(env_map),
                "--repeats",
                "2",
            ]
        )
    finally:
        mp.undo()
    assert code == 0
    return repo, out, commits


def test_candidates_are_commits_changing_code_and_tests(tmp_path: Path) -> None:
    commits = build_history(tmp_path / "calc")
    chosen = select_commits(tmp_path / "calc", f"{commits['base']}..main", (), None)
    assert [c for c, _, _ in chosen] == [commits[k] for k in ("sub", "negative", "mul", "div")]
    only_mul = select_commits(
        tmp_path / "calc", f"{commits['base']}..main", ("tests/test_mul.py",), None
    )
    assert [c for c, _, _ in only_mul] == [commits["mul"]]
    assert len(select_commits(tmp_path / "calc", f"{commits['base']}..main", (), 2)) == 2


def test_test_paths() -> None:
    assert is_test_path("tests/test_x.py") and is_test_path("pkg/test_y.py")
    assert is_test_path("src/a/conftest.py") and is_test_path("a/b_test.py")
    assert not is_test_path("src/tester.py") and not is_test_path("docs/testing.md")


def test_fail_to_pass_and_pass_to_pass_are_derived_by_running(
    mined: tuple[Path, Path, dict[str, str]],
) -> None:
    _repo, out, commits = mined
    tasks = TaskSet.open(out).tasks()
    assert [t.id for t in tasks] == [f"calc-{commits['sub'][:10]}"]
    contract = tomllib.loads((out / tasks[0].contract).read_text())
    assert contract["base_commit"] == commits["base"]
    assert contract["oracles"]["fail_to_pass"] == ["tests/test_calc.py::test_sub"]
    assert contract["oracles"]["pass_to_pass"] == ["tests/test_calc.py::test_add"]
    assert contract["oracles"]["hidden_tests"] == {
        "commit": commits["sub"],
        "paths": ["tests/test_calc.py"],
    }
    assert contract["reference"] == {"commit": commits["sub"], "exclude": ["tests/test_calc.py"]}
    assert contract["requirement"]["statement"].startswith("Add calc.sub")
    assert contract["requirement"]["criteria"][0]["source"] == "commit message"
    assert contract["sentinel"]["follow_ups"] == [commits[k] for k in ("docs", "negative", "mul")]
    assert contract["cohort"]["packages"] == "calc.py"
    assert tasks[0].validation.repeats == 2
    assert tasks[0].validation.gold == "accepted"
    # validation made gate E's own checks on its runs (import probe, base-state verdict, the
    # reference graded as a candidate): the gold attempt's gate E reads that result, under its key
    assert tasks[0].validation.handed_to_gate_e == ""
    with Store.open(out / "validation" / tasks[0].id) as store:
        (record,) = store.attempts()
        (env_receipt,) = [r for r in store.receipts(record.attempt_id) if r.gate == "E"]
    assert env_receipt.status == "passed"
    assert env_receipt.details["observed_by"] == "task validation (2 runs of each state)"
    assert env_receipt.details["base_state_cached"] is True
    assert env_receipt.details["reference"] == {
        "focused_tests_passed": "passed",
        "regression_tests_passed": "passed",
        "harness_untampered": "passed",
    }
    assert env_receipt.details["base_state"]["valid"] is True


def test_each_rejection_keeps_its_reason(mined: tuple[Path, Path, dict[str, str]]) -> None:
    _repo, out, commits = mined
    reasons = {r.source["commit"]: r.reason for r in TaskSet.open(out).rejected()}
    assert reasons == {
        commits["negative"]: "no_fail_to_pass",  # the new test passes at the base already
        commits["mul"]: "flaky",  # its only FAIL_TO_PASS test flips between runs
        commits["div"]: "reference_not_accepted",  # the reference edits CI: oracle_untouched
    }
    flaky = next(r for r in TaskSet.open(out).rejected() if r.reason == "flaky")
    assert flaky.validation is not None
    assert flaky.validation.flaky == ("tests/test_mul.py::test_mul_sometimes",)
    div = next(r for r in TaskSet.open(out).rejected() if r.reason == "reference_not_accepted")
    assert "oracle_untouched" in div.detail
    assert not (out / "contracts" / div.id).exists()  # a rejected candidate leaves no contract


def test_no_empty_work_folder_is_left_behind(mined: tuple[Path, Path, dict[str, str]]) -> None:
    """Each candidate's scratch folder was removed and ``work/`` left empty in the task set (and
    in each gold attempt's run folder under ``validation/``)."""
    _repo, out, _commits = mined
    assert sorted(p.name for p in out.iterdir()) == [
        "contracts",
        "rejected.jsonl",
        "tasks.jsonl",
        "taskset.json",
        "validation",
    ]
    assert [p for p in out.glob("validation/*/work")] == []


def test_rerun_resumes_without_validating_again(
    mined: tuple[Path, Path, dict[str, str]],
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo, out, commits = mined
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    env_map = out.parent / "env.toml"
    before = (out / "tasks.jsonl").read_text(), (out / "rejected.jsonl").read_text()
    capsys.readouterr()
    args = [
        "tasks",
        "mine",
        str(repo),
        "--range",
        f"{commits['base']}..main",
        "--out",
        str(out),
        "--env-map",
        str(env_map),
        "--repeats",
        "2",
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert ": validated" not in printed and "no_fail_to_pass" not in printed.split("task set")[0]
    assert ((out / "tasks.jsonl").read_text(), (out / "rejected.jsonl").read_text()) == before
    # another selection rule on the same folder is refused, not mixed in
    assert main([*args[:-2], "--repeats", "1"]) == 2
    assert "another selection" in capsys.readouterr().err


def test_run_on_the_task_set_accepts_gold_and_rejects_null(
    mined: tuple[Path, Path, dict[str, str]],
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    _repo, out, _commits = mined
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    code, rows = run_json(capsys, str(out), "--out", str(tmp_path / "run"))
    assert code == 0
    verdicts = {(r["agent"], r["accepted"]) for r in rows}
    assert verdicts == {("gold", True), ("null", False)}
    assert sorted(p.name for p in (tmp_path / "run").iterdir() if p.is_dir()) == ["attempts"]


def test_check_confirms_a_mined_contract(
    mined: tuple[Path, Path, dict[str, str]],
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _repo, out, _commits = mined
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    assert main(["tasks", "check", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["valid"] for r in rows] == [True]
    assert not (cache / "check-work").exists() and not (cache / "check-runs").exists()
    assert rows[0]["validation"]["fail_to_pass"] == ["tests/test_calc.py::test_sub"]


def test_a_range_with_an_unknown_revision_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build_history(tmp_path / "calc")
    args = ["tasks", "mine", str(tmp_path / "calc"), "--out", str(tmp_path / "o")]
    assert main([*args, "--range", "nope..main"]) == 2
    assert capsys.readouterr().err.startswith("error: --range 'nope..main' names a revision")
    assert main([*args, "--range", "main"]) == 2
    assert "is not A..B" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_relative_paths_on_the_command_line_work_as_absolute_ones(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tasks mine calc --out set --env-map env.toml`` from the folder holding them.

    Relative paths were handed on as given to git commands run in other folders, so every
    candidate became ``evaluator_error`` (git did not find the task set's scratch repository).
    """
    commits = build_history(tmp_path / "calc")
    (tmp_path / "env.toml").write_text(ENV_MAP.format(name="calc"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    args = ["tasks", "mine", "calc", "--range", f"{commits['base']}..{commits['sub']}"]
    args += ["--out", "set", "--env-map", "env.toml"]
    assert main(args) == 0
    rejected = (tmp_path / "set" / "rejected.jsonl").read_text()
    assert "evaluator_error" not in rejected
    tasks = [
        json.loads(line) for line in (tmp_path / "set" / "tasks.jsonl").read_text().splitlines()
    ]
    assert [t["id"] for t in tasks] == [f"calc-{commits['sub'][:10]}"]
    assert main(["tasks", "check", "set"]) == 0


def test_the_selection_rule_names_commits_so_a_moved_branch_is_not_resumed(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--range base..main`` was kept as written: once ``main`` moved, rerunning "the same
    command" added other candidates under a rule that claimed the first selection (new user).
    The rule now names the commits the range resolved to, and a rerun whose range resolves to
    others is refused."""
    repo = tmp_path / "calc"
    commits = build_history(repo)
    subprocess.run(["git", "-C", str(repo), "branch", "-f", "line", commits["sub"]], check=True)
    (tmp_path / "env.toml").write_text(ENV_MAP.format(name="calc"))
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    out = tmp_path / "set"
    args = ["tasks", "mine", str(repo), "--range", f"{commits['base']}..line", "--out", str(out)]
    args += ["--env-map", str(tmp_path / "env.toml")]
    assert main(args) == 0
    rule = json.loads((out / "taskset.json").read_text())["rule"]
    assert f"{commits['base']}..{commits['sub']} (--range {commits['base']}..line)" in rule
    subprocess.run(["git", "-C", str(repo), "branch", "-f", "line", commits["mul"]], check=True)
    assert main(args) == 2
    assert len((out / "tasks.jsonl").read_text().splitlines()) == 1
