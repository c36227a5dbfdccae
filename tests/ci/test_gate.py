"""``repogate gate`` end to end: a pull request in a local repository, GitHub Actions' variables set.

The repository has a base branch that moved on after the pull request branched, and GitHub's
merge commit of the pull request (what ``GITHUB_SHA`` names on ``pull_request`` events). The gate
runs the real pipeline (uv venv, pytest with JUnit XML) on that head, signs the verdict, appends a
Markdown summary to ``$GITHUB_STEP_SUMMARY`` and sets the job's exit code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _lifecycle_git import commit, git
from repogate.cli import ExitCode, main
from repogate.provenance import generate

CALC = "def add(a, b):\n    return a + b\n"
MUL = "\n\ndef mul(a, b):\n    return a * b\n"
TEST_ADD = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
TEST_MUL = "from calc import mul\n\n\ndef test_mul():\n    assert mul(3, 4) == 12\n"
CONTRACT = """id = "calc-pr"
repo = "."
base_commit = "0000000"  # replaced by repogate gate

[requirement]
statement = "a pull request keeps every test passing and passes its own new tests"

[environment]
install = ["uv pip install pytest"]

[permissions]
editable = ["calc/**", "tests/**"]
time_budget_s = 60
"""
NEW_TEST = "tests/test_mul.py::test_mul"


def _pull_request(root: Path, calc: str) -> tuple[Path, str, str]:
    """A repository whose ``feature`` branch changes calc; returns (repo, merge commit, main tip)."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    commit(
        repo,
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "1.0.0"\n',
            "calc/__init__.py": CALC,
            "tests/test_add.py": TEST_ADD,
        },
        "base",
    )
    git(repo, "checkout", "-q", "-b", "feature")
    commit(repo, {"calc/__init__.py": calc, "tests/test_mul.py": TEST_MUL}, "feature")
    git(repo, "checkout", "-q", "main")
    tip = commit(repo, {"README.md": "# calc\n"}, "the base branch moves on")
    git(repo, "checkout", "-q", "--detach", "main")
    git(repo, "merge", "-q", "--no-ff", "feature", "-m", "Merge feature into main")
    merge = git(repo, "rev-parse", "HEAD").decode().strip()
    git(repo, "checkout", "-q", "main")
    return repo, merge, tip


