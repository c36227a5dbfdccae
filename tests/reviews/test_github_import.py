"""``repogate reviews import``: GitHub's review JSON bound to patch digests, then read by gate A.

The fixtures are hand-built in the shapes GitHub documents (REST ``pulls/N``, ``pulls/N/reviews``,
``pulls/N/comments``, ``pulls/N/commits``; GraphQL ``reviewThreads``), with the many fields
repogate does not read left in, over a real local repository whose pull request has two commits:
``first`` (reviewed) and ``fixup`` (pushed after review).

Threats closed: an approval of an earlier commit must not approve the patch that landed (GitHub's
"dismiss stale pull request approvals"); a review whose commit is gone binds to nothing; a review
on a commit outside the pull request belongs to another change.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _lifecycle_git import commit, git
from repogate import git as rgit
from repogate.cli import ExitCode, main
from repogate.errors import EvidenceError
from repogate.gates.authority import check_authority, load_reviews
from repogate.gates.protection import load_protection
from repogate.state import patch_digest

USER = {"login": "", "id": 1, "type": "User", "site_admin": False, "html_url": ""}


def _user(login: str) -> dict[str, Any]:
    return {**USER, "login": login, "html_url": f"https://github.com/{login}"}


def _repo(tmp_path: Path) -> tuple[Path, str, str, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = commit(repo, {"app.py": "x = 1\n"}, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    first = commit(repo, {"app.py": "x = 2\n"}, "first")
    fixup = commit(repo, {"app.py": "x = 3\n"}, "fixup after review")
    git(repo, "checkout", "-q", "main")
    return repo, base, first, fixup


def _review(
    rid: int, login: str, state: str, commit_id: str | None, at: str, body: str = ""
) -> dict[str, Any]:
    return {
        "id": rid,
        "node_id": f"PRR_{rid}",
        "user": _user(login),
        "body": body,
        "state": state,
        "html_url": f"https://github.com/o/r/pull/7#pullrequestreview-{rid}",
        "pull_request_url": "https://api.github.com/repos/o/r/pulls/7",
        "author_association": "MEMBER",
        "_links": {"html": {"href": ""}, "pull_request": {"href": ""}},
        "submitted_at": at,
        "commit_id": commit_id,
    }


def _export(tmp_path: Path, base: str, first: str, fixup: str, **change: Any) -> dict[str, Path]:
    pull = {
        "url": "https://api.github.com/repos/o/r/pulls/7",
        "id": 70,
        "number": 7,
        "state": "closed",
        "title": "Set x",
        "user": _user("agent-bot"),
        "created_at": "2026-11-01T10:00:00Z",
        "merged": True,
        "merged_at": "2026-11-02T12:00:00Z",
        "merged_by": _user("maintainer"),
        "head": {"label": "o:feature", "ref": "feature", "sha": fixup, "user": _user("o")},
        "base": {"label": "o:main", "ref": "main", "sha": base, "user": _user("o")},
        "draft": False,
    }
    reviews = [
        _review(1, "alice", "APPROVED", first, "2026-11-01T10:30:00Z", "LGTM"),
        _review(2, "bob", "CHANGES_REQUESTED", first, "2026-11-01T11:00:00Z", "x must be 3"),
        _review(3, "carol", "APPROVED", None, "2026-11-01T11:30:00Z"),
        _review(4, "dave", "DISMISSED", first, "2026-11-01T11:40:00Z"),
        _review(5, "bob", "APPROVED", fixup, "2026-11-02T09:00:00Z"),
        _review(6, "erin", "PENDING", fixup, "2026-11-02T09:30:00Z"),
    ]
    reviews[5]["submitted_at"] = None
    comments = [
        {
            "id": 100,
            "pull_request_review_id": 2,
            "in_reply_to_id": None,
            "user": _user("bob"),
            "body": "x must be 3, see the spec",
            "path": "app.py",
            "line": 1,
            "original_line": 1,
            "commit_id": first,
            "original_commit_id": first,
            "diff_hunk": "@@ -1 +1 @@",
            "created_at": "2026-11-01T11:00:00Z",
            "updated_at": "2026-11-01T11:00:00Z",
        },
        {
            "id": 101,
            "pull_request_review_id": 7,
            "in_reply_to_id": 100,
            "user": _user("agent-bot"),
            "body": "done",
            "path": "app.py",
            "line": 1,
            "commit_id": fixup,
            "created_at": "2026-11-01T12:00:00Z",
        },
    ]
    threads = {
        "data": {
            "repository": {
                "pullRequest": {
                    "reviewThreads": {
                        "nodes": [
                            {
                                "id": "PRRT_1",
                                "isResolved": True,
                                "isOutdated": True,
                                "path": "app.py",
                                "line": None,
                                "resolvedBy": {"login": "bob"},
                                "comments": {
                                    "nodes": [{"body": "x must be 3", "author": {"login": "bob"}}]
                                },
                            },
                            *change.get("more_threads", []),
                        ]
                    }
                }
            }
        }
    }
    commits = [
        {
            "sha": sha,
            "commit": {
                "author": {"name": "a", "email": "a@x", "date": date},
                "committer": {"name": "a", "email": "a@x", "date": date},
                "message": "m",
            },
            "author": _user("agent-bot"),
            "parents": [],
        }
        for sha, date in ((first, "2026-11-01T09:59:00Z"), (fixup, "2026-11-01T12:00:00Z"))
    ]
    data = {
        "pull": pull,
        "reviews": reviews,
        "comments": comments,
        "threads": threads,
        "commits": commits,
    }
    data.update({k: v for k, v in change.items() if k in data})
    files = {}
    for name, value in data.items():
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(value, indent=2))
    return files


def _import(files: dict[str, Path], repo: Path, out: Path, *only: str) -> int:
    args = ["reviews", "import", "--pull", str(files["pull"]), "--reviews", str(files["reviews"])]
    for name in only or ("comments", "threads", "commits"):
        args += [f"--{name}", str(files[name])]
    return main([*args, "--repo", str(repo), "--out", str(out)])


def test_reviews_bind_to_their_commits_patch_digest_and_stale_approvals_do_not_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, base, first, fixup = _repo(tmp_path)
    files = _export(tmp_path, base, first, fixup)
    out = tmp_path / "evidence.json"
    assert _import(files, repo, out) == ExitCode.OK
    said = capsys.readouterr().out
    assert "review 3 by carol has no commit_id" in said and "binds to no patch" in said
    evidence = load_reviews(out)
    digest = {c: patch_digest(rgit.diff_binary(repo, base, c)) for c in (first, fixup)}
    got = [(r.reviewer, r.state, r.patch_digest) for r in evidence.reviews]
    assert got == [
        ("alice", "approved", digest[first]),
        ("bob", "changes_requested", digest[first]),
        ("carol", "approved", None),
        ("dave", "commented", digest[first]),  # dismissed on GitHub: no longer a verdict
        ("bob", "approved", digest[fixup]),
    ]  # erin's pending review was never submitted
    assert evidence.merged_by == "maintainer"
    assert evidence.threads[0].resolved and evidence.threads[0].outdated
    assert (evidence.threads[0].path, evidence.threads[0].by) == ("app.py", "bob")
    metrics = evidence.metrics
    assert metrics is not None
    assert metrics.minutes_to_first_review == 30.0
    assert metrics.substantive_rounds == 2  # alice's LGTM body and bob's change request
    assert metrics.concerns_raised == 1
    assert metrics.commits_after_first_review == 1
    assert metrics.final_disposition == "merged"

    changed = list(rgit.changed_paths(repo, base, fixup))
    for owners, ok in (("* @bob\n", True), ("* @alice\n", False), ("* @carol\n", False)):
        seen = check_authority(owners, changed, evidence, digest[fixup], "agent-bot", 1)
        approval = seen.checks[0]
        assert approval.passed is ok, (owners, approval.detail)
    stale = check_authority("* @alice\n", changed, evidence, digest[fixup], "agent-bot", 1)
    assert "stale approval by alice on an earlier patch" in stale.checks[0].detail
    unbound = check_authority("* @carol\n", changed, evidence, digest[fixup], "agent-bot", 1)
    assert "(approval by carol binds to no known patch)" in unbound.checks[0].detail
    assert seen.details["github"]["final_disposition"] == "merged"
    # the same evidence judged against the first commit: bob's change request still blocks
    at_first = check_authority("* @alice\n", changed, evidence, digest[first], "agent-bot", 1)
    assert at_first.checks[0].passed  # bob approved later: his change request is withdrawn


def test_unresolved_threads_fail_and_comments_without_threads_are_only_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, base, first, fixup = _repo(tmp_path)
    open_thread = {
        "isResolved": False,
        "isOutdated": False,
        "path": "app.py",
        "line": 1,
        "resolvedBy": None,
        "comments": {"nodes": [{"body": "what about\nx = 4?", "author": {"login": "carol"}}]},
    }
    files = _export(tmp_path, base, first, fixup, more_threads=[open_thread])
    out = tmp_path / "evidence.json"
    assert _import(files, repo, out) == ExitCode.OK
    evidence = load_reviews(out)
    changed = list(rgit.changed_paths(repo, base, fixup))
    digest = patch_digest(rgit.diff_binary(repo, base, fixup))
    threads = check_authority(None, changed, evidence, digest, "agent-bot", 1).checks[1]
    assert threads.status == "failed" and threads.detail == "unresolved: what about x = 4?"
    assert _import(files, repo, tmp_path / "r2.json", "comments", "commits") == ExitCode.OK
    assert "2 review comments without --threads" in capsys.readouterr().out
    assert load_reviews(tmp_path / "r2.json").threads == ()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"reviews": {"not": "a list"}}, "reviews file {d}/reviews.json: expected a JSON list"),
        (
            {"reviews": [{"id": 1, "state": "LOOKS_GOOD", "user": {"login": "a"}}]},
            "reviews file {d}/reviews.json item 0 is not in GitHub's shape: key 'state'",
        ),
        ({"pull": {"number": 7}}, "pull request file {d}/pull.json is not in GitHub's shape"),
        (
            {"reviews": [_review(9, "mallory", "APPROVED", "f" * 40, "2026-11-01T10:00:00Z")]},
            f"review 9 by mallory is on commit {'f' * 40}, which is not in the pull request",
        ),
        ({"threads": {"data": {}}}, "review threads file {d}/threads.json holds no reviewThreads"),
    ],
)
def test_bad_review_json_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], said: str
) -> None:
    repo, base, first, fixup = _repo(tmp_path)
    files = _export(tmp_path, base, first, fixup, **change)
    out = tmp_path / "evidence.json"
    assert _import(files, repo, out) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: " + said.format(d=tmp_path)), err
    assert err.count("\n") == 1
    assert not out.exists()


PROTECTION = {
    "url": "https://api.github.com/repos/o/r/branches/main/protection",
    "required_status_checks": {
        "url": "",
        "strict": True,
        "contexts": ["ci/test"],
        "checks": [
            {"context": "ci/test", "app_id": 15368},
            {"context": "repogate gate", "app_id": None},
        ],
    },
    "required_pull_request_reviews": {
        "url": "",
        "dismiss_stale_reviews": False,
        "require_code_owner_reviews": True,
        "required_approving_review_count": 2,
        "require_last_push_approval": False,
    },
    "enforce_admins": {"url": "", "enabled": True},
    "required_linear_history": {"enabled": False},
    "required_conversation_resolution": {"enabled": True},
}


def test_branch_protection_raises_the_approvals_needed_and_cannot_revive_stale_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The branch keeps stale approvals (dismiss_stale_reviews false): GitHub would count alice's
    approval of the first commit; repogate binds approvals to the patch and says the branch is laxer."""
    repo, base, first, fixup = _repo(tmp_path)
    files = _export(tmp_path, base, first, fixup)
    assert _import(files, repo, tmp_path / "evidence.json") == ExitCode.OK
    evidence = load_reviews(tmp_path / "evidence.json")
    (tmp_path / "protection.json").write_text(json.dumps(PROTECTION))
    protection = load_protection(tmp_path / "protection.json")
    assert protection.status_checks == ("ci/test", "repogate gate")
    assert (protection.required_approvals, protection.code_owner_reviews) == (2, True)
    changed = list(rgit.changed_paths(repo, base, fixup))
    digest = patch_digest(rgit.diff_binary(repo, base, fixup))
    seen = check_authority("* @bob\n", changed, evidence, digest, "agent-bot", 1, protection)
    assert seen.checks[0].status == "failed"
    assert "1 of 2 required approvals on the current patch" in seen.checks[0].detail
    assert "stale approval by alice" not in seen.checks[0].detail  # bob owns; alice is extra
    assert seen.details["branch_protection"]["approvals_needed"] == 2
    assert seen.details["branch_protection"]["laxer_than_repogate"] == [
        "the branch keeps stale approvals; repogate binds approvals to the patch"
    ]
    without = check_authority("* @bob\n", changed, evidence, digest, "agent-bot", 1)
    assert without.checks[0].passed  # the contract alone needs one approval


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ("[]", "expected a JSON object"),
        (
            '{"required_pull_request_reviews": {"required_approving_review_count": "two"}}',
            "is not in GitHub's shape: key 'required_pull_request_reviews.required_approving_review_count'",
        ),
    ],
)
def test_bad_branch_protection_is_one_line(tmp_path: Path, data: str, said: str) -> None:
    path = tmp_path / "protection.json"
    path.write_text(data)
    with pytest.raises(EvidenceError) as caught:
        load_protection(path)
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_no_review_rule_means_none_required(tmp_path: Path) -> None:
    path = tmp_path / "protection.json"
    path.write_text('{"required_status_checks": null, "enforce_admins": {"enabled": false}}')
    assert load_protection(path).required_approvals == 0
