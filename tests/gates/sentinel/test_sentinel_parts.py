"""The sentinel's parts: conflict accounting, test selection, regeneration, Python matrix."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from _lifecycle_git import commit, new_repo
from _sentinel_support import run_pytest
from repogate import git
from repogate.contract import Generator
from repogate.gates.sentinel._anchor import Anchor
from repogate.gates.sentinel._history import is_test_file, regressions, select_tests, uncollected
from repogate.gates.sentinel._replay import changed_line_count, count_markers, resolve_text
from repogate.gates.sentinel._survival import (
    Regeneration,
    python_matrix,
    regeneration_survival,
    sandboxed_command,
)
from repogate.gates.sentinel._verdict import verdict

CONFLICT = (
    "# Changes\n"
    "<<<<<<< ours\n"
    "- ours line\n"
    "- shared\n"
    "=======\n"
    "- shared\n"
    "- theirs line\n"
    ">>>>>>> theirs\n"
    "tail\n"
)


def test_conflict_markers_count_hunks_and_lines_between_markers() -> None:
    assert count_markers(CONFLICT) == (1, 4)
    assert count_markers(CONFLICT + CONFLICT.replace("# Changes\n", "")) == (2, 8)
    assert count_markers("no conflict\n<<<<<<< unterminated\n") == (0, 0)


def test_union_keeps_both_sides_once_and_theirs_takes_the_follow_up() -> None:
    union = resolve_text(CONFLICT, "union")
    assert union == "# Changes\n- ours line\n- shared\n- theirs line\ntail\n"
    assert resolve_text(CONFLICT, "theirs") == "# Changes\n- shared\n- theirs line\ntail\n"
    diff3 = CONFLICT.replace("=======\n", "||||||| base\n- old\n=======\n")
    assert count_markers(diff3) == (1, 5)
    assert resolve_text(diff3, "union") == union


def test_changed_line_count_is_at_least_one() -> None:
    assert changed_line_count("a\nb\n", "a\nc\n") == 2
    assert changed_line_count("a\n", "a\n") == 1


def test_test_files_and_selection(tmp_path: Path) -> None:
    assert is_test_file("tests/test_x.py") and is_test_file("pkg/x_test.py")
    assert not is_test_file("tests/conftest.py") and not is_test_file("tests/test_x.txt")
    repo, base = new_repo(tmp_path / "r", {"m.py": "x = 1\n", "tests/test_m.py": "", "t2.py": ""})
    follow = commit(repo, {"tests/test_new.py": "", "m.py": "x = 2\n", "tests/test_m.py": None})
    ids = ("tests/test_m.py::test_a", "t2.py::test_b", "tests/test_gone.py::test_c")
    assert select_tests(repo, follow, base, ids) == ("t2.py", "tests/test_new.py")


def test_uncollected_and_regressions_read_outcomes_by_file() -> None:
    history = {"a.py::t1": "passed", "a.py::t2": "failed", "b.py": "error"}
    assert uncollected(history, ["a.py", "b.py", "c.py"]) == ("b.py", "c.py")
    replayed = {"a.py::t1": "failed", "a.py::t2": "failed"}
    assert regressions(history, replayed, ["a.py"]) == ("a.py::t1",)
    assert regressions(history, {}, ["b.py"]) == ()


GEN = (
    "import json, pathlib\n"
    "spec = json.loads(pathlib.Path('spec.json').read_text())\n"
    "lines = [f'{k} = {v}\\n' for k, v in sorted(spec.items())]\n"
    "pathlib.Path('consts.py').write_text(''.join(lines))\n"
)
GENERATOR = Generator(
    name="consts", command=f"{sys.executable} gen.py", inputs=("spec.json",), outputs=("consts.py",)
)


def _generated_repo(tmp_path: Path) -> tuple[Path, str]:
    files = {"gen.py": GEN, "spec.json": '{"LIMIT": 3}', "consts.py": "LIMIT = 3\n", "m.py": "a\n"}
    return new_repo(tmp_path / "g", files)


def _survive(
    repo: Path, base: str, files: Mapping[str, bytes | None], gens: tuple[Generator, ...]
) -> Regeneration:
    tree = git.tree_with_files(repo, git.tree_of(repo, base), files)
    candidate = git.commit_tree(repo, tree, [base], "candidate")
    return regeneration_survival(repo, base, candidate, tree, gens, sandboxed_command)


def test_a_hand_edit_of_a_generated_file_does_not_survive_regeneration(tmp_path: Path) -> None:
    """The seed's generator that restores the old constant two weeks later: intent lost."""
    repo, base = _generated_repo(tmp_path)
    result = _survive(repo, base, {"consts.py": b"LIMIT = 5\n"}, (GENERATOR,))
    assert result.status == "failed"
    assert result.drifted_outputs == ("consts.py",)


