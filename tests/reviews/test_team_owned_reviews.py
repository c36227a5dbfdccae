"""Team-owned paths, as on a real repository: owners are teams, and only some approvals count.

The fixture has the shape of modelcontextprotocol/python-sdk PR #1380 (docs/reviews.md, "A real
pull request"): CODEOWNERS at the base gives everything to ``@acme/sdk`` and, by later rules that
win, the auth code and its tests to ``@acme/sdk-auth``; the pull request's author pushes a fix,
then a commit adding its test. Reviews arrive as GitHub's JSON, team membership as
``orgs/O/teams/T/members`` JSON (``reviews import --team``), and gate A reads CODEOWNERS at the
base. Accepted only when a member of the owning team approved the head; rejected for an approval
of the earlier commit (stale, GitHub's "dismiss stale pull request approvals"), for an approval
by a member of the overridden default team only, and for an approval followed by a change request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _lifecycle_git import commit, git
from repogate import git as rgit
from repogate.cli import ExitCode, main
from repogate.gates.authority import AuthorityObservation, check_authority, load_reviews
from repogate.state import patch_digest

CODEOWNERS = """\
# Default maintainers for everything
* @acme/sdk

# Auth-related code requires additional review from auth team
/src/sdk/server/auth/ @acme/sdk-auth
/src/sdk/shared/auth*.py @acme/sdk-auth
/tests/server/auth/ @acme/sdk-auth
"""
AUTHOR = "contributor"


def _pull_request(tmp_path: Path) -> tuple[Path, str, str, str]:
    """A base with CODEOWNERS, and a pull request: the fix, then the commit adding its test."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = commit(
        repo,
        {
            ".github/CODEOWNERS": CODEOWNERS,
            "src/sdk/server/auth/register.py": "GRANTS = ['code', 'refresh']\n",
            "src/sdk/shared/auth.py": "GrantType = str\n",
            "tests/server/auth/test_register.py": "def test_code():\n    pass\n",
        },
        "base",
    )
    git(repo, "checkout", "-q", "-b", "fix")
    fix = commit(
        repo,
        {
            "src/sdk/server/auth/register.py": "GRANTS = ['code', 'refresh', 'device']\n",
            "src/sdk/shared/auth.py": "GrantType = str | None\n",
        },
        "allow extra grant types",
    )
    head = commit(
        repo,
        {
            "tests/server/auth/test_register.py": "def test_code():\n    pass\n\n\ndef test_extra():\n    pass\n"
        },
        "add a test for an extra grant type",
    )
    git(repo, "checkout", "-q", "main")
    return repo, base, fix, head


def _github(
    folder: Path, base: str, commits: list[str], reviews: list[tuple[str, str, str, str]]
) -> list[str]:
    """Write GitHub's JSON for the pull request and two teams; return `reviews import`'s args."""
    folder.mkdir()
    files: dict[str, Any] = {
        "pull": {
            "number": 1380,
            "user": {"login": AUTHOR},
            "state": "closed",
            "created_at": "2025-09-19T17:01:07Z",
            "merged": True,
            "merged_at": "2025-09-29T10:13:16Z",
            "merged_by": None,
            "head": {"ref": "fix", "sha": commits[-1]},
            "base": {"ref": "main", "sha": base},
        },
        "reviews": [
            {"id": n, "user": {"login": who}, "state": state, "commit_id": sha, "submitted_at": at}
            for n, (who, state, sha, at) in enumerate(reviews, start=1)
        ],
        "commits": [
            {"sha": sha, "commit": {"committer": {"date": f"2025-09-26T19:4{1 + 2 * n}:00Z"}}}
            for n, sha in enumerate(commits)
        ],
    }
    args = []
    for name, data in files.items():
        (folder / f"{name}.json").write_text(json.dumps(data))
        args += [f"--{name}", str(folder / f"{name}.json")]
    members = {"sdk-auth": ["auth-owner"], "sdk": ["auth-owner", "sdk-maintainer"]}
    for team, logins in members.items():
        path = folder / f"{team}-members.json"
        path.write_text(json.dumps([{"login": login, "type": "User"} for login in logins]))
        args += ["--team", f"acme/{team}={path}"]
    return args


@pytest.fixture
def judged(tmp_path: Path) -> Any:
    repo, base, fix, head = _pull_request(tmp_path)
    codeowners = rgit.show_file(repo, base, ".github/CODEOWNERS")
    changed = list(rgit.changed_paths(repo, base, head))
    digest = patch_digest(rgit.diff_binary(repo, base, head))

    def judge(name: str, *reviews: tuple[str, str, str, str]) -> AuthorityObservation:
        folder = tmp_path / name
        args = _github(folder, base, [fix, head], list(reviews))
        out = folder / "evidence.json"
        assert main(["reviews", "import", *args, "--repo", str(repo), "--out", str(out)]) == 0
        text = codeowners.decode() if codeowners is not None else None
        return check_authority(text, changed, load_reviews(out), digest, AUTHOR, 1)

    return judge, fix, head


