"""A task-set folder given to ``run`` or ``tasks check`` that holds no validated task.

Threat closed (new-user finding, issue 11 follow-up): ``repogate run DIR`` on a task set whose
``tasks.jsonl`` lists nothing (every candidate rejected, or an import still under way) ran
nothing and exited 0, as if a benchmark had passed; ``tasks check DIR`` called it sound. A named
input that stands for no task is bad input: one line, exit 2, nothing written.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repogate.cli import ExitCode, main
from repogate.tasks.taskset import RejectedEntry, Selection, TaskSet


def _empty_set(root: Path, rejected: int) -> Path:
    """A task set whose candidates were all rejected (``rejected`` of them; 0: none finished)."""
    taskset = TaskSet.create(
        root, Selection(source="mined", origin="repo", rule="first 2", repeats=1)
    )
    for n in range(rejected):
        taskset.add_rejected(
            RejectedEntry(id=f"c{n}", source={}, reason="no_fail_to_pass", detail="none failed")
        )
    return root


@pytest.mark.parametrize("rejected", [0, 2])
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_task_set_without_validated_tasks_is_refused_writing_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rejected: int, command: str
) -> None:
    taskset = _empty_set(tmp_path / "set", rejected)
    out = tmp_path / "run"
    argv = ["run", str(taskset), "--out", str(out)] if command == "run" else ["tasks", "check"]
    argv += [str(taskset)] if command == "check" else []
    assert main(argv) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "; " in err, err
    assert f"{taskset} holds no validated task" in err, err
    assert (f"{rejected} rejected" in err) if rejected else ("no candidate finished" in err), err
    assert not out.exists()


def test_an_empty_task_set_beside_a_contract_is_refused_too(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Named beside good contracts, an empty task set is still a mistake the user must hear of."""
    taskset = _empty_set(tmp_path / "set", 1)
    contract = root / "examples" / "real" / "click-3211.toml"
    out = tmp_path / "run"
    assert main(["run", str(contract), str(taskset), "--out", str(out)]) == ExitCode.USAGE
    assert "holds no validated task" in capsys.readouterr().err
    assert not out.exists()