def test_an_edit_of_the_generator_input_survives(tmp_path: Path) -> None:
    repo, base = _generated_repo(tmp_path)
    files = {"spec.json": b'{"LIMIT": 5}', "consts.py": b"LIMIT = 5\n", "m.py": b"a\nb\n"}
    result = _survive(repo, base, files, (GENERATOR,))
    assert result.status == "passed", result.detail
    assert result.generators == ("consts",)


def test_candidate_lines_a_generator_removes_are_lost(tmp_path: Path) -> None:
    repo, base = _generated_repo(tmp_path)
    rewrite = Generator(
        name="reset", command=f"{sys.executable} -c \"open('m.py','w').write('a\\n')\""
    )
    result = _survive(repo, base, {"m.py": b"a\nkeep me\n"}, (GENERATOR, rewrite))
    assert result.status == "failed"
    assert [(x.path, x.lines) for x in result.lost] == [("m.py", ("keep me",))]


def test_a_failing_generator_is_an_error_and_no_generator_is_skipped(tmp_path: Path) -> None:
    repo, base = _generated_repo(tmp_path)
    broken = Generator(name="broken", command=f'{sys.executable} -c "raise SystemExit(3)"')
    assert _survive(repo, base, {"m.py": b"b\n"}, (broken,)).status == "error"
    assert _survive(repo, base, {"m.py": b"b\n"}, ()).status == "skipped"


def test_the_sentinels_error_is_a_timeout_only_when_a_generator_ran_out_of_time() -> None:
    """The kind comes from the regeneration's record, not from the words of its detail."""
    slow = Regeneration(status="error", detail="generator g exited 1: gave up", timed_out=True)
    worded = Regeneration(status="error", detail="generator g timed out: (words only)")
    start = Anchor(status="base", tree="0" * 40)
    assert (verdict([], slow, [], start).status, verdict([], slow, [], start).kind) == (
        "error",
        "timeout",
    )
    assert verdict([], worded, [], start).kind == "other evaluator error"
    assert verdict([], Regeneration(status="skipped"), [], start).kind == "other evaluator error"


def test_matrix_missing_interpreter_is_an_error_naming_it(tmp_path: Path) -> None:
    (entry,) = python_matrix(["2.1"], tmp_path, ["t.py::t"], None, sandboxed_command)
    assert entry.status == "error" and "python2.1" in entry.detail


def test_matrix_runs_the_tests_under_each_present_interpreter(tmp_path: Path) -> None:
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    (tmp_path / "test_m.py").write_text(
        "def test_ok():\n    pass\n\ndef test_bad():\n    assert 0\n"
    )

    def runner(version: str, interpreter: Path, checkout: Path, tests: object) -> dict[str, str]:
        return dict(run_pytest(checkout, ["test_m.py"]))

    (unwired,) = python_matrix([version], tmp_path, ["test_m.py::test_ok"], None, sandboxed_command)
    assert unwired.status == "error" and unwired.interpreter is not None
    ids = ["test_m.py::test_ok", "test_m.py::test_bad"]
    (entry,) = python_matrix([version], tmp_path, ids, runner, sandboxed_command)
    assert entry.status == "failed" and entry.failures == ("test_m.py::test_bad",)
