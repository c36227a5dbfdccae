from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _lifecycle_git import commit, new_repo
from repogate import git
from repogate.errors import EvidenceError
from repogate.gates.authority import (
    ReviewEvidence,
    check_authority,
    load_reviews,
    reviews_schema,
)
from repogate.gates.codeowners import owners_of, validate_codeowners
from repogate.git import ChangedPath
from repogate.receipt import Check

CURRENT = "c" * 64
EARLIER = "e" * 64
CODEOWNERS = "* @acme/maintainers\npayments/retry.py @acme/payments-owners\nspec/ @carol\n"


def _changed(*paths: str) -> tuple[ChangedPath, ...]:
    return tuple(ChangedPath("M", p, None, False) for p in paths)


def _review(
    reviewer: str, state: str = "approved", digest: str = CURRENT, **kw: Any
) -> dict[str, Any]:
    minute = kw.pop("minute", 0)
    return {
        "reviewer": reviewer,
        "state": state,
        "patch_digest": digest,
        "at": f"2025-01-01T10:{minute:02d}:00Z",
        **kw,
    }


def _evidence(*reviews: dict[str, Any], **kw: Any) -> ReviewEvidence:
    return ReviewEvidence.model_validate({"reviews": list(reviews), **kw})


def _check(
    evidence: ReviewEvidence | None, *paths: str, text: str | None = CODEOWNERS, n: int = 1
) -> tuple[Check, Check, dict[str, Any]]:
    seen = check_authority(text, _changed(*paths), evidence, CURRENT, "agent", n)
    return seen.checks[0], seen.checks[1], seen.details


OWNER: dict[str, Any] = {"teams": ["acme/payments-owners", "acme/maintainers"]}


def test_validator_reports_syntax_github_rejects_with_line_numbers() -> None:
    text = (
        "# comment\n"
        "* @acme/maintainers\n"
        "!docs/ @alice\n"
        "src/*.[ch] @bob\n"
        "\\#notes.md @carol\n"
        "lib/ alice\n"
        "[Documentation]\n"
        "docs/ @docs-team # trailing comment is fine\n"
        "path\\ with\\ space/ dev@example.com\n"
        "unowned/\n"
    )
    problems = validate_codeowners(text)
    assert [p.line for p in problems] == [3, 4, 5, 6, 7]
    assert "'!'" in problems[0].message
    assert "character ranges" in problems[1].message
    assert "escaping '#'" in problems[2].message
    assert "owner 'alice' is not @user" in problems[3].message
    assert str(problems[0]).startswith("line 3: ")


def test_last_matching_rule_wins_and_empty_rule_unowns() -> None:
    text = CODEOWNERS + "payments/vendored/\n"
    owners = owners_of(
        text, ["payments/retry.py", "spec/retry.json", "README.md", "payments/vendored/x.py"]
    )
    assert owners == {
        "payments/retry.py": ("@acme/payments-owners",),
        "spec/retry.json": ("@carol",),
        "README.md": ("@acme/maintainers",),
        "payments/vendored/x.py": (),
    }


def test_invalid_codeowners_line_makes_the_check_error_naming_the_line() -> None:
    text = CODEOWNERS + "!payments/ @mallory\n"
    approval, _, details = _check(
        _evidence(_review("bob", **OWNER)), "payments/retry.py", text=text
    )
    assert approval.status == "error"
    assert "line 4: negation pattern" in approval.detail
    assert details["codeowners_problems"][0]["line"] == 4
    # owners are still computed as GitHub would, with the line skipped
    assert details["owners"] == {"payments/retry.py": ["@acme/payments-owners"]}


def test_owner_team_approval_on_current_digest_passes() -> None:
    approval, threads, details = _check(_evidence(_review("bob", **OWNER)), "payments/retry.py")
    assert approval.status == "passed", approval.detail
    assert details["approvals"] == ["bob"]
    assert threads.status == "passed"


def test_user_owner_matched_case_insensitively_with_or_without_at() -> None:
    approval, _, _ = _check(_evidence(_review("@Carol")), "spec/retry.json")
    assert approval.status == "passed"


def test_approval_by_non_owner_does_not_satisfy_owned_path() -> None:
    approval, _, _ = _check(
        _evidence(_review("dave", teams=["acme/maintainers"])), "payments/retry.py"
    )
    assert approval.status == "failed"
    assert "payments/retry.py need an approval from @acme/payments-owners" in approval.detail


def test_stale_approval_on_earlier_digest_does_not_count() -> None:
    """An approval binds to the patch it saw: a changed patch needs a new approval (GitHub's
    "dismiss stale pull request approvals")."""
    approval, _, details = _check(
        _evidence(_review("bob", digest=EARLIER, **OWNER)), "payments/retry.py"
    )
    assert approval.status == "failed"
    assert "stale approval by bob on an earlier patch" in approval.detail
    assert details["stale_approvals"] == [{"reviewer": "bob", "patch_digest": EARLIER}]


def test_unknown_digest_counts_as_no_approval() -> None:
    approval, _, _ = _check(_evidence(_review("carol", digest="0" * 64)), "spec/retry.json")
    assert approval.status == "failed"


def test_author_approval_never_counts() -> None:
    """An agent must not approve its own patch, even as a member of the owning team."""
    approval, _, details = _check(_evidence(_review("agent", **OWNER)), "payments/retry.py")
    assert approval.status == "failed"
    assert "approval by the author agent does not count" in approval.detail
    assert details["approvals"] == []


