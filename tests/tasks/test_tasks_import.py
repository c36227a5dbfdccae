"""``repogate tasks import``: SWE-bench instances in, each data fault a rejection with its reason."""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
import tomli_w

from _tasks_repo import ENV_MAP, build_history, diff, instance
from repogate.cli import main
from repogate.oracles.junit import TestOutcome
from repogate.tasks._outcomes import resolve_ids
from repogate.tasks.ingest import Candidate, IngestOptions, ingest, with_timeout
from repogate.tasks.recipe import load_env_map
from repogate.tasks.swebench import draft, read_instances
from repogate.tasks.taskset import RejectedEntry, Selection, TaskSet


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A repository cache holding ``acme+calc`` (the fixture history) and its commits."""
    root = tmp_path_factory.mktemp("import")
    commits = build_history(root / "mirrors" / "acme+calc")
    shutil.copytree(root / "mirrors" / "acme+calc", root / "mirrors" / "acme+broken")
    (root / "env.toml").write_text(
        ENV_MAP.format(name="acme/calc")
        + '\n[[recipe]]\nrepo = "acme/broken"\npython = "3.11"\n'
        + "install = [\"python -c 'raise SystemExit(3)'\"]\n"
    )
    return root, commits


_BROKEN_CONFTEST = (
    "diff --git a/tests/conftest.py b/tests/conftest.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/tests/conftest.py\n@@ -0,0 +1 @@\n"
    '+raise RuntimeError("a conftest that cannot be imported")\n'
)

# pylint's tests are named ``unittest_*.py`` (its own ``python_files``): named by a declared id,
# such a file runs (pytest collects a file given by path whatever its name)
_UNITTEST_NAMED = (
    "diff --git a/tests/unittest_calc.py b/tests/unittest_calc.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/tests/unittest_calc.py\n@@ -0,0 +1,5 @@\n"
    "+import calc\n+\n+\n+def test_sub():\n+    assert calc.sub(5, 3) == 2\n"
)


def _faults(repo: Path, c: dict[str, str]) -> list[dict[str, object]]:
    """One instance per fault (and three good ones); the instance id names what it tests."""
    good = instance(repo, c)
    two_files = diff(repo, c["base"], c["sub"], paths=("tests/",)) + diff(
        repo, c["negative"], c["mul"], paths=("tests/",)
    ).replace("test_mul_sometimes", "test_sub")
    network = str(good["test_patch"]).replace(
        "+    assert calc.sub(5, 3) == 2",
        "+    assert calc.sub(5, 3) == 2 and __import__('socket').getaddrinfo('example.invalid', 80)",
    )
    year = datetime.datetime.now(datetime.UTC).year  # the hidden test checks the current year
    dated = str(good["test_patch"]).replace(
        "+    assert calc.sub(5, 3) == 2",
        f"+    assert calc.sub(5, 3) == 2 and __import__('datetime').date.today().year == {year}",
    )
    return [
        {**good, "instance_id": "acme__calc-good"},
        # F2P as a Python literal string (some agents' copies), P2P as a JSON string
        instance(
            repo,
            c,
            instance_id="acme__calc-bare",
            **{"FAIL_TO_PASS": "['test_sub']", "PASS_TO_PASS": '["test_add"]'},
        ),
        instance(repo, c, instance_id="acme__calc-missing-mirror", repo="nobody/nothing"),
        instance(repo, c, instance_id="acme__calc-no-base", base_commit="0" * 40),
        instance(
            repo,
            c,
            instance_id="acme__calc-bad-patch",
            patch=str(good["patch"]).replace(" def add(a, b):", " def add(x, y):"),
        ),
        instance(
            repo,
            c,
            instance_id="acme__calc-passes-at-base",
            FAIL_TO_PASS=["tests/test_calc.py::test_add"],
            PASS_TO_PASS=[],
        ),
        instance(
            repo,
            c,
            instance_id="acme__calc-missing-id",
            FAIL_TO_PASS=["tests/test_calc.py::test_sub", "tests/test_calc.py::test_nope"],
        ),
        instance(  # a truncated parametrized id (as SWE-bench publishes some) naming no test
            repo,
            c,
            instance_id="acme__calc-truncated",
            FAIL_TO_PASS=["tests/test_calc.py::test_sub", "tests/test_calc.py::test_sub_of[5-"],
        ),
        instance(
            repo,
            c,
            instance_id="acme__calc-gold-fails",
            patch=str(good["patch"]).replace("return a - b", "return a + b"),
        ),
        instance(
            repo,
            c,
            instance_id="acme__calc-ambiguous",
            test_patch=two_files,
            FAIL_TO_PASS=["test_sub"],
            PASS_TO_PASS=[],
        ),
        instance(repo, c, instance_id="acme__calc-env", repo="acme/broken"),
        instance(
            repo,
            c,
            instance_id="acme__calc-unittest-named",
            test_patch=_UNITTEST_NAMED,
            FAIL_TO_PASS=["tests/unittest_calc.py::test_sub"],
            PASS_TO_PASS=["tests/test_calc.py::test_add"],
        ),
        instance(
            repo,
            c,
            instance_id="acme__calc-cut-id",
            FAIL_TO_PASS=["tests/test_calc.py::test_sub[x"],
        ),
        instance(
            repo, c, instance_id="acme__calc-no-tests", test_patch=diff(repo, c["sub"], c["docs"])
        ),
        instance(repo, c, instance_id="bad id!"),
        instance(repo, c, instance_id="acme__calc-network", test_patch=network),
        instance(repo, c, instance_id="acme__calc-dated", test_patch=dated),
        instance(
            repo,
            c,
            instance_id="acme__calc-conftest",
            test_patch=str(good["test_patch"]) + _BROKEN_CONFTEST,
        ),
    ]


@pytest.fixture(scope="module")
def imported(world: tuple[Path, dict[str, str]], cache: Path) -> tuple[Path, TaskSet, str]:
    root, commits = world
    rows = _faults(root / "mirrors" / "acme+calc", commits)
    path = _write_jsonl(root / "instances.jsonl", rows)
    mp = pytest.MonkeyPatch()
    mp.setenv("REPOGATE_CACHE", str(cache))
    try:
        code = main(
            [
                "tasks",
                "import",
                str(path),
                "--out",
                str(root / "set"),
                "--repo-cache",
                str(root / "mirrors"),
                "--env-map",
                str(root / "env.toml"),
            ]
        )
    finally:
        mp.undo()
    assert code == 0
    return path, TaskSet.open(root / "set"), str(root / "mirrors")


def test_good_instances_become_contracts_with_patch_files(
    imported: tuple[Path, TaskSet, str], world: tuple[Path, dict[str, str]]
) -> None:
    _path, taskset, _mirrors = imported
    commits = world[1]
    tasks = {t.id: t for t in taskset.tasks()}
    assert set(tasks) == {"acme__calc-good", "acme__calc-bare", "acme__calc-unittest-named"}
    named = tasks["acme__calc-unittest-named"].validation
    assert named.fail_to_pass == ("tests/unittest_calc.py::test_sub",)
    assert named.test_files == ("tests/test_calc.py", "tests/unittest_calc.py")
    good = tasks["acme__calc-good"]
    contract = tomllib.loads((taskset.root / good.contract).read_text())
    assert contract["repo"] == "https://github.com/acme/calc"
    assert contract["reference"] == {"file": "reference.diff"}
    assert contract["oracles"]["hidden_tests"] == {"file": "hidden_tests.diff"}
    assert contract["oracles"]["fail_to_pass"] == ["tests/test_calc.py::test_sub"]
    assert contract["oracles"]["pass_to_pass"] == ["tests/test_calc.py::test_add"]
    # lifecycle strength (the default): every base-passing test, the sentinel over the fix's
    # real later history, permissions from the reference's shape
    assert contract["oracles"]["regression"] == "base-passing"
    assert contract["profile"] == "hermetic"
    c = commits
    assert contract["sentinel"]["follow_ups"] == [c["negative"], c["mul"], c["div"]]
    assert contract["sentinel"]["window"].startswith(
        f"the next 3 first-parent commit(s) of {contract['target_branch']} after the fix "
        f"{c['sub'][:12]} landed (in {c['sub'][:12]}) that touch calc.py"
    )
    assert contract["permissions"]["editable"] == ["calc.py"]
    assert {"**/tests/**", "**/conftest.py", ".github/**", "setup.py", "pyproject.toml"} <= set(
        contract["permissions"]["forbidden"]
    )
    assert {k: contract["cohort"][k] for k in ("strength", "change_type", "integration_width")} == {
        "strength": "lifecycle",
        "change_type": "modification",
        "integration_width": "1",
    }
    assert contract["cohort"]["follow_up_horizon"] == "3"
    assert (
        "at lifecycle strength" in json.loads((taskset.root / "taskset.json").read_text())["rule"]
    )
    assert contract["requirement"]["statement"] == "calc has no subtraction"
    assert [c["source"] for c in contract["requirement"]["criteria"]] == ["issue", "compatibility"]
    assert contract["cohort"]["year"] == "2024" and contract["cohort"]["recipe"] == "env-map"
    assert contract["environment"]["install"] == ["uv pip install pytest"]
    assert (
        (taskset.root / "contracts" / "acme__calc-good" / "reference.diff")
        .read_text()
        .startswith("diff --git")
    )
    assert good.source == {"file": str(_path), "instance_id": "acme__calc-good"}
    # a bare SWE-bench name is resolved to the node id found in the touched test file
    bare = tasks["acme__calc-bare"].validation
    assert bare.resolved == {
        "test_sub": "tests/test_calc.py::test_sub",
        "test_add": "tests/test_calc.py::test_add",
    }
    assert bare.fail_to_pass == ("tests/test_calc.py::test_sub",)


def test_each_data_fault_is_a_rejection_with_its_reason(
    imported: tuple[Path, TaskSet, str],
) -> None:
    _path, taskset, _mirrors = imported
    reasons = {r.id: r.reason for r in taskset.rejected()}
    assert reasons == {
        "acme__calc-missing-mirror": "repository_missing",
        "acme__calc-no-base": "base_commit_missing",
        "acme__calc-bad-patch": "patch_does_not_apply",
        "acme__calc-passes-at-base": "fail_to_pass_passes_at_base",
        "acme__calc-missing-id": "ids_missing",
        "acme__calc-truncated": "ids_missing",
        "acme__calc-gold-fails": "reference_fails",
        "acme__calc-ambiguous": "ambiguous_test_id",
        "acme__calc-env": "environment_failed",
        "acme__calc-cut-id": "ids_missing",  # cut as SWE-bench cuts ids, and nothing of its form
        "acme__calc-no-tests": "no_test_change",
        "bad id!": "instance_invalid",
        "acme__calc-network": "needs_network",  # the test reaches for a name that resolves nowhere
        "acme__calc-dated": "date_dependent",  # passes this year only: fails ten years ahead
        "acme__calc-conftest": "test_run_failed",  # pytest cannot even start: no report to trust
    }
    missing = {r.id: r.detail for r in taskset.rejected() if r.reason == "ids_missing"}
    assert "test_nope" in missing["acme__calc-missing-id"]
    assert "test_sub_of[5-" in missing["acme__calc-truncated"]
    cut = next(r for r in taskset.rejected() if r.id == "acme__calc-cut-id")
    assert "cut at a blank as SWE-bench's log parser cuts ids" in cut.detail
    assert cut.source["cut_ids"].startswith("1 id(s) cut at a blank by SWE-bench's log parser")
    dated = next(r for r in taskset.rejected() if r.reason == "date_dependent")
    assert (
        dated.detail
        == "tests/test_calc.py::test_sub passes with the reference today and not 3653 days ahead"
    )
    # the good task's graded tests ran under the later clock too, and none moved
    good = next(t for t in taskset.tasks() if t.id == "acme__calc-good")
    assert (
        good.validation.date_check
        == "reference run 3653 days ahead (libfaketime): 0 graded test(s) moved"
    )


def test_a_rejection_keeps_its_cause_its_timings_and_a_log_that_outlives_validation(
    imported: tuple[Path, TaskSet, str],
) -> None:
    """Issue 21: a rejection record showed uv's closing hint instead of the error, no timings,
    and a path to a log in the scratch folder that validation removes afterwards."""
    _path, taskset, _mirrors = imported
    rejected = {r.id: r for r in taskset.rejected()}
    for task_id, cause, spent in (
        ("acme__calc-env", "exit 3", "build_seconds"),
        ("acme__calc-conftest", "RuntimeError: a conftest that cannot be imported", "test_seconds"),
    ):
        record = rejected[task_id]
        assert cause in record.detail, record.detail
        assert "log:" not in record.detail  # no path into the removed scratch folder
        assert record.log == f"validation/{task_id}/rejection.log"
        assert (taskset.root / record.log).is_file()
        assert record.validation is not None
        assert getattr(record.validation, spent) > 0
        assert record.validation.validation_seconds >= 0
    kept = rejected["acme__calc-conftest"].log
    assert kept is not None
    assert "a conftest that cannot be imported" in (taskset.root / kept).read_text()


def test_rerun_validates_nothing_twice_and_redoes_an_unfinished_one(
    imported: tuple[Path, TaskSet, str],
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, taskset, mirrors = imported
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    env = str(Path(mirrors).parent / "env.toml")
    args = [
        "tasks",
        "import",
        str(path),
        "--out",
        str(taskset.root),
        "--repo-cache",
        mirrors,
        "--env-map",
        env,
    ]
    before = (taskset.root / "tasks.jsonl").read_text()
    capsys.readouterr()
    assert main(args) == 0
    # only the instance whose mirror is missing is tried again (the user's side, not the task's)
    printed = capsys.readouterr().out.split("task set")[0]
    assert printed == "acme__calc-missing-mirror: repository_missing\n"
    assert (taskset.root / "tasks.jsonl").read_text() == before
    # a run killed while validating the second task left it in neither file: only it is redone
    lines = before.splitlines(keepends=True)
    assert '"id":"acme__calc-bare"' in lines[1].replace(" ", "")
    (taskset.root / "tasks.jsonl").write_text(lines[0] + "".join(lines[2:]))
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("acme__calc-bare: validated")
    assert printed.split("task set")[0].count(": ") == 2  # and the missing mirror, once more
    assert len(TaskSet.open(taskset.root).tasks()) == 3


def test_instance_file_errors_name_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instance_id": "a"}\n{not json\n')
    assert main(["tasks", "import", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"error: {bad}:1: instance 'a' lacks repo, base_commit")
        and err.count("\n") == 1
    )
    bad.write_text(
        '{"instance_id": "a", "repo": "x/y", "base_commit": "abc1234", "patch": "", "test_patch": "",\n'
        ' "FAIL_TO_PASS": "[]", "PASS_TO_PASS": []}\n{not json\n'
    )
    assert main(["tasks", "import", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {bad}:3: not JSON")
    listing = tmp_path / "list.json"
    listing.write_text(
        '[\n  {"instance_id": "a", "repo": "x/y", "base_commit": "abc1234", "patch": "",\n'
        '   "test_patch": "", "FAIL_TO_PASS": 5, "PASS_TO_PASS": []}\n]\n'
    )
    assert main(["tasks", "import", str(listing), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {listing}:2: instance 'a': FAIL_TO_PASS")
    assert not (tmp_path / "o").exists()  # nothing is written for a bad file


def test_ids_naming_no_instance_of_the_file_are_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--ids`` that match nothing wrote an empty task set (exit 0), which ``run`` and ``tasks
    check`` then refused; an id the file does not hold is a typo the user must hear of."""
    listing = tmp_path / "one.jsonl"
    listing.write_text(
        '{"instance_id": "a", "repo": "x/y", "base_commit": "abc1234", "patch": "",'
        ' "test_patch": "", "FAIL_TO_PASS": [], "PASS_TO_PASS": []}\n'
    )
    out = tmp_path / "o"
    assert main(["tasks", "import", str(listing), "--ids", "a,b,c", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: --ids names 2 instances that are not in {listing} (b, c); give ids of its"
        " instances (their instance_id)\n"
    )
    assert not out.exists()


def test_ids_arrive_as_lists_json_strings_and_python_literals(tmp_path: Path) -> None:
    row = {
        "instance_id": "a",
        "repo": "x/y",
        "base_commit": "abc1234",
        "patch": "p",
        "test_patch": "t",
    }
    path = _write_jsonl(
        tmp_path / "i.jsonl",
        [
            {**row, "FAIL_TO_PASS": ["a::b"], "PASS_TO_PASS": '["c::d"]'},
            {
                **row,
                "instance_id": "b",
                "FAIL_TO_PASS": "['a::b']",
                "PASS_TO_PASS": "[]",
                "version": 0.14,
            },
        ],
    )
    first, second = read_instances(path)
    assert (first.fail_to_pass, first.pass_to_pass) == (["a::b"], ["c::d"])
    assert (second.fail_to_pass, second.version) == (["a::b"], "0.14")


def test_resolving_bare_names() -> None:
    reported: dict[str, TestOutcome] = dict.fromkeys(
        ["a/test_x.py::test_one", "a/test_x.py::T::test_two", "b/test_y.py::test_one"], "passed"
    )
    resolved, missing, ambiguous = resolve_ids(
        ["test_two", "test_one", "test_zero", "a/test_x.py::test_one"], reported
    )
    assert resolved == {
        "test_two": "a/test_x.py::T::test_two",
        "a/test_x.py::test_one": "a/test_x.py::test_one",
    }
    assert (missing, ambiguous) == (["test_zero"], ["test_one"])


def test_check_rejects_a_contract_whose_tests_outlive_its_timeout(
    imported: tuple[Path, TaskSet, str],
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    _path, taskset, mirrors = imported
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    source = taskset.contract_dir("acme__calc-good")
    copy = tmp_path / "slow"
    shutil.copytree(source, copy)
    data = tomllib.loads((copy / "contract.toml").read_text())
    data["oracles"]["timeout_s"] = 0.05
    (copy / "contract.toml").write_text(tomli_w.dumps(data))
    assert (
        main(["tasks", "check", str(copy / "contract.toml"), "--repo-cache", mirrors, "--json"])
        == 1
    )
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["valid"], row["reason"]) == (False, "timeout")
    assert main(["tasks", "check", str(source / "contract.toml"), "--repo-cache", mirrors]) == 0
    assert capsys.readouterr().out == "acme__calc-good: valid\n"


def test_a_bad_instance_file_is_one_line_and_exit_2_from_the_real_command(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"instance_id": 1,')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "repogate.cli",
            "tasks",
            "import",
            str(bad),
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {bad}:1: not JSON") and done.stderr.count("\n") == 1


def test_test_timeout_reaches_every_draft_contract() -> None:
    draft = Candidate(id="a", source={}, contract={"id": "a", "oracles": {"fail_to_pass": []}})
    rejected = RejectedEntry(id="b", source={}, reason="repository_missing", detail="no mirror")
    out = list(with_timeout([draft, rejected], 30.0))
    assert out[0].contract["oracles"] == {"fail_to_pass": [], "timeout_s": 30.0}  # type: ignore[union-attr]
    assert out[1] is rejected
    assert list(with_timeout([draft], None)) == [draft]


def test_a_candidate_that_crashes_the_harness_is_an_evaluator_error_and_the_rest_go_on(
    world: tuple[Path, dict[str, str]], cache: Path, tmp_path: Path
) -> None:
    root, commits = world
    good = _faults(root / "mirrors" / "acme+calc", commits)[0]
    rows = [{**good, "instance_id": "acme__calc-crash"}, good]
    path = _write_jsonl(tmp_path / "i.jsonl", rows)
    mapping = load_env_map(root / "env.toml")
    first, second = (draft(i, path, mapping, root / "mirrors") for i in read_instances(path))
    assert isinstance(first, Candidate) and isinstance(second, Candidate)
    # a patch file name the harness cannot write (its folder does not exist): an OSError inside
    # the harness, not a fault of the task
    crashing = replace(first, files={**first.files, "no-such-folder/reference.diff": b"x"})
    taskset = TaskSet.create(
        tmp_path / "set",
        Selection(source="swebench-import", origin="i.jsonl", rule="two", repeats=1),
    )
    options = IngestOptions(repo_cache=root / "mirrors", cache_dir=cache, gold_check=False)
    assert ingest([crashing, second], taskset, options) == (1, 1)
    (rejected,) = taskset.rejected()
    assert rejected.id == "acme__calc-crash" and rejected.reason == "evaluator_error"
    assert rejected.detail.startswith("FileNotFoundError: ")
    assert "no-such-folder" in rejected.detail
    assert not taskset.contract_dir("acme__calc-crash").exists()
    assert [t.id for t in taskset.tasks()] == ["acme__calc-good"]  # the next candidate still ran


def test_an_instance_id_naming_a_path_is_rejected_and_nothing_outside_is_touched(
    world: tuple[Path, dict[str, str]], tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task id becomes a folder name: an id that is a path must never reach the file system.

    ``instance_id = "/some/folder"`` (or ``"../../folder"``) made the import write its patches
    into that folder and then delete it: a crafted instance file removed any folder the user
    could remove (red team).
    """
    root, commits = world
    victims = [tmp_path / "abs-victim", tmp_path / "rel-victim"]
    for victim in victims:
        victim.mkdir()
        (victim / "important.txt").write_text("keep")
    out = tmp_path / "set"
    rows = [
        instance(root / "mirrors" / "acme+calc", commits, instance_id=str(victims[0])),
        instance(root / "mirrors" / "acme+calc", commits, instance_id="../../rel-victim"),
        instance(root / "mirrors" / "acme+calc", commits, instance_id="contracts/../.."),
    ]
    path = _write_jsonl(tmp_path / "evil.jsonl", rows)
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    args = ["tasks", "import", str(path), "--out", str(out), "--repo-cache", str(root / "mirrors")]
    assert main([*args, "--env-map", str(root / "env.toml")]) == 0
    for victim in victims:
        assert (victim / "important.txt").read_text() == "keep"
    rejected = TaskSet.open(out).rejected()
    assert [r.reason for r in rejected] == ["instance_invalid"] * 3
    assert all("not a valid task id" in r.detail for r in rejected)
    assert sorted(p.name for p in out.iterdir()) == [
        "rejected.jsonl",
        "tasks.jsonl",
        "taskset.json",
    ]


@pytest.mark.parametrize("where", ["FAIL_TO_PASS", "file"])
def test_an_instance_file_nested_too_deeply_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """JSON nested 100,000 deep (a FAIL_TO_PASS string, or the file itself) is bad input.

    It crashed the import with a RecursionError traceback and exit 1 (red team).
    """
    deep = "[" * 100_000 + "]" * 100_000
    bad = tmp_path / "deep.jsonl"
    row: dict[str, object] = {"instance_id": "a", "repo": "x/y", "base_commit": "abc1234"}
    row |= {"patch": "", "test_patch": ""}
    row |= {"FAIL_TO_PASS": deep, "PASS_TO_PASS": []}
    bad.write_text(json.dumps(row) + "\n" if where == "FAIL_TO_PASS" else deep + "\n")
    assert main(["tasks", "import", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}:1: ") and "nested too deeply" in err, err[:300]
    assert err.count("\n") == 1
    assert not (tmp_path / "o").exists()


_ROW = {
    "instance_id": "a",
    "repo": "x/y",
    "base_commit": "abc1234",
    "patch": "",
    "test_patch": "",
    "FAIL_TO_PASS": [],
    "PASS_TO_PASS": [],
}


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("version", [1], "version must be a string or a number"),
        ("version", {"v": 1}, "version must be a string or a number"),
        ("repo", "flask", "repo must be owner/name"),
        ("repo", "a/b/c", "repo must be owner/name"),
        ("repo", "../..", "repo must be owner/name"),
        ("base_commit", "not-a-sha", "base_commit must be a commit SHA"),
        ("base_commit", 1234567, "base_commit must be a string (got int)"),
        ("created_at", 2024, "created_at must be a string (got int)"),
        ("PASS_TO_PASS", [["nested"]], "PASS_TO_PASS must be a list of test ids"),
    ],
)
def test_an_instance_field_of_the_wrong_type_or_shape_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: object, said: str
) -> None:
    """A field of the wrong type was read as its ``str()`` (``version = [1]`` became the text
    ``"[1]"``) or reached git as a URL path; every one is the user's to fix, said in one line."""
    path = _write_jsonl(tmp_path / "i.jsonl", [{**_ROW, field: value}])
    out = tmp_path / "o"
    assert main(["tasks", "import", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:1: instance 'a': {said}"), err
    assert err.count("\n") == 1
    assert not out.exists()


def test_a_resolved_patch_leaving_a_script_at_the_root_is_not_accepted_and_both_are_recorded(
    imported: tuple[Path, TaskSet, str],
    cache: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Under SWE-bench's rules a patch adding ``bug_reproduction.py`` at the repository root
    passed ``edits_permitted``; at lifecycle strength it is resolved (SWE-bench's figure, from the
    same run) and not accepted, and the sentinel replays the fix's later history."""
    _path, taskset, mirrors = imported
    good = next(t for t in taskset.tasks() if t.id == "acme__calc-good")
    contract = taskset.root / good.contract
    reference = (contract.parent / "reference.diff").read_text()
    script = (
        "diff --git a/bug_reproduction.py b/bug_reproduction.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/bug_reproduction.py\n@@ -0,0 +1 @@\n+import calc\n"
    )
    preds = tmp_path / "preds.jsonl"
    rows = [
        {"instance_id": good.id, "model_name_or_path": m, "model_patch": p}
        for m, p in (("tidy", reference), ("messy", reference + script))
    ]
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    args = ["run", str(contract), "--agent", f"predictions:{preds}", "--repo-cache", mirrors]
    code = main([*args, "--out", str(tmp_path / "run"), "--json"])
    assert code == 0
    decided = {str(r["agent"]).rsplit("#", 1)[-1]: r for r in json.loads(capsys.readouterr().out)}
    assert decided["tidy"]["accepted"] is True and decided["tidy"]["resolved"] is True
    messy = decided["messy"]
    assert messy["resolved"] is True and messy["accepted"] is False
    assert messy["failed"] == ["edits_permitted"]
    for row in decided.values():  # the sentinel ran over the fix's three follow-ups
        names = [c["name"] for c in row["sentinel"]["checks"]]
        assert names == ["post_merge_sentinel_passed"], row["sentinel"]


ROW = json.dumps(_ROW)
"""A valid instance on one line."""


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        # one row, its value unclosed: the parser stops past the end of the row
        (
            "one.jsonl",
            '{"instance_id": "a", "repo": \n',
            ":1: not JSON (Expecting value; the parser stopped at line 2)",
        ),
        # the second of three rows broken
        (
            "three.jsonl",
            ROW + '\n{"instance_id": \n{"instance_id": "c"}\n',
            ":2: not JSON (Expecting ',' delimiter; the parser stopped at line 4)",
        ),
        # a list's second element broken on its own line
        (
            "list.json",
            "[\n  " + ROW + ",\n" + '  {"instance_id" "b"}\n]\n',
            ":3: not JSON (Expecting ':' delimiter)",
        ),
    ],
)
def test_a_broken_row_is_named_by_the_line_it_starts_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, said: str
) -> None:
    """A broken JSONL row was named by the line after it (the parser's stop), 2 for a 1-line file."""
    bad = tmp_path / name
    bad.write_text(text)
    assert main(["tasks", "import", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}{said}") and err.count("\n") == 1, err


def test_a_missing_mirror_is_tried_again_when_the_import_resumes(
    world: tuple[Path, dict[str, str]], cache: Path, tmp_path: Path
) -> None:
    """New user: a `repository_missing` rejection stayed for good; the mirror was missing on the
    user's side, so a rerun with the mirror in place must try the instance again. Other
    rejections stay finished, and each id is counted once."""
    root, commits = world
    good = _faults(root / "mirrors" / "acme+calc", commits)[0]
    rows = [good, {**good, "instance_id": "acme__calc-nobase", "base_commit": "0" * 40}]
    path = _write_jsonl(tmp_path / "i.jsonl", rows)
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    mapping = load_env_map(root / "env.toml")
    taskset = TaskSet.create(
        tmp_path / "set",
        Selection(source="swebench-import", origin="i.jsonl", rule="two", repeats=1),
    )
    options = IngestOptions(repo_cache=mirrors, cache_dir=cache, gold_check=False)

    def drafts() -> list[Candidate | RejectedEntry]:
        return [draft(i, path, mapping, mirrors) for i in read_instances(path)]

    assert ingest(drafts(), taskset, options) == (0, 2)
    assert {r.reason for r in taskset.rejected()} == {"repository_missing"}
    assert ingest(drafts(), taskset, options) == (0, 2)  # tried again, still missing
    assert len(taskset.rejected()) == 2  # each id counted once
    (mirrors / "acme+calc").symlink_to(root / "mirrors" / "acme+calc")
    assert ingest(drafts(), taskset, options) == (1, 1)
    assert [t.id for t in taskset.tasks()] == ["acme__calc-good"]
    expected = [("acme__calc-nobase", "base_commit_missing")]
    assert [(r.id, r.reason) for r in taskset.rejected()] == expected
    assert taskset.tally() == {"validated": 1, "base_commit_missing": 1}
    assert ingest(drafts(), taskset, options) == (0, 0)  # a task's own fault stays finished
