"""The post-merge sentinel on real repositories: replay, conflicts, regressions, cache, input."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from _lifecycle_git import commit, new_repo
from _lifecycle_git import git as run_git
from _sentinel_support import Attempt, CountingRunner, attempt, build_frozen, inputs, run_pytest
from repogate import git
from repogate.contract import Sentinel
from repogate.errors import UserInputError
from repogate.gates.sentinel import SentinelInputs, check_sentinel, follow_up_commits

MODULE = "def price(x):\n    return x\n\n\ndef tax(x):\n    return x * 0.2\n"
TESTS = "from m import price\n\n\ndef test_price():\n    assert price(3) == 3\n"


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Attempt]:
    work = tmp_path_factory.mktemp("frozen")
    built, contract = build_frozen(work / "scenario")
    return {a: attempt(built, contract, a, work) for a in ("hardcoded", "modular")}


@pytest.fixture(scope="module")
def frozen_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One history cache for the frozen-scenario tests: history does not depend on the test."""
    return tmp_path_factory.mktemp("frozen-cache")


def _steps(obs_details: Mapping[str, Any]) -> list[dict[str, Any]]:
    steps = obs_details["steps"]
    assert isinstance(steps, list)
    return steps


@pytest.mark.slow
def test_frozen_scenario_separates_the_hard_coded_and_the_modular_patch(
    frozen: dict[str, Attempt], frozen_cache: Path, tmp_path: Path
) -> None:
    for run in frozen.values():  # both pass the task's own tests (the hermetic view)
        checkout = tmp_path / run.candidate
        git.checkout_tree(run.built.repo, run.start_tree, checkout)
        outcomes = run_pytest(checkout, ["tests/test_rates.py"])
        expected = run.contract.oracles.fail_to_pass + run.contract.oracles.pass_to_pass
        assert all(outcomes[t] == "passed" for t in expected)

    hard = check_sentinel(inputs(frozen["hardcoded"], frozen_cache))
    assert hard.checks[0].status == "failed"
    assert [s["status"] for s in _steps(hard.details)] == ["resolved", "conflict", "blocked"]
    assert hard.details["conflicts"]["semantic"] == ["shipping/rates.py"]
    assert hard.details["extra_repair_effort"] > 0

    modular = check_sentinel(inputs(frozen["modular"], frozen_cache))
    assert modular.checks[0].status == "passed", modular.checks[0].detail
    steps = _steps(modular.details)
    assert [s["status"] for s in steps] == ["resolved", "clean", "clean"]
    assert modular.details["extra_repair_effort"] == 0
    # the third follow-up moved rates.py to costs.py: the candidate's helper moved with it
    final = steps[-1]["tree"]
    assert isinstance(final, str)
    moved = git.show_file(frozen["modular"].built.repo, final, "shipping/costs.py") or b""
    assert b"def ships_free" in moved and b'"eu": 100.00' in moved


def test_changelog_only_conflict_is_resolved_by_policy_and_counted_apart(
    frozen: dict[str, Attempt], frozen_cache: Path
) -> None:
    """Even the real fix conflicts in the changelog when its line was left out: never semantic."""
    run = frozen["modular"]
    obs = check_sentinel(inputs(run, frozen_cache))
    first = _steps(obs.details)[0]
    assert first["replay"] == "resolved"
    assert obs.details["conflicts"]["changelog"] == ["CHANGES.md"]
    assert obs.details["repair_effort"]["changelog"]["hunks"] == 1
    assert obs.details["repair_effort"]["semantic"]["lines"] == 0
    tree = first["tree"]
    assert isinstance(tree, str)
    text = (git.show_file(run.built.repo, tree, "CHANGES.md") or b"").decode()
    assert "<<<<<<<" not in text
    assert "- Receipts show shipping costs" in text  # the follow-up's line kept (union)


def test_the_reference_fix_survives_its_own_future_without_rerunning_tests(
    frozen: dict[str, Attempt], frozen_cache: Path
) -> None:
    run = frozen["modular"]
    repo, fix = run.built.repo, run.built.commits["fix"]
    runner = CountingRunner()
    start = git.tree_of(repo, fix)
    obs = check_sentinel(
        inputs(run, frozen_cache, candidate=fix, start_tree=start, run_tests=runner)
    )
    assert obs.checks[0].status == "passed"
    assert [s["status"] for s in _steps(obs.details)] == ["clean", "clean", "clean"]
    assert all(s["history_passed"] > 0 for s in _steps(obs.details))
    assert runner.calls <= 3  # each replayed tree equals its history tree: no second run


