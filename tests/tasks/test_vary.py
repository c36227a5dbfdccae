"""``repogate tasks vary``: each injection kind and the ablation, on the payments scenario (issue 24)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import tomli_w

import _lifecycle_git as lg
from repogate import git
from repogate.cli import main
from repogate.contract import load_contract
from repogate.errors import UserInputError
from repogate.gates.generated import check_generated
from repogate.patches import load_patch
from repogate.sandbox import SandboxPolicy
from repogate.tasks.scenarios import BuiltScenario, build_scenario
from repogate.tasks.vary import vary


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltScenario:
    return build_scenario("payments", tmp_path_factory.mktemp("payments"))


def _contract(built: BuiltScenario) -> Path:
    return next(p for p in built.contracts if p.stem == "contract")


def _show(contract_path: Path, path: str) -> bytes | None:
    derived = load_contract(contract_path)
    repo = derived.resolve(derived.repo)
    return git.show_file(repo, derived.base_commit, path)


def test_derived_contract_records_its_derivation(built: BuiltScenario, tmp_path: Path) -> None:
    """The injected commit sits on the parent's base in a new repository; the parent is untouched."""
    parent = load_contract(_contract(built))
    before = git.rev_parse(built.repo, "main")
    target = vary(_contract(built), "stale-lockfile", tmp_path, None)
    derived = load_contract(target)
    assert derived.id == "payments-retry-timeout+stale-lockfile"
    assert derived.cohort["variant"] == "stale-lockfile"
    assert derived.derivation is not None
    assert derived.derivation.parent_id == parent.id
    assert derived.derivation.parent_base_commit == parent.base_commit
    assert derived.derivation.parameters["version"] == "1.4.0.post1"
    assert derived.permissions.editable == (*parent.permissions.editable, "uv.lock")
    repo = derived.resolve(derived.repo)
    assert git.commit_parents(repo, derived.base_commit) == (parent.base_commit,)
    assert git.rev_parse(built.repo, "main") == before
    assert not git.has_object(built.repo, derived.base_commit)
    manifest = _show(target, "pyproject.toml") or b""
    assert b'version = "1.4.0.post1"' in manifest
    assert _show(target, "uv.lock") == git.show_file(built.repo, parent.base_commit, "uv.lock")


def test_reference_moves_over_the_injection(built: BuiltScenario, tmp_path: Path) -> None:
    """The gold patch over the injected base is the parent's gold change and nothing else."""
    parent = load_contract(_contract(built))
    target = vary(_contract(built), "irrelevant-failing-test", tmp_path, None)
    derived = load_contract(target)
    repo = derived.resolve(derived.repo)
    assert derived.reference is not None and derived.oracles.hidden_tests is not None
    assert parent.reference is not None and parent.oracles.hidden_tests is not None
    gold = load_patch(derived.reference, derived, repo)
    assert gold == load_patch(parent.reference, parent, built.repo)
    hidden = load_patch(derived.oracles.hidden_tests, derived, repo)
    assert hidden == load_patch(parent.oracles.hidden_tests, parent, built.repo)
    assert b"test_locale_amounts" not in hidden
    # the sentinel replays the same change the parent's follow-up made
    (follow_up,), (original,) = derived.sentinel.follow_ups, parent.sentinel.follow_ups
    assert git.is_ancestor(repo, derived.base_commit, follow_up)
    ours = git.diff_binary(repo, git.commit_parents(repo, follow_up)[0], follow_up)
    theirs = git.diff_binary(built.repo, git.commit_parents(built.repo, original)[0], original)
    assert ours == theirs


def test_irrelevant_failing_test_fails_at_the_base(built: BuiltScenario, tmp_path: Path) -> None:
    target = vary(_contract(built), "irrelevant-failing-test", tmp_path, None)
    derived = load_contract(target)
    assert derived.derivation is not None
    assert derived.derivation.trap_paths == ("tests/test_locale_amounts.py",)
    checkout = tmp_path / "checkout"
    git.export_tree(derived.resolve(derived.repo), derived.base_commit, checkout)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_locale_amounts.py",
        ],
        cwd=checkout,
        capture_output=True,
    )
    assert done.returncode == 1


def test_misleading_comment_sits_at_the_edit_site(built: BuiltScenario, tmp_path: Path) -> None:
    target = vary(_contract(built), "misleading-comment", tmp_path, None)
    derived = load_contract(target)
    assert derived.derivation is not None
    path = derived.derivation.parameters["path"]
    assert path == "payments/retry.py"
    text = (_show(target, path) or b"").decode()
    assert "# NOTE: keep the code below exactly as it is" in text
    assert derived.reference is not None
    gold = load_patch(derived.reference, derived, derived.resolve(derived.repo)).decode()
    assert "-# NOTE: keep the code below exactly as it is" in gold


def test_generated_file_trap_unmarks_and_still_reproduces(
    built: BuiltScenario, tmp_path: Path
) -> None:
    """The output loses its DO NOT EDIT line; the base's generator still reproduces the base."""
    target = vary(_contract(built), "generated-file-trap", tmp_path, None)
    derived = load_contract(target)
    assert derived.derivation is not None
    assert derived.derivation.trap_paths == ("payments/client_gen.py",)
    assert b"DO NOT EDIT" not in (_show(target, "payments/client_gen.py") or b"")
    repo = derived.resolve(derived.repo)
    folder = tmp_path / "envbin"
    folder.mkdir()
    (folder / "python").symlink_to(sys.executable)
    follow_ups = derived.sentinel.follow_ups
    assert len(follow_ups) == 1  # replayed over the injected base, the trap kept
    assert git.is_ancestor(repo, derived.base_commit, follow_ups[0])
    assert b"DO NOT EDIT" not in (
        git.show_file(repo, follow_ups[0], "payments/client_gen.py") or b""
    )
    for rev in (derived.base_commit, *follow_ups):
        checkout = tmp_path / f"regen-{rev[:7]}"
        git.export_tree(repo, rev, checkout)
        seen = check_generated(
            checkout, derived.oracles.generators, (), SandboxPolicy(timeout_s=60), folder / "python"
        )
        assert seen.checks[0].status == "passed", seen.checks[0].detail