def test_changes_requested_blocks_until_same_reviewer_approves() -> None:
    ok = _review("bob", minute=1, **OWNER)
    block = _review("carol", "changes_requested", minute=2)
    approval, _, _ = _check(_evidence(ok, block), "payments/retry.py")
    assert approval.status == "failed"
    assert "changes requested by carol and not withdrawn" in approval.detail
    later = _review("carol", minute=3)
    comment = _review("carol", "commented", minute=4)
    assert _check(_evidence(ok, block, later, comment), "payments/retry.py")[0].status == "passed"


def test_change_request_survives_a_new_patch_until_withdrawn() -> None:
    """As on GitHub, a push dismisses approvals but not a change request."""
    ok = _review("bob", minute=1, **OWNER)
    block = _review("carol", "changes_requested", EARLIER, minute=0)
    approval, _, _ = _check(_evidence(ok, block), "payments/retry.py")
    assert approval.status == "failed"
    assert "changes requested by carol on an earlier patch" in approval.detail


def test_min_approvals_counted_overall() -> None:
    approval, _, _ = _check(_evidence(_review("bob", **OWNER)), "README.md", n=2)
    assert approval.status == "failed"
    assert "1 of 2 required approvals" in approval.detail
    assert _check(None, "docs/x.md", text=None, n=0)[0].status == "passed"


def test_author_merge_fails() -> None:
    """The agent never holds merge authority: evidence that it merged fails the check."""
    evidence = _evidence(_review("bob", **OWNER), merged_by="agent")
    approval, _, details = _check(evidence, "payments/retry.py")
    assert approval.status == "failed"
    assert "merged by the author agent" in approval.detail
    assert details["merged_by"] == "agent"


def test_unresolved_threads_fail_and_soft_metrics_are_reported() -> None:
    evidence = _evidence(
        _review("carol", "changes_requested", EARLIER, minute=1, minutes=12),
        _review("carol", minute=5, minutes=4.5),
        threads=[
            {
                "concern": "zero meant library default",
                "resolved": True,
                "resolution": "compat test",
            },
            {"concern": "docs", "resolved": False},
        ],
    )
    approval, threads, details = _check(evidence, "spec/retry.json")
    assert approval.status == "passed"
    assert threads.status == "failed"
    assert threads.detail == "unresolved: docs"
    assert details["review_rounds"] == 2
    assert details["concerns_raised"] == 2
    assert details["review_minutes"] == 16.5
    assert details["changes_after_review"] == 1


def test_no_review_evidence_means_no_approval() -> None:
    approval, threads, details = _check(None, "payments/retry.py")
    assert approval.status == "failed"
    assert threads.status == "passed"
    assert details["review_rounds"] == 0


def test_codeowners_edited_by_the_patch_grants_nothing(tmp_path: Path) -> None:
    """A patch must not grant itself owners: CODEOWNERS is read at the base commit, so rewriting
    it in the patch to make the agent an owner changes nothing."""
    repo, base = new_repo(
        tmp_path / "r", {".github/CODEOWNERS": CODEOWNERS, "payments/retry.py": "T = 5\n"}
    )
    head = commit(
        repo, {".github/CODEOWNERS": "* @agent @mallory\n", "payments/retry.py": "T = 6\n"}
    )
    base_text = git.show_file(repo, base, ".github/CODEOWNERS")
    assert base_text is not None
    changed = git.changed_paths(repo, base, head)
    evidence = _evidence(_review("mallory"), _review("agent"))
    seen = check_authority(base_text.decode(), changed, evidence, CURRENT, "agent", 1)
    assert seen.checks[0].status == "failed"
    assert seen.details["owners"] == {
        ".github/CODEOWNERS": ["@acme/maintainers"],
        "payments/retry.py": ["@acme/payments-owners"],
    }


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "reviews.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "is not JSON"),
        ({"reviews": [_review("bob", "lgtm")]}, "key 'reviews.0.state'"),
        ({"reviews": [_review("bob", digest="abc")]}, "key 'reviews.0.patch_digest'"),
        ({"reviews": [{**_review("bob"), "at": "2025-01-01T10:00:00"}]}, "key 'reviews.0.at'"),
        ({"schema_version": 2}, "key 'schema_version'"),
        ({"reviews": [], "approvers": []}, "key 'approvers'"),
        ({"reviews": [_review("bob", digest="{{candidate}}")]}, "key 'reviews.0.patch_digest'"),
    ],
)
def test_malformed_review_file_is_one_clear_error(tmp_path: Path, data: Any, message: str) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(EvidenceError) as info:
        load_reviews(path)
    text = str(info.value)
    assert str(path) in text
    assert message in text
    assert "\n" not in text


def test_missing_review_file_is_an_evidence_error(tmp_path: Path) -> None:
    with pytest.raises(EvidenceError, match="cannot be read"):
        load_reviews(tmp_path / "absent.json")


def test_candidate_placeholder_is_replaced_for_scenarios(tmp_path: Path) -> None:
    path = _write(tmp_path, {"reviews": [_review("bob", digest="{{candidate}}")]})
    assert load_reviews(path, CURRENT).reviews[0].patch_digest == CURRENT


def test_reviews_schema_names_the_fields() -> None:
    schema = reviews_schema()
    assert set(schema["properties"]) == {
        "schema_version",
        "reviews",
        "threads",
        "merged_by",
        "metrics",
        "notes",
    }
    assert "patch_digest" in schema["$defs"]["Review"]["properties"]