# --- small repositories, one behaviour each -------------------------------------------------------


def _repo(tmp_path: Path) -> tuple[Path, str, str]:
    repo, base = new_repo(
        tmp_path / "r", {"m.py": MODULE, "tests/test_m.py": TESTS, "CHANGES.md": "# Changes\n"}
    )
    fix = commit(repo, {"m.py": MODULE.replace("return x\n", "return max(x, 0)\n", 1)}, "fix")
    return repo, base, fix


def _candidate(repo: Path, base: str, files: dict[str, bytes | None]) -> tuple[str, str]:
    tree = git.tree_with_files(repo, git.tree_of(repo, base), files)
    return git.commit_tree(repo, tree, [base], "candidate"), tree


def _ctx(
    repo: Path, base: str, fix: str, tmp_path: Path, follow_ups: Sequence[str], **kw: object
) -> SentinelInputs:
    state = kw.pop("state", None) or (fix, git.tree_of(repo, fix))
    assert isinstance(state, tuple)
    candidate, tree = state
    fields: dict[str, object] = {
        "repo": repo,
        "base": base,
        "candidate": candidate,
        "start_tree": tree,
        "config": Sentinel(follow_ups=tuple(follow_ups)),
        "run_tests": run_pytest,
        "cache_dir": tmp_path / "cache",
        "reference": fix,
        "regression_tests": ("tests/test_m.py::test_price",),
    }
    fields.update(kw)
    return SentinelInputs(**fields)  # type: ignore[arg-type]


def test_history_results_are_cached_on_disk(tmp_path: Path) -> None:
    repo, base, fix = _repo(tmp_path)
    follow = commit(
        repo,
        {"tests/test_tax.py": "from m import tax\n\n\ndef test_tax():\n    assert tax(10) == 2\n"},
        "t",
    )
    state = _candidate(
        repo, base, {"m.py": MODULE.replace("return x\n", "return abs(x) and x\n", 1).encode()}
    )
    runner = CountingRunner()
    ctx = _ctx(repo, base, fix, tmp_path, [follow], state=state, run_tests=runner)
    first = check_sentinel(ctx)
    assert runner.calls == 2  # history, then the replayed state
    second = check_sentinel(ctx)
    assert runner.calls == 3  # history read back from the cache; the replayed state runs again
    assert [s["history_cached"] for s in _steps(first.details) + _steps(second.details)] == [
        False,
        True,
    ]
    assert len(list((tmp_path / "cache" / "history").glob("*.json"))) == 1
    assert first.checks == second.checks and first.checks[0].status == "passed"
    check_sentinel(
        _ctx(
            repo,
            base,
            fix,
            tmp_path,
            [follow],
            state=state,
            run_tests=runner,
            environment_digest="e2",
        )
    )
    assert runner.calls == 5  # another environment is another key


def test_missing_follow_up_is_a_user_error(tmp_path: Path) -> None:
    repo, base, fix = _repo(tmp_path)
    with pytest.raises(UserInputError, match="is not in repository"):
        follow_up_commits(repo, base, fix, ["deadbeef" * 5], 0, "main", True)


def test_follow_up_not_descending_from_the_base_is_a_user_error(tmp_path: Path) -> None:
    repo, base, fix = _repo(tmp_path)
    orphan = git.commit_tree(repo, git.tree_of(repo, fix), [], "unrelated root")
    with pytest.raises(UserInputError, match="not a descendant of the base"):
        follow_up_commits(repo, base, fix, [orphan], 0, "main", True)
    with pytest.raises(UserInputError, match="not a descendant of the base"):
        follow_up_commits(repo, base, fix, [base], 0, "main", True)


def test_follow_up_count_walks_first_parents_and_replays_merges_against_the_reference_side(
    tmp_path: Path,
) -> None:
    repo, base, fix = _repo(tmp_path)
    run_git(repo, "checkout", "-q", "-b", "topic", base)
    topic = commit(repo, {"other.py": "x = 1\n"}, "topic work")
    run_git(repo, "checkout", "-q", "main")
    run_git(repo, "merge", "-q", "--no-ff", "-m", "merge topic", topic)
    after = commit(repo, {"CHANGES.md": "# Changes\n\n- more\n"}, "after")
    found = follow_up_commits(repo, base, fix, [], 5, "main", True)
    assert [f.subject for f in found] == ["merge topic", "after"]
    assert found[0].merge and found[0].parent == fix  # the parent that descends from the reference
    assert found[1].sha == git.rev_parse(repo, after)
    assert len(follow_up_commits(repo, base, fix, [], 1, "main", True)) == 1
    obs = check_sentinel(_ctx(repo, base, fix, tmp_path, (), config=Sentinel(follow_up_count=5)))
    assert obs.checks[0].status == "passed"
    assert obs.details["window"]["source"] == "history"
    assert any("2 of the 5" in n for n in obs.details["residual_unknowns"])