def test_refused_from_the_real_command(tmp_path: Path) -> None:
    taskset = _empty_set(tmp_path / "set", 1)
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "repogate.cli", "run", str(taskset), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == "" and not out.exists()


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_shipped_manifest_without_its_contracts_says_how_to_rebuild_them(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """``examples/tasks/*`` hold ``tasks.jsonl`` and no contracts: the message was "contract
    .../contract.toml cannot be read (No such file or directory); give the path of a .toml
    contract", though the user named a folder and the contracts are made by a command."""
    shipped = root / "examples" / "tasks" / "imported-acr-sg"
    taskset = tmp_path / "acr-sg"
    shutil.copytree(shipped, taskset)
    out = tmp_path / "run"
    argv = ["run", str(taskset), "--out", str(out)] if command == "run" else ["tasks", "check"]
    argv += [str(taskset)] if command == "check" else []
    assert main(argv) == ExitCode.USAGE
    first = taskset / "contracts" / "pallets__flask-4045" / "contract.toml"
    assert capsys.readouterr().err == (
        f"error: {taskset} lists 2 validated tasks whose contracts are not in it ({first}, ...):"
        " a task-set manifest without its contracts; make them with the `repogate tasks import`"
        f" command that made it (its selection is in {taskset / 'taskset.json'}) and a new --out,"
        " then give that folder\n"
    )
    assert not out.exists()


def test_a_task_set_whose_selection_chose_no_candidate_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A task set made before mining refused an empty selection: rerunning it "to resume" (what
    the message said) can never help; the message names its selection and what to change."""
    taskset = TaskSet.create(
        tmp_path / "set",
        Selection(
            source="mined",
            origin="repo",
            rule="first-parent commits of v1..v2 changing code and tests: 0 candidates",
            repeats=1,
        ),
    )
    assert main(["tasks", "check", str(taskset.root)]) == ExitCode.USAGE
    assert capsys.readouterr().err == (
        f"error: {taskset.root} holds no validated task: no candidate finished (its selection:"
        " first-parent commits of v1..v2 changing code and tests: 0 candidates); if the"
        " `repogate tasks mine` command that made it was stopped, rerun it to resume; if its"
        " selection chose no candidate, mine another selection into a new --out\n"
    )


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_mining_a_range_without_a_candidate_is_refused_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It wrote an empty task set and exited 0; ``run``/``check`` on it then failed."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for n in range(2):
        (repo / "README").write_text(f"{n}\n")
        _git(repo, "add", ".")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", f"c{n}")
    out = tmp_path / "set"
    argv = ["tasks", "mine", str(repo), "--range", "main~1..main", "--out", str(out)]
    assert main(argv) == ExitCode.USAGE
    assert capsys.readouterr().err == (
        f"error: --range 'main~1..main' of {repo} holds no first-parent commit changing code"
        " and tests; give a wider --range (or other --paths)\n"
    )
    assert not out.exists()


@pytest.mark.parametrize("held", ["notes.txt", "store.sqlite", "src"])
def test_an_out_folder_holding_other_files_is_never_adopted_as_a_task_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], held: str
) -> None:
    """``tasks import ... --out`` a run folder or a source tree wrote a task set into it (and
    ``run``/``tasks check`` then took that folder for one); ``run --out`` refuses the same
    (new user)."""
    out = tmp_path / "foreign"
    (out / held).parent.mkdir(parents=True, exist_ok=True)
    if held == "src":
        (out / held).mkdir()
    else:
        (out / held).write_text("x")
    listing = tmp_path / "one.jsonl"
    listing.write_text(
        '{"instance_id": "a", "repo": "x/y", "base_commit": "abc1234", "patch": "",'
        ' "test_patch": "", "FAIL_TO_PASS": [], "PASS_TO_PASS": []}\n'
    )
    assert main(["tasks", "import", str(listing), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: --out {out} holds other files and no task set (taskset.json); give a new or"
        " empty folder, or the --out of an earlier tasks command to resume\n"
    )
    assert sorted(p.name for p in out.iterdir()) == [held]


# --- A task set resumed with other options names each one that differs ---------------------------

_ROW = (
    '{"instance_id": "a", "repo": "x/y", "base_commit": "abc1234", "patch": "", "test_patch": "",'
    ' "FAIL_TO_PASS": [], "PASS_TO_PASS": []}\n'
)


@pytest.fixture
def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """A task set imported with the defaults (its one instance's repository is missing)."""
    listing = tmp_path / "one.jsonl"
    listing.write_text(_ROW)
    out = tmp_path / "set"
    assert main(["tasks", "import", str(listing), "--out", str(out)]) == ExitCode.OK
    capsys.readouterr()
    return listing, out


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (
            ["--repeats", "2"],
            "--repeats 2 (the task set has 1)",
        ),
        (
            ["--as", "swebench", "--repeats", "3"],
            "--as swebench (the task set has lifecycle), --repeats 3 (the task set has 1), "
            "--sentinel-window not given (the task set has 3)",
        ),
        (
            ["--test-timeout", "30", "--sentinel-window", "5"],
            "--sentinel-window 5 (the task set has 3), --test-timeout 30 (the task set has the "
            "contract's)",
        ),
        (["--ids", "a"], "--ids a (the task set has all)"),
    ],
)
def test_a_resumption_with_other_options_names_each_and_both_values(
    imported: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    said: str,
) -> None:
    """It said "made with another selection" and named no option."""
    listing, out = imported
    before = (out / "taskset.json").read_text()
    assert main(["tasks", "import", str(listing), "--out", str(out), *options]) == ExitCode.USAGE
    assert capsys.readouterr().err == (
        f"error: the task set in {out} was made with another selection ({out / 'taskset.json'}): "
        f"{said}; rerun with the same arguments to resume, or give a new --out\n"
    )
    assert (out / "taskset.json").read_text() == before
    assert main(["tasks", "import", str(listing), "--out", str(out)]) == ExitCode.OK  # resumes


def test_another_instance_file_is_named_by_its_metavar(
    imported: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    listing, out = imported
    other = listing.with_name("two.jsonl")
    other.write_text(_ROW)
    assert main(["tasks", "import", str(other), "--out", str(out)]) == ExitCode.USAGE
    assert f": INSTANCES {other} (the task set has {listing});" in capsys.readouterr().err


def test_a_task_set_made_before_options_were_recorded_resumes_and_names_fields(
    imported: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``taskset.json`` without ``flags`` (an older repogate) still resumes with the same
    arguments; other ones are named by the field that differs."""
    listing, out = imported
    stored = Selection.model_validate_json((out / "taskset.json").read_text())
    (out / "taskset.json").write_text(stored.model_copy(update={"flags": {}}).model_dump_json())
    assert main(["tasks", "import", str(listing), "--out", str(out)]) == ExitCode.OK
    capsys.readouterr()
    assert main(["tasks", "import", str(listing), "--out", str(out), "--repeats", "2"]) == 2
    assert ": repeats 2 (the task set has 1);" in capsys.readouterr().err