def test_the_owning_teams_approval_of_the_head_is_accepted(judged: Any) -> None:
    judge, _, head = judged
    seen = judge("head", ("auth-owner", "APPROVED", head, "2025-09-29T09:00:00Z"))
    approval = seen.checks[0]
    assert (approval.status, approval.detail) == (
        "passed",
        "approved by auth-owner on the current patch",
    )
    assert seen.details["owners"] == {
        "src/sdk/server/auth/register.py": ["@acme/sdk-auth"],
        "src/sdk/shared/auth.py": ["@acme/sdk-auth"],
        "tests/server/auth/test_register.py": ["@acme/sdk-auth"],
    }


def test_the_owning_teams_approval_of_the_earlier_commit_is_stale(judged: Any) -> None:
    judge, fix, _ = judged
    seen = judge("stale", ("auth-owner", "APPROVED", fix, "2025-09-26T19:42:00Z"))
    approval = seen.checks[0]
    assert approval.status == "failed"
    assert approval.detail == (
        "src/sdk/server/auth/register.py, src/sdk/shared/auth.py, tests/server/auth/test_register.py"
        " need an approval from @acme/sdk-auth (stale approval by auth-owner on an earlier patch)"
        " on the current patch; 0 of 1 required approvals on the current patch"
    )
    assert [s["reviewer"] for s in seen.details["stale_approvals"]] == ["auth-owner"]
    assert seen.details["github"]["commits_after_first_review"] == 1


def test_a_member_of_the_overridden_default_team_only_is_not_an_owner(judged: Any) -> None:
    """``* @acme/sdk`` matches every path, but the later auth rules win: its members do not own."""
    judge, _, head = judged
    seen = judge("default", ("sdk-maintainer", "APPROVED", head, "2025-09-29T09:00:00Z"))
    approval = seen.checks[0]
    assert approval.status == "failed"
    assert approval.detail.endswith("need an approval from @acme/sdk-auth on the current patch")
    assert seen.details["approvals"] == ["sdk-maintainer"]  # it counts overall, not for the paths


def test_a_change_request_after_the_approval_blocks(judged: Any) -> None:
    judge, _, head = judged
    seen = judge(
        "withdrawn",
        ("auth-owner", "APPROVED", head, "2025-09-29T09:00:00Z"),
        ("auth-owner", "CHANGES_REQUESTED", head, "2025-09-29T09:30:00Z"),
    )
    approval = seen.checks[0]
    assert approval.status == "failed"
    assert "changes requested by auth-owner and not withdrawn by an approval" in approval.detail
    assert "need an approval from @acme/sdk-auth" in approval.detail


def test_without_team_members_a_teams_approval_cannot_be_seen(tmp_path: Path) -> None:
    """Review JSON names users only: without ``--team`` the reviewer belongs to no team."""
    repo, base, fix, head = _pull_request(tmp_path)
    args = _github(
        tmp_path / "gh",
        base,
        [fix, head],
        [("auth-owner", "APPROVED", head, "2025-09-29T09:00:00Z")],
    )
    out = tmp_path / "evidence.json"
    without = [
        a for i, a in enumerate(args) if a != "--team" and (i == 0 or args[i - 1] != "--team")
    ]
    assert main(["reviews", "import", *without, "--repo", str(repo), "--out", str(out)]) == 0
    assert load_reviews(out).reviews[0].teams == ()
    assert main(["reviews", "import", *args, "--repo", str(repo), "--out", str(out)]) == 0
    assert load_reviews(out).reviews[0].teams == ("acme/sdk", "acme/sdk-auth")


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("acme-sdk-auth={file}", "is not ORG/TEAM=FILE"),
        ("acme/sdk-auth", "is not ORG/TEAM=FILE"),
        ("acme/sdk-auth={missing}", "members file of acme/sdk-auth"),
        ("acme/sdk-auth={object}", "expected a JSON list"),
        ("acme/sdk-auth={nologin}", "is not in GitHub's shape"),
    ],
)
def test_a_bad_team_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, said: str
) -> None:
    repo, base, fix, head = _pull_request(tmp_path)
    args = _github(tmp_path / "gh", base, [fix, head], [])
    files = {"file": "[]", "object": '{"login": "a"}', "nologin": '[{"name": "a"}]'}
    for name, text in files.items():
        (tmp_path / f"{name}.json").write_text(text)
    paths = {name: tmp_path / f"{name}.json" for name in [*files, "missing"]}
    out = tmp_path / "evidence.json"
    argv = ["reviews", "import", *args, "--team", spec.format(**paths), "--repo", str(repo)]
    assert main([*argv, "--out", str(out)]) == ExitCode.USAGE
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and said in err and len(err.splitlines()) == 1
    assert not out.exists()