def test_non_adjacent_follow_ups_carry_the_commits_between(tmp_path: Path) -> None:
    """Commits the window leaves out must not make the real fix conflict with its own future."""
    repo, base, fix = _repo(tmp_path)
    fixed = MODULE.replace("return x\n", "return max(x, 0)\n", 1)
    commit(repo, {"m.py": fixed.replace("x * 0.2", "x * 0.25")}, "unnamed")
    named = commit(repo, {"m.py": fixed.replace("x * 0.2", "round(x * 0.25, 2)")}, "named")
    (found,) = follow_up_commits(repo, base, fix, [named], 0, "main", True)
    assert found.parent == fix and found.between == 1
    obs = check_sentinel(_ctx(repo, base, fix, tmp_path, [named]))
    assert obs.checks[0].status == "passed", obs.checks[0].detail
    (step,) = _steps(obs.details)
    assert step["tree"] == git.tree_of(repo, named)
    assert obs.details["window"]["unnamed_between"] == 1


def test_a_follow_up_after_the_real_merge_does_not_replay_the_target_heads_changes_again(
    tmp_path: Path,
) -> None:
    """click-write-usage: the fix branched from the base while the target branch moved (a test file
    changed), the candidate landed merged into that target head, and the follow-up descends from
    the real merge and edits the same lines again. ``reference..follow-up`` also holds the target
    head's own change, which the landed state already has; taken against the reference alone it
    conflicts with itself (gold and null alike). Against the merge of the reference and the
    target head it replays cleanly."""
    repo, base = new_repo(tmp_path / "r", {"m.py": MODULE, "tests/test_m.py": TESTS})
    run_git(repo, "checkout", "-q", "-b", "fix", base)
    fix = commit(repo, {"m.py": MODULE.replace("return x\n", "return max(x, 0)\n", 1)}, "fix")
    run_git(repo, "checkout", "-q", "main")
    tax = "\n\ndef test_tax():\n    from m import tax\n\n    assert tax(10) == 2\n"
    target = commit(repo, {"tests/test_m.py": TESTS + tax}, "main moves")
    run_git(repo, "merge", "-q", "--no-ff", "-m", "merge the fix", fix)
    follow = commit(repo, {"tests/test_m.py": TESTS + tax.replace("10) == 2", "20) == 4")}, "f")
    landed = git.merge_candidate(repo, target, fix).tree
    state = (git.commit_tree(repo, landed, [target, fix], "harness merge"), landed)
    ctx = _ctx(repo, base, fix, tmp_path, [follow], state=state, target=target)
    obs = check_sentinel(ctx)
    assert obs.checks[0].status == "passed", obs.checks[0].detail
    (step,) = _steps(obs.details)
    assert (step["replay"], step["conflicts"]) == ("clean", [])
    assert step["tree"] == git.tree_of(repo, follow)


def test_follow_up_deleting_the_changed_file_supersedes_the_change(tmp_path: Path) -> None:
    """A follow-up that deletes the file the candidate changed is not blocked by it: the deletion
    wins (as it did for the real change), counted apart, and the follow-up's tests judge the rest."""
    repo, base, fix = _repo(tmp_path)
    gone = commit(repo, {"m.py": None, "tests/test_m.py": None, "n.py": "VALUE = 1\n"}, "drop m")
    state = _candidate(
        repo, base, {"m.py": MODULE.replace("return x\n", "return abs(x)\n", 1).encode()}
    )
    obs = check_sentinel(_ctx(repo, base, fix, tmp_path, [gone], state=state))
    (step,) = _steps(obs.details)
    assert step["status"] == "resolved"
    (conflict,) = step["conflicts"]
    assert conflict["kind"] == "modify/delete" and conflict["superseded"] is True
    assert obs.details["conflicts"]["semantic"] == []
    assert obs.details["conflicts"]["superseded"] == ["m.py"]
    assert obs.details["extra_repair_effort"] == 0
    tree = step["tree"]
    assert isinstance(tree, str)
    assert git.show_file(repo, tree, "m.py") is None