@pytest.fixture
def actions(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """GitHub Actions' variables for a pull_request job (set in this process's environment)."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    (tmp_path / "contract.toml").write_text(CONTRACT)
    variables = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_BASE_REF": "main",
        "GITHUB_HEAD_REF": "feature",
        "GITHUB_REPOSITORY": "example/calc",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
        "RUNNER_TEMP": str(tmp_path / "runner-temp"),
    }
    for key, value in variables.items():
        monkeypatch.setenv(key, value)
    return variables


def test_a_good_pull_request_is_accepted_signed_and_summarised(
    tmp_path: Path, actions: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, merge, tip = _pull_request(tmp_path, CALC + MUL)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    monkeypatch.setenv("GITHUB_SHA", merge)
    private, public = generate(tmp_path / "keys")
    monkeypatch.setenv("RG_GATE_KEY", private.read_text())
    out = tmp_path / "verdict"
    contract = str(tmp_path / "contract.toml")
    command = [sys.executable, "-m", "repogate.cli", "gate", "--contract", contract]
    done = subprocess.run(
        [*command, "--fail-to-pass", NEW_TEST, "--sign-key", "env:RG_GATE_KEY", "--out", str(out)],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ},
    )
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    summary = Path(actions["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.startswith("## repogate gate: ✅ accepted")
    assert f"- base `{tip}` (merge base of GITHUB_BASE_REF=main and the head)" in summary
    assert f"- head `{merge}` (GITHUB_SHA)" in summary
    assert "| oracle_untouched | passed |" in summary  # the PR's own new test is no oracle edit
    assert "| focused_tests_passed | passed |" in summary
    assert private.read_text().splitlines()[1] not in done.stdout + done.stderr + summary
    assert main(["verify", str(out), "--key", str(public)]) == ExitCode.OK
    decision = json.loads(next(out.glob("attempts/*/decision.json")).read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    assert decision["accepted"] is True
    assert manifest["agents"][0]["commit"] == merge
    # the candidate is the head's tree exactly
    receipt = json.loads(next(out.glob("attempts/*/receipts/*-I.intoto.json")).read_text())
    tree = next(s for s in receipt["subject"] if s["name"] == "candidate-tree")
    assert tree["digest"]["gitTree"] == git(repo, "rev-parse", f"{merge}^{{tree}}").decode().strip()


def test_a_pull_request_breaking_a_test_fails_the_job_and_shadow_mode_only_records_it(
    tmp_path: Path,
    actions: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    broken = CALC.replace("a + b", "a - b") + MUL
    repo, merge, _ = _pull_request(tmp_path, broken)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    monkeypatch.setenv("GITHUB_SHA", merge)
    args = ["gate", "--contract", str(tmp_path / "contract.toml"), "--fail-to-pass", NEW_TEST]
    assert main([*args, "--out", str(tmp_path / "v1")]) == ExitCode.NOT_ACCEPTED
    summary = Path(actions["GITHUB_STEP_SUMMARY"])
    assert summary.read_text().startswith("## repogate gate: ❌ rejected")
    assert "| regression_tests_passed | failed |" in summary.read_text()
    assert "- not signed" in summary.read_text()
    summary.unlink()
    assert main([*args, "--out", str(tmp_path / "v2"), "--shadow"]) == ExitCode.OK
    assert "shadow mode: verdict recorded" in capsys.readouterr().out
    text = summary.read_text()
    assert text.startswith("## repogate gate: ❌ rejected") and "- shadow mode:" in text
    decision = json.loads(next((tmp_path / "v2").glob("attempts/*/decision.json")).read_text())
    assert decision["outcome"] == "rejected"


@pytest.mark.parametrize(
    ("unset", "extra", "said"),
    [
        ("GITHUB_SHA", [], "error: no head commit; give --head SHA or set GITHUB_SHA"),
        ("", ["--head", "0123456789abcdef"], "error: head '0123456789abcdef' is not a commit of"),
        ("GITHUB_BASE_REF", [], "error: no base commit; give --base SHA or set GITHUB_BASE_REF"),
        ("", ["--sign-key", "missing.key"], "error: key file missing.key cannot be read"),
        ("", ["--reviews", "missing.json"], "error: review file missing.json does not exist"),
        (
            "",
            ["--protection", "missing.json"],
            "error: branch protection file missing.json cannot be read",
        ),
    ],
)
def test_bad_gate_input_is_one_line_and_writes_nothing(
    tmp_path: Path,
    actions: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    unset: str,
    extra: list[str],
    said: str,
) -> None:
    repo, merge, _ = _pull_request(tmp_path, CALC + MUL)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    monkeypatch.setenv("GITHUB_SHA", merge)
    monkeypatch.chdir(tmp_path)
    if unset:
        monkeypatch.delenv(unset)
    out = tmp_path / "verdict"
    args = ["gate", "--contract", str(tmp_path / "contract.toml"), "--out", str(out), *extra]
    assert main(args) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith(said) and err.count("\n") == 1
    assert not out.exists() and not Path(actions["GITHUB_STEP_SUMMARY"]).exists()


LIFECYCLE = CONTRACT.replace(
    'id = "calc-pr"', 'id = "calc-pr-lifecycle"\nprofile = "lifecycle"'
) + ('\n[oracles]\nrelease_policy = "none"\n\n[authority]\nauthor = "agent-bot"\n')
TEST_MUL_ZERO = TEST_MUL + "\n\ndef test_mul_by_zero():\n    assert mul(0, 5) == 1\n"


def _github_json(tmp_path: Path, base: str, commits: list[str], approved_on: str) -> list[str]:
    """GitHub's pulls/N, reviews, commits and GraphQL threads for the pull request; the CLI args."""
    files = {
        "pull": {
            "number": 7,
            "state": "open",
            "created_at": "2026-11-01T10:00:00Z",
            "user": {"login": "agent-bot"},
            "head": {"ref": "feature", "sha": commits[-1]},
            "base": {"ref": "main", "sha": base},
        },
        "reviews": [
            {
                "id": 1,
                "user": {"login": "alice"},
                "state": "APPROVED",
                "commit_id": approved_on,
                "submitted_at": "2026-11-01T11:00:00Z",
                "body": "",
            }
        ],
        "commits": [
            {"sha": sha, "commit": {"committer": {"date": "2026-11-01T09:00:00Z"}}}
            for sha in commits
        ],
        "threads": {
            "data": {
                "repository": {
                    "pullRequest": {
                        "reviewThreads": {
                            "nodes": [
                                {
                                    "isResolved": True,
                                    "isOutdated": False,
                                    "path": "calc/__init__.py",
                                    "line": 5,
                                    "comments": {"nodes": [{"body": f"concern {n}"}]},
                                }
                                for n in (1, 2)
                            ]
                        }
                    }
                }
            }
        },
    }
    args = []
    for name, data in files.items():
        path = tmp_path / f"gh-{name}.json"
        path.write_text(json.dumps(data))
        args += [f"--{name}", str(path)]
    return args


def test_github_reviews_feed_the_lifecycle_gate_concern_tests_and_stale_approvals(
    tmp_path: Path, actions: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole chain: GitHub JSON -> `reviews import` -> `gate --reviews` (lifecycle profile).

    The pull request's head is its own tip (``--head``), so reviews of its commits and the
    candidate share one base (the merge base) and so one patch digest for the same tree.
    """
    repo, _, _ = _pull_request(tmp_path, CALC + MUL)
    git(repo, "checkout", "-q", "feature")
    first = git(repo, "rev-parse", "HEAD").decode().strip()
    head = commit(repo, {"tests/test_mul.py": TEST_MUL_ZERO}, "a test a reviewer asked for")
    git(repo, "checkout", "-q", "main")
    base = git(repo, "rev-parse", "main").decode().strip()
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    monkeypatch.setenv("GITHUB_SHA", head)
    (tmp_path / "lifecycle.toml").write_text(LIFECYCLE)

    def gate(approved_on: str, concern_tests: tuple[str, str], out: str) -> dict[str, Any]:
        github = _github_json(tmp_path, base, [first, head], approved_on)
        evidence = tmp_path / f"{out}-reviews.json"
        imported = ["reviews", "import", *github, "--repo", str(repo), "--out", str(evidence)]
        assert main(imported) == ExitCode.OK
        data = json.loads(evidence.read_text())
        for thread, test_id in zip(data["threads"], concern_tests, strict=True):
            thread["test"] = test_id
        evidence.write_text(json.dumps(data))
        args = ["gate", "--contract", str(tmp_path / "lifecycle.toml"), "--head", head]
        args += [
            "--fail-to-pass",
            NEW_TEST,
            "--reviews",
            str(evidence),
            "--out",
            str(tmp_path / out),
        ]
        assert main(args) == ExitCode.NOT_ACCEPTED  # a live pull request has no follow-ups yet
        found = json.loads(next((tmp_path / out).glob("attempts/*/decision.json")).read_text())
        return {c["name"]: c for c in found["checks"]}

    checks = gate(head, (NEW_TEST, "tests/test_mul.py::test_mul_by_zero"), "v1")
    assert checks["code_owner_approved"]["status"] == "passed"
    assert checks["review_threads_resolved"]["status"] == "failed"
    assert checks["review_threads_resolved"]["detail"] == (
        "unresolved: concern 2 (its test tests/test_mul.py::test_mul_by_zero failed on the candidate)"
    )
    assert checks["release_receipt_present"]["status"] == "passed"  # the project keeps none
    assert "the window is empty" in checks["post_merge_sentinel_passed"]["detail"]

    checks = gate(first, (NEW_TEST, NEW_TEST), "v2")
    assert checks["review_threads_resolved"]["status"] == "passed"
    assert checks["code_owner_approved"]["status"] == "failed"
    assert (
        "0 of 1 required approvals on the current patch" in checks["code_owner_approved"]["detail"]
    )


def _contract_naming(tmp_path: Path, base_commit: str) -> Path:
    """The gate's contract with ``base_commit`` set to ``base_commit`` instead of the zeros."""
    path = tmp_path / "named-base.toml"
    path.write_text(CONTRACT.replace('base_commit = "0000000"', f'base_commit = "{base_commit}"'))
    return path


@pytest.mark.parametrize(
    ("named", "extra", "said"),
    [
        # the contract pins the pull request's branch point; GITHUB_BASE_REF derives main's tip
        ("first", [], "base (merge base of GITHUB_BASE_REF=main and the head) is "),
        # the contract pins main's tip; --base names the branch point
        ("tip", ["--base", "first"], "base (--base) is "),
        # a short id of the branch point against --base main
        ("first7", ["--base", "main"], "base (--base) is "),
    ],
)
def test_a_contract_base_other_than_the_gates_is_refused_in_one_line(
    tmp_path: Path,
    actions: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    named: str,
    extra: list[str],
    said: str,
) -> None:
    repo, merge, tip = _pull_request(tmp_path, CALC + MUL)
    first = git(repo, "rev-parse", "main~1").decode().strip()
    commits = {"first": first, "tip": tip, "first7": first[:7]}
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    monkeypatch.setenv("GITHUB_SHA", merge)
    contract = _contract_naming(tmp_path, commits[named])
    out = tmp_path / "verdict"
    args = ["gate", "--contract", str(contract), "--out", str(out)]
    args += [commits.get(x, x) for x in extra]
    assert main(args) == ExitCode.USAGE
    err = capsys.readouterr().err
    pinned, gates = (tip, first) if named == "tip" else (first, tip)
    assert err == (
        f"error: the contract named-base.toml names base_commit {pinned[:12]}, but the gate's "
        f'{said}{gates[:12]}; give --base {pinned[:12]}, or set base_commit = "0000000" in '
        "the contract to let the gate supply the base\n"
    )
    assert not out.exists() and not Path(actions["GITHUB_STEP_SUMMARY"]).exists()


def test_a_contract_base_that_is_no_commit_is_refused(
    tmp_path: Path,
    actions: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo, merge, _ = _pull_request(tmp_path, CALC + MUL)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    monkeypatch.setenv("GITHUB_SHA", merge)
    contract = _contract_naming(tmp_path, "1234567")
    assert main(["gate", "--contract", str(contract), "--out", str(tmp_path / "v")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the base_commit of named-base.toml '1234567' is not a commit of")
    assert err.endswith(
        '; fetch it, or set base_commit = "0000000" to let the gate supply the base\n'
    )


def test_the_gate_compares_against_the_contracts_base_when_it_names_one(
    tmp_path: Path, actions: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Agreeing bases are used; with no --base and no GITHUB_BASE_REF, the contract's is."""
    from repogate.ci import resolve_request

    repo, merge, tip = _pull_request(tmp_path, CALC + MUL)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo))
    monkeypatch.setenv("GITHUB_SHA", merge)
    first = git(repo, "rev-parse", "main~1").decode().strip()
    for named, base, ref, said in (
        (tip, None, "main", "merge base of GITHUB_BASE_REF=main and the head"),
        (first[:9], first, None, "--base"),
        (first, None, None, "base_commit of named-base.toml"),
    ):
        if ref is None:
            monkeypatch.delenv("GITHUB_BASE_REF", raising=False)
        request = resolve_request(
            _contract_naming(tmp_path, named), base=base, head=None, repo=None, reviews=None
        )
        expected = tip if named == tip else first
        assert (request.base, request.contract.base_commit) == (expected, expected)
        assert request.said_by == ("GITHUB_SHA", said)