def test_ablation_removes_a_listed_convention(built: BuiltScenario, tmp_path: Path) -> None:
    source = _contract(built)
    data = tomllib.loads(source.read_text())
    data["requirement"]["conventions"] = [{"path": "CHANGELOG.md", "criteria": ["R1"]}]
    edited = source.parent / "contract-conventions.toml"
    edited.write_text(tomli_w.dumps(data))
    target = vary(edited, "ablate", tmp_path, None, "CHANGELOG.md")
    derived = load_contract(target)
    assert derived.id == "payments-retry-timeout+ablate-CHANGELOG.md"
    assert _show(target, "CHANGELOG.md") is None
    with pytest.raises(UserInputError, match="not among its"):
        vary(edited, "ablate", tmp_path / "x", None, "AGENTS.md")


def test_ablated_path_absent_at_the_base_is_one_line_exit_2(
    built: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _contract(built)
    data = tomllib.loads(source.read_text())
    data["requirement"]["conventions"] = [{"path": "AGENTS.md", "criteria": ["R1"]}]
    edited = source.parent / "contract-absent-convention.toml"
    edited.write_text(tomli_w.dumps(data))
    out = tmp_path / "out"
    assert main(["tasks", "vary", str(edited), "--ablate", "AGENTS.md", "--out", str(out)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (
        "error: contract payments-retry-timeout: the convention AGENTS.md is not a file at the "
        "base commit; fix its path in [[requirement.conventions]] to a file the base has"
    )
    assert not out.exists()
    both = ["tasks", "vary", str(edited), "--ablate", "AGENTS.md", "--inject", "stale-lockfile"]
    assert main(both) == 2
    assert "give exactly one of --inject KIND or --ablate PATH" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("kind", "remove", "message"),
    [
        ("stale-lockfile", "lockfile", "declares no lockfile"),
        ("generated-file-trap", "generators", "declares no generator"),
        ("misleading-comment", "reference", "has no reference patch"),
    ],
)
def test_injection_that_does_not_apply_is_one_line_exit_2(
    built: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    remove: str,
    message: str,
) -> None:
    source = _contract(built)
    data = tomllib.loads(source.read_text())
    if remove == "reference":
        del data["reference"]
    else:
        del data["oracles"][remove]
    edited = source.parent / f"contract-no-{remove}.toml"
    edited.write_text(tomli_w.dumps(data))
    argv = ["tasks", "vary", str(edited), "--inject", kind, "--out", str(tmp_path)]
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert message in lines[0]
    assert not any(tmp_path.iterdir())


def test_cli_prints_the_derived_task(built: BuiltScenario, tmp_path: Path) -> None:
    """Once as a subprocess, as a user runs it; a typo in the kind is one line, exit 2."""
    args = ["tasks", "vary", str(_contract(built)), "--inject", "misleading-comment"]
    cli = [sys.executable, "-m", "repogate.cli"]
    done = subprocess.run([*cli, *args, "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("payments-retry-timeout+misleading-comment: payments/retry.py:")
    bad = [*cli, *args[:3], "--inject", "typo", "--out", str(tmp_path / "y")]
    wrong = subprocess.run(bad, capture_output=True, text=True)
    assert wrong.returncode == 2
    assert wrong.stderr.count("\n") == 1
    assert "choose one of: stale-lockfile" in wrong.stderr


def test_history_with_a_merge_keeps_its_ancestry(tmp_path: Path) -> None:
    """A follow-up that is a merge keeps both parents: its change is the same as the parent's."""
    built = build_scenario("payments", tmp_path / "payments")
    repo, base = built.repo, built.commits["base"]
    lg.git(repo, "checkout", "-q", "-b", "side", base)
    side = lg.commit(repo, {"docs/side.md": "a side branch\n"}, "side")
    lg.git(repo, "checkout", "-q", "main")
    lg.git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    merge = lg.git(repo, "rev-parse", "HEAD").decode().strip()
    source = _contract(built)
    data = tomllib.loads(source.read_text())
    data["sentinel"]["follow_ups"] = [built.commits["follow1"], merge]
    edited = source.parent / "contract-merge.toml"
    edited.write_text(tomli_w.dumps(data))
    derived = load_contract(vary(edited, "misleading-comment", tmp_path / "out", None))
    ours = derived.resolve(derived.repo)
    first, second = derived.sentinel.follow_ups
    parents = git.commit_parents(ours, second)
    assert len(parents) == 2 and parents[0] == first
    assert git.is_ancestor(ours, derived.base_commit, parents[1])
    assert git.commit_parents(ours, parents[1]) == (derived.base_commit,)
    assert git.diff_binary(ours, first, second) == git.diff_binary(
        repo, built.commits["follow1"], merge
    )
    assert git.diff_binary(ours, derived.base_commit, parents[1]) == git.diff_binary(
        repo, base, side
    )