def test_follow_up_moving_the_changed_file_carries_the_change(tmp_path: Path) -> None:
    repo, base, fix = _repo(tmp_path)
    run_git(repo, "mv", "m.py", "n.py")
    moved = commit(repo, {"tests/test_m.py": TESTS.replace("from m", "from n")}, "move m to n")
    changed = MODULE.replace("return x * 0.2\n", "return x * 0.25\n")
    state = _candidate(
        repo, base, {"m.py": changed.replace("return x\n", "return max(x, 0)\n", 1).encode()}
    )
    obs = check_sentinel(_ctx(repo, base, fix, tmp_path, [moved], state=state))
    (step,) = _steps(obs.details)
    assert obs.checks[0].status == "passed", obs.checks[0].detail
    assert step["status"] == "clean" and step["tests_outcome"] == "passed"
    tree = step["tree"]
    assert isinstance(tree, str)
    assert b"x * 0.25" in (git.show_file(repo, tree, "n.py") or b"")
    assert git.show_file(repo, tree, "m.py") is None


def test_empty_follow_up_is_recorded_not_failed(tmp_path: Path) -> None:
    repo, base, fix = _repo(tmp_path)
    empty = commit(repo, {}, "empty")
    obs = check_sentinel(_ctx(repo, base, fix, tmp_path, [empty]))
    (step,) = _steps(obs.details)
    assert step["status"] == "empty" and step["tests_outcome"] == "none"
    assert obs.checks[0].status == "passed"


@pytest.mark.parametrize("workers", [1, 2])
def test_uncollectable_history_is_a_step_error_not_a_regression(
    tmp_path: Path, workers: int
) -> None:
    """A follow-up whose tests do not even import in history says nothing about the candidate."""
    repo, base, fix = _repo(tmp_path)
    broken = commit(
        repo,
        {"tests/test_more.py": "import not_a_module_anywhere\n\ndef test_x():\n    pass\n"},
        "b",
    )
    obs = check_sentinel(
        _ctx(repo, base, fix, tmp_path, [broken], regression_tests=(), workers=workers)
    )
    (step,) = _steps(obs.details)
    assert step["status"] == "error" and step["tests_outcome"] == "error"
    assert step["regressions"] == []
    assert obs.checks[0].status == "error"
    assert "tests/test_more.py" in obs.checks[0].detail


def test_many_uncollectable_files_are_named_first_and_counted(tmp_path: Path) -> None:
    """pytest-11143's third follow-up made a detail of 94 file names (4,800 characters)."""
    repo, base, fix = _repo(tmp_path)
    names = [f"tests/test_more_{i:02}.py" for i in range(14)]
    broken = commit(repo, {n: "import not_a_module_anywhere\n" for n in names}, "b")
    obs = check_sentinel(_ctx(repo, base, fix, tmp_path, [broken], regression_tests=()))
    (step,) = _steps(obs.details)
    assert step["uncollectable"] == names  # every one kept in the record
    said = f"not collectable at {broken[:12]} in history: 14 test files: "
    assert said + ", ".join(names[:10]) + " and 4 more" in step["detail"], step["detail"]
    assert names[10] not in obs.checks[0].detail


@pytest.mark.parametrize(
    ("files", "said"),
    [
        (  # pytest-11143's third follow-up: setup.cfg raised a pin past the installed version
            {"setup.cfg": "[options]\ninstall_requires =\n    pluggy>=1.4.0,<2.0\n    tomli>=1\n"},
            "pluggy<2.0,>=1.4.0 (has pluggy 1.3.0), tomli>=1 (not installed)",
        ),
        (  # a PEP 621 project adding a dependency; a marker for another Python is left out
            {
                "pyproject.toml": '[project]\nname = "m"\ndependencies = '
                '["attrs>=23", "exceptiongroup; python_version < \'3.9\'"]\n'
            },
            "attrs>=23 (not installed)",
        ),
    ],
    ids=["setup-cfg", "pyproject"],
)
def test_uncollectable_follow_up_names_the_requirements_the_environment_lacks(
    tmp_path: Path, files: dict[str, str], said: str
) -> None:
    """pytest-11143's sentinel said `error` at its third follow-up and no reader knew why."""
    repo, base, fix = _repo(tmp_path)
    broken = commit(repo, {**files, "tests/test_new.py": "import pluggy_new_api\n"}, "b")
    packages = ("pluggy==1.3.0", "iniconfig==2.0.0", "-e file:///checkout")
    ctx = _ctx(
        repo, base, fix, tmp_path, [broken], regression_tests=(), packages=packages, python="3.9.18"
    )
    (step,) = _steps(check_sentinel(ctx).details)
    assert step["status"] == "error"
    n = said.count("(")
    what = "requirement" if n == 1 else "requirements"
    expected = f"{broken[:12]} declares {n} {what} the environment (built for the base) does not meet: {said}"
    assert expected in step["detail"], step["detail"]


