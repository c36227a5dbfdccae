from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from _generators import CLIENT, GEN, GENERATOR, POLICY, SPEC, env_python
from _lifecycle_git import commit, new_repo
from repogate import git, sandbox
from repogate.contract import Generator
from repogate.gates.generated import check_generated
from repogate.receipt import Check
from repogate.sandbox import SandboxPolicy


@pytest.fixture
def python_bin(tmp_path: Path) -> Path:
    return env_python(tmp_path)


def _candidate(
    tmp_path: Path,
    files: Mapping[str, str | None],
    base_files: Mapping[str, str | None] | None = None,
) -> tuple[Path, tuple[git.ChangedPath, ...]]:
    base_files = base_files or {"spec/api.json": SPEC, "tools/gen.py": GEN, "client/api.py": CLIENT}
    repo, base = new_repo(tmp_path / "repo", base_files)
    head = commit(repo, files)
    checkout = tmp_path / "checkout"
    git.export_tree(repo, head, checkout)
    return checkout, git.changed_paths(repo, base, head)


def _run(
    tmp_path: Path,
    python_bin: Path,
    files: Mapping[str, str | None],
    generators: tuple[Generator, ...] = (GENERATOR,),
    policy: SandboxPolicy = POLICY,
) -> tuple[Check, dict[str, Any]]:
    checkout, changed = _candidate(tmp_path, files)
    seen = check_generated(checkout, generators, changed, policy, python_bin)
    return seen.checks[0], seen.details


def test_source_and_regenerated_output_is_fresh(tmp_path: Path, python_bin: Path) -> None:
    files = {"spec/api.json": '{"timeout": 7}', "client/api.py": CLIENT.replace("5", "7")}
    check, details = _run(tmp_path, python_bin, files)
    assert check.status == "passed", check.detail
    assert details["generators"][0]["returncode"] == 0


def test_source_changed_without_regeneration_is_stale(tmp_path: Path, python_bin: Path) -> None:
    check, details = _run(tmp_path, python_bin, {"spec/api.json": '{"timeout": 7}'})
    assert check.status == "failed"
    assert check.detail == "regeneration changed client/api.py"
    assert details["derived_without_source"] == []


def test_derived_output_edited_without_source_is_named(tmp_path: Path, python_bin: Path) -> None:
    """A fix made in a generated file does not survive: the next regeneration overwrites it."""
    check, details = _run(tmp_path, python_bin, {"client/api.py": CLIENT.replace("5", "7")})
    assert check.status == "failed"
    assert (
        "edited derived output client/api.py without its source: regeneration overwrites it"
        in check.detail
    )
    assert details["derived_without_source"] == ["client/api.py"]
    assert details["marked_generated"] == ["client/api.py"]


def test_new_untracked_output_counts(tmp_path: Path, python_bin: Path) -> None:
    """``git diff --exit-code`` misses new files; a generator that adds one must fail freshness."""
    gen = GEN + 'pathlib.Path("client/extra.py").write_text("X = 1\\n")\n'
    check, _ = _run(tmp_path, python_bin, {"tools/gen.py": gen})
    assert check.status == "failed"
    assert check.detail == "regeneration changed client/extra.py"


def test_failing_generator_is_an_error_never_a_pass(tmp_path: Path, python_bin: Path) -> None:
    """A generator that cannot run leaves freshness unverified: error, never passed."""
    gen = Generator(name="broken", command="python -c 'raise SystemExit(\"spec missing\")'")
    check, details = _run(tmp_path, python_bin, {"README.md": "x\n"}, (gen,))
    assert check.status == "error"
    assert "generator 'broken'" in check.detail
    assert "exited 1: spec missing" in check.detail
    assert details["generators"][0]["returncode"] == 1


def test_missing_generator_program_is_an_error(tmp_path: Path, python_bin: Path) -> None:
    gen = Generator(name="absent", command="no-such-generator --all")
    check, _ = _run(tmp_path, python_bin, {"README.md": "x\n"}, (gen,))
    assert check.status == "error"
    assert "exited 127" in check.detail
    assert check.kind == "other evaluator error"


def test_generator_timeout_is_an_error(tmp_path: Path, python_bin: Path) -> None:
    gen = Generator(name="slow", command="python -c 'import time; time.sleep(30)'")
    policy = SandboxPolicy(timeout_s=0.5)
    check, _ = _run(tmp_path, python_bin, {"README.md": "x\n"}, (gen,), policy)
    assert check.status == "error"
    assert "timed out" in check.detail
    assert check.kind == "timeout"  # set where the generator ran out of time, not read from words


def test_generator_needing_network_is_an_error(tmp_path: Path, python_bin: Path) -> None:
    """A generator that fetches its input cannot be verified offline: error, never passed."""
    if not sandbox.isolation(False).network_off:
        pytest.skip("no network isolation on this machine")
    fetch = "import urllib.request; urllib.request.urlopen('https://pypi.org/simple/', timeout=5)"
    gen = Generator(name="fetch", command=f'python -c "{fetch}"')
    check, _ = _run(tmp_path, python_bin, {"README.md": "x\n"}, (gen,))
    assert check.status == "error"
    assert "it seems to need the network, which this generator is not granted" in check.detail


def test_marked_file_edited_without_generator_is_an_error(tmp_path: Path, python_bin: Path) -> None:
    """With no generator declared, an edit to a file marked generated cannot be verified."""
    check, details = _run(tmp_path, python_bin, {"client/api.py": CLIENT + "X = 1\n"}, ())
    assert check.status == "error"
    assert "client/api.py" in check.detail
    assert details["marked_generated"] == ["client/api.py"]


def test_linguist_generated_attribute_marks_files(tmp_path: Path, python_bin: Path) -> None:
    base = {".gitattributes": "vendor/** linguist-generated=true\n", "vendor/lib.js": "a\n"}
    checkout, changed = _candidate(tmp_path, {"vendor/lib.js": "b\n"}, base)
    check = check_generated(checkout, (), changed, POLICY, python_bin).checks[0]
    assert check.status == "error"


def test_at_generated_tag_marks_files(tmp_path: Path, python_bin: Path) -> None:
    base = {"schema.sql": "-- @generated by dbgen\nCREATE TABLE t (x int);\n"}
    checkout, changed = _candidate(tmp_path, {"schema.sql": "-- @generated\n"}, base)
    assert check_generated(checkout, (), changed, POLICY, python_bin).checks[0].status == "error"


def test_no_generator_no_marked_file_passes_with_reason(tmp_path: Path, python_bin: Path) -> None:
    check, _ = _run(tmp_path, python_bin, {"README.md": "mentions @generated in prose\n"}, ())
    assert check.status == "passed"
    assert check.detail == "no generator declared; no generated file edited"


def test_dirty_checkout_is_an_error(tmp_path: Path, python_bin: Path) -> None:
    checkout, changed = _candidate(tmp_path, {"README.md": "x\n"})
    (checkout / "stray.txt").write_text("left behind\n")
    check = check_generated(checkout, (GENERATOR,), changed, POLICY, python_bin).checks[0]
    assert check.status == "error"
    assert "not clean" in check.detail
