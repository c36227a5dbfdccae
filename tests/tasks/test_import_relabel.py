"""A declared FAIL_TO_PASS id that passes at the base: relabelled on import, rejected elsewhere.

SWE-bench's psf/requests instances declare as FAIL_TO_PASS httpbin tests the fix does not touch,
which failed in SWE-bench's own validation against the live httpbin.org and pass at the base
against a working local one (a fault of the dataset's labels). ``tasks import`` grades such an id
as PASS_TO_PASS, with a record (``relabelled_pass_to_pass``), when the instance keeps a
FAIL_TO_PASS id that does fail at the base; when none does, the instance is rejected
``fail_to_pass_passes_at_base`` naming every id that passes there (the check reads all of them).
An id that passes at the base in some runs only is flaky: left out of grading, never relabelled.
A contract checked outside the import (``tasks check``, hand-written) keeps the strict rule.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _tasks_repo import ENV_MAP, build_history, instance
from repogate.cli import main
from repogate.contract import load_contract
from repogate.tasks.taskset import TaskSet
from repogate.tasks.validate import CheckConfig, Rejected, check_states

# a second hidden test file: one test that passes on both states, one that flips at the base
# (fails in the first run, passes in the second; its counter lives in the test tree) and
# passes with the reference in every run
_MORE = (
    "from pathlib import Path\n\nimport calc\n\n\n"
    "def test_same():\n    assert calc.add(1, 1) == 2\n\n\n"
    "def test_flip():\n"
    "    counter = Path(__file__).with_name('flips.txt')\n"
    "    n = int(counter.read_text()) if counter.exists() else 0\n"
    "    counter.write_text(str(n + 1))\n"
    "    assert n % 2 == 1 or hasattr(calc, 'sub')\n"
)
_MORE_DIFF = (
    "diff --git a/tests/test_more.py b/tests/test_more.py\nnew file mode 100644\n"
    f"--- /dev/null\n+++ b/tests/test_more.py\n@@ -0,0 +1,{len(_MORE.splitlines())} @@\n"
    + "".join(f"+{line}\n" for line in _MORE.splitlines())
)
SUB = "tests/test_calc.py::test_sub"
ADD = "tests/test_calc.py::test_add"
SAME = "tests/test_more.py::test_same"
FLIP = "tests/test_more.py::test_flip"


@pytest.fixture(scope="module")
def relabel_set(
    tmp_path_factory: pytest.TempPathFactory, cache: Path
) -> tuple[TaskSet, dict[str, object]]:
    """Three instances of one fix, imported with two runs of each state."""
    root = tmp_path_factory.mktemp("relabel")
    repo = root / "mirrors" / "acme+calc"
    commits = build_history(repo)
    (root / "env.toml").write_text(ENV_MAP.format(name="acme/calc"))

    def shape(name: str, f2p: list[str]) -> dict[str, object]:
        good = instance(repo, commits)
        hidden = str(good["test_patch"]) + _MORE_DIFF
        return {**good, "instance_id": name, "test_patch": hidden, "FAIL_TO_PASS": f2p}

    rows = [
        # two declared ids pass at the base in every run; test_sub fails there: relabelled
        shape("acme__calc-some-pass", [SAME, SUB, ADD]),
        # every declared id passes at the base: nothing left to fail, rejected
        shape("acme__calc-all-pass", [ADD, SAME]),
        # test_flip passes at the base in one run of two: flaky, not relabelled
        shape("acme__calc-flips-at-base", [SUB, FLIP]),
    ]
    for row in rows:
        row["PASS_TO_PASS"] = []
    path = root / "instances.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    mp = pytest.MonkeyPatch()
    mp.setenv("REPOGATE_CACHE", str(cache))
    try:
        args = ["tasks", "import", str(path), "--out", str(root / "set"), "--repeats", "2"]
        code = main(
            [*args, "--repo-cache", str(root / "mirrors"), "--env-map", str(root / "env.toml")]
        )
    finally:
        mp.undo()
    assert code == 0
    return TaskSet.open(root / "set"), {"root": root}


def test_ids_passing_at_the_base_are_graded_as_pass_to_pass_with_a_record(
    relabel_set: tuple[TaskSet, dict[str, object]],
) -> None:
    taskset, _ = relabel_set
    tasks = {t.id: t for t in taskset.tasks()}
    seen = tasks["acme__calc-some-pass"].validation
    assert seen.fail_to_pass == (SUB,)
    assert seen.relabelled_pass_to_pass == (SAME, ADD)  # both, in declared order
    assert set(seen.pass_to_pass) == {SAME, ADD}
    contract = load_contract(taskset.root / tasks["acme__calc-some-pass"].contract)
    assert contract.oracles.fail_to_pass == (SUB,)
    assert set(contract.oracles.pass_to_pass) == {SAME, ADD}
    notes = contract.requirement.open_questions
    assert (
        f"{ADD}: declared FAIL_TO_PASS, passes at the base in 2 of 2 runs: graded as PASS_TO_PASS"
        in notes
    )
    assert tasks["acme__calc-some-pass"].validation.gold == "accepted"
    rule = json.loads((taskset.root / "taskset.json").read_text())["rule"]
    assert "passing at the base in every run is graded as PASS_TO_PASS" in rule


def test_an_instance_whose_every_fail_to_pass_id_passes_at_the_base_is_rejected_naming_all(
    relabel_set: tuple[TaskSet, dict[str, object]],
) -> None:
    taskset, _ = relabel_set
    rejected = {r.id: r for r in taskset.rejected()}
    assert set(rejected) == {"acme__calc-all-pass"}
    record = rejected["acme__calc-all-pass"]
    assert record.reason == "fail_to_pass_passes_at_base"
    assert record.detail == (
        f"2 of 2 declared FAIL_TO_PASS ids pass at the base in every run: {ADD}, {SAME}"
    )


def test_an_id_passing_at_the_base_in_some_runs_is_flaky_not_relabelled(
    relabel_set: tuple[TaskSet, dict[str, object]],
) -> None:
    taskset, _ = relabel_set
    seen = {t.id: t for t in taskset.tasks()}["acme__calc-flips-at-base"].validation
    assert seen.fail_to_pass == (SUB,)
    assert seen.relabelled_pass_to_pass == ()
    assert FLIP not in seen.pass_to_pass
    assert seen.dropped == {FLIP: "flaky"}
    assert FLIP in seen.flaky


def test_a_contract_checked_outside_the_import_keeps_the_strict_rule(
    relabel_set: tuple[TaskSet, dict[str, object]], cache: Path, tmp_path: Path
) -> None:
    """``tasks check`` of a written contract: an id passing at the base rejects it, as before."""
    taskset, world = relabel_set
    root = world["root"]
    assert isinstance(root, Path)
    task = {t.id: t for t in taskset.tasks()}["acme__calc-some-pass"]
    strict = load_contract(taskset.root / task.contract)
    strict = strict.model_copy(
        update={"oracles": strict.oracles.model_copy(update={"fail_to_pass": [SUB, ADD]})}
    )
    cfg = CheckConfig.in_cache(cache, tmp_path / "work", repeats=1)
    with pytest.raises(Rejected) as caught:
        check_states(strict, root / "mirrors" / "acme+calc", cfg)
    assert caught.value.reason == "fail_to_pass_passes_at_base"
    assert caught.value.detail == (
        f"1 of 2 declared FAIL_TO_PASS ids pass at the base in every run: {ADD}"
    )