def test_uncollectable_follow_up_with_its_requirements_met_says_no_more(tmp_path: Path) -> None:
    repo, base, fix = _repo(tmp_path)
    cfg = "[options]\ninstall_requires =\n    pluggy>=1.0\n    colorama; sys_platform == 'win32'\n"
    broken = commit(repo, {"setup.cfg": cfg, "tests/test_new.py": "import gone\n"}, "b")
    ctx = _ctx(
        repo,
        base,
        fix,
        tmp_path,
        [broken],
        regression_tests=(),
        packages=("pluggy==1.3.0",),
        python="3.9.18",
    )
    (step,) = _steps(check_sentinel(ctx).details)
    assert step["status"] == "error"
    assert "declares" not in step["detail"]
    assert (
        step["detail"]
        == f"not collectable at {broken[:12]} in history: 1 test file: tests/test_new.py"
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_a_test_passing_in_history_and_failing_here_is_a_regression(
    tmp_path: Path, workers: int
) -> None:
    repo, base, fix = _repo(tmp_path)
    follow = commit(
        repo,
        {
            "tests/test_zero.py": (
                "from m import price\n\n\ndef test_negative():\n    assert price(-2) == 0\n"
            )
        },
        "f",
    )
    state = _candidate(
        repo,
        base,
        {"m.py": MODULE.replace("return x\n", "return x if x > -5 else 0\n", 1).encode()},
    )
    obs = check_sentinel(_ctx(repo, base, fix, tmp_path, [follow], state=state, workers=workers))
    (step,) = _steps(obs.details)
    assert obs.checks[0].status == "failed"
    assert step["status"] == "regressed"
    assert step["regressions"] == ["tests/test_zero.py::test_negative"]
    assert obs.details["regressions"] == [
        {"step": follow, "test": "tests/test_zero.py::test_negative"}
    ]


@pytest.mark.parametrize("candidate", ["fix", "base"])
def test_one_uncollectable_file_loses_no_other_files_results(
    tmp_path: Path, candidate: str
) -> None:
    """A later commit with a test file needing a plugin the environment lacks, and an examples/
    conftest importing an uninstalled package, aborted the whole pytest session: the step became
    an error listing every file and hid a real regression. Files are counted one by one."""
    repo, base, fix = _repo(tmp_path)
    follow = commit(
        repo,
        {
            "tests/test_zero.py": "from m import price\n\n\ndef test_negative():\n    assert price(-2) == 0\n",
            "tests/test_needs_plugin.py": "import pytest_no_such_plugin\n\n\ndef test_p():\n    pass\n",
            "examples/conftest.py": "import no_such_package_installed\n",
            "examples/test_example.py": "def test_e():\n    pass\n",
        },
        "f",
    )
    state = None if candidate == "fix" else _candidate(repo, base, {})
    obs = check_sentinel(_ctx(repo, base, fix, tmp_path, [follow], state=state))
    (step,) = _steps(obs.details)
    assert step["uncollectable"] == ["examples/test_example.py", "tests/test_needs_plugin.py"]
    assert step["history_passed"] == 2  # test_price and test_negative
    if candidate == "fix":
        assert step["status"] == "clean" and obs.checks[0].status == "passed", step
        assert "not collectable" in str(step["detail"])
    else:
        assert step["status"] == "regressed" and obs.checks[0].status == "failed"
        assert step["regressions"] == ["tests/test_zero.py::test_negative"]


def test_empty_window_is_an_error(tmp_path: Path) -> None:
    repo, base, fix = _repo(tmp_path)
    obs = check_sentinel(_ctx(repo, base, fix, tmp_path, ()))
    assert obs.checks[0].status == "error"
    assert "window is empty" in obs.checks[0].detail


def test_missing_matrix_interpreter_errors_the_sentinel_naming_it(tmp_path: Path) -> None:
    repo, base, fix = _repo(tmp_path)
    empty = commit(repo, {}, "empty")
    config = Sentinel(follow_ups=(empty,), python_matrix=("2.1",))
    obs = check_sentinel(_ctx(repo, base, fix, tmp_path, (), config=config))
    assert obs.checks[0].status == "error"
    assert "python2.1 not found" in obs.checks[0].detail
    assert obs.details["matrix"][0]["version"] == "2.1"
