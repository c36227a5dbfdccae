"""A patch that rewrites the generator is regenerated with the base's generator too (issue 24 item 4)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from _generators import CLIENT, GEN, GENERATOR, POLICY, SPEC, env_python
from _lifecycle_git import commit, new_repo
from repogate import git
from repogate.contract import Generator
from repogate.gates.generated import check_generated
from repogate.gates.generator_change import (
    changed_generator_files,
    judge_generator_change,
    with_base_generator,
)
from repogate.receipt import Observation

BASE = {"spec/api.json": SPEC, "tools/gen.py": GEN, "client/api.py": CLIENT}


@pytest.fixture
def python_bin(tmp_path: Path) -> Path:
    return env_python(tmp_path)


def _freshness(
    tmp_path: Path, python_bin: Path, files: Mapping[str, str | None], gen: Generator = GENERATOR
) -> Observation:
    """Both regenerations as the lifecycle phase runs them: the candidate's, then the base's."""
    repo, base = new_repo(tmp_path / "repo", BASE)
    head = commit(repo, files)
    changed = git.changed_paths(repo, base, head)
    git.export_tree(repo, head, tmp_path / "cand")
    seen = check_generated(tmp_path / "cand", (gen,), changed, POLICY, python_bin)
    program = changed_generator_files((gen,), changed)
    if not program:
        return seen
    mixed = with_base_generator(repo, base, head, program)
    git.export_tree(repo, mixed, tmp_path / "mixed")
    by_base = check_generated(tmp_path / "mixed", (gen,), (), POLICY, python_bin)
    return judge_generator_change(seen, by_base, program)


def test_rewritten_generator_and_hand_edited_output_fails(tmp_path: Path, python_bin: Path) -> None:
    """Threat: a patch makes the generator emit its hand edit, so its own regeneration is clean."""
    hacked = CLIENT.replace("5", "7")
    gen = f"import pathlib\npathlib.Path('client/api.py').write_text({hacked!r})\n"
    seen = _freshness(tmp_path, python_bin, {"tools/gen.py": gen, "client/api.py": hacked})
    assert seen.details["generators"][0]["returncode"] == 0  # the candidate's own run was clean
    assert seen.details["regenerated"] == []
    check = seen.checks[0]
    assert check.status == "failed"
    assert "the patch changes the generator (tools/gen.py)" in check.detail
    assert "the base's generator regenerates client/api.py differently" in check.detail
    assert "needs its owner's review" in check.detail
    assert seen.details["generator_changed"] == ["tools/gen.py"]
    assert seen.details["needs_owner_review"] == ["tools/gen.py"]


def test_generator_noop_rewrite_with_hand_edit_fails(tmp_path: Path, python_bin: Path) -> None:
    """Second shape: the generator is emptied, so regeneration leaves the hand edit alone."""
    files = {"tools/gen.py": "pass\n", "client/api.py": CLIENT.replace("5", "9")}
    check = _freshness(tmp_path, python_bin, files).checks[0]
    assert check.status == "failed"
    assert "client/api.py" in check.detail


def test_generator_module_form_is_detected(tmp_path: Path, python_bin: Path) -> None:
    """Third shape: the command names the generator as a module (``python -m tools.gen``)."""
    gen_m = GENERATOR.model_copy(update={"command": "python -m tools.gen"})
    hacked = CLIENT.replace("5", "8")
    src = f"import pathlib\npathlib.Path('client/api.py').write_text({hacked!r})\n"
    seen = _freshness(tmp_path, python_bin, {"tools/gen.py": src, "client/api.py": hacked}, gen_m)
    assert seen.checks[0].status == "failed"
    assert seen.details["generator_changed"] == ["tools/gen.py"]


def test_refactored_generator_with_same_output_passes_but_asks_review(
    tmp_path: Path, python_bin: Path
) -> None:
    """A generator change whose outputs the base's generator reproduces passes, flagged for review."""
    files = {"tools/gen.py": GEN + "# refactor: same output\n"}
    seen = _freshness(tmp_path, python_bin, files)
    check = seen.checks[0]
    assert check.status == "passed", check.detail
    assert "generator changed (tools/gen.py): needs its owner's review" in check.detail
    assert seen.details["needs_owner_review"] == ["tools/gen.py"]


def test_declared_program_globs_name_the_generator(tmp_path: Path) -> None:
    gen = GENERATOR.model_copy(update={"command": "make client", "program": ("tools/**",)})
    changed = (git.ChangedPath("M", "tools/templates/api.j2", None, is_symlink=False),)
    assert changed_generator_files((gen,), changed) == ("tools/templates/api.j2",)
    assert changed_generator_files((GENERATOR,), changed) == ()


def test_source_only_change_does_not_touch_the_generator(tmp_path: Path, python_bin: Path) -> None:
    files = {"spec/api.json": '{"timeout": 7}', "client/api.py": CLIENT.replace("5", "7")}
    seen = _freshness(tmp_path, python_bin, files)
    assert seen.checks[0].status == "passed"
    assert "generator_changed" not in seen.details
