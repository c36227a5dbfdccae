"""Predictions apply as SWE-bench's harness applies them: git apply, git apply --reject, patch --fuzz."""

from __future__ import annotations

from pathlib import Path

import pytest

from _lifecycle_git import git, new_repo
from repogate.agents.gold import apply_as_proposal

LINES = "".join(f"line {n}\n" for n in range(1, 21))


def _repo(tmp_path: Path) -> Path:
    repo, _base = new_repo(tmp_path / "ws", {"m.txt": LINES, "other.txt": "keep\n"})
    return repo


# The prediction was made against a file whose context lines 9, 10 and 12, 13 read differently:
# git refuses it (its context does not match), GNU patch applies it with fuzz 2.
STALE_CONTEXT = (
    "diff --git a/m.txt b/m.txt\n--- a/m.txt\n+++ b/m.txt\n@@ -9,5 +9,5 @@\n"
    " line nine\n line ten\n-line 11\n+line eleven\n line twelve\n line thirteen\n"
)
EXACT = (
    "diff --git a/m.txt b/m.txt\n--- a/m.txt\n+++ b/m.txt\n@@ -9,5 +9,5 @@\n"
    " line 9\n line 10\n-line 11\n+line eleven\n line 12\n line 13\n"
)


def test_a_patch_lacking_its_final_newline_applies(tmp_path: Path) -> None:
    """Model output often ends without a newline; git calls that a corrupt patch."""
    repo = _repo(tmp_path)
    proposal = apply_as_proposal(repo, EXACT.rstrip("\n").encode(), "m")
    assert proposal.status == "done", proposal.detail
    assert proposal.applied is not None
    assert (proposal.applied.step, proposal.applied.newline_added) == ("git apply --verbose", True)
    assert "line eleven\n" in (repo / "m.txt").read_text()


def test_a_patch_needing_fuzz_applies_with_gnu_patch_and_records_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    proposal = apply_as_proposal(repo, STALE_CONTEXT.encode(), "m")
    assert proposal.status == "done", proposal.detail
    applied = proposal.applied
    assert applied is not None
    assert applied.step == "patch --batch --fuzz=5"
    assert applied.fuzz == 2
    assert applied.hunks == ("m.txt #1 at 9: fuzz 2",)
    assert "fuzz 2" in proposal.detail
    assert (repo / "m.txt").read_text() == LINES.replace("line 11\n", "line eleven\n")
    # nothing else is left in the workspace: no .orig backup, no .rej file
    assert git(repo, "status", "--porcelain").decode() == " M m.txt\n"


def test_a_patch_no_step_applies_leaves_the_workspace_untouched(tmp_path: Path) -> None:
    """git apply --reject applies the hunks that fit; a failed step must leave none of them."""
    repo = _repo(tmp_path)
    two_files = EXACT + (
        "diff --git a/other.txt b/other.txt\n--- a/other.txt\n+++ b/other.txt\n"
        "@@ -1 +1 @@\n-not there\n+x\n"
    )
    proposal = apply_as_proposal(repo, two_files.encode(), "m")
    assert proposal.status == "crashed"
    for step in (
        "git apply --verbose:",
        "git apply --verbose --reject:",
        "patch --batch --fuzz=5:",
    ):
        assert step in proposal.detail
    assert git(repo, "status", "--porcelain", "--untracked-files=all").decode() == ""


@pytest.mark.parametrize("name", ["../escape.txt", ".git/hooks/post-commit"])
def test_gnu_patch_is_never_given_a_forbidden_path(tmp_path: Path, name: str) -> None:
    repo = _repo(tmp_path)
    patch = f"--- a/{name}\n+++ b/{name}\n@@ -0,0 +1 @@\n+x\n"
    proposal = apply_as_proposal(repo, patch.encode(), "m")
    assert proposal.status == "crashed"
    assert not (tmp_path / "escape.txt").exists()
    assert not (repo / ".git" / "hooks" / "post-commit").exists()


def _link_patch(name: str, target: str) -> str:
    """A git-style patch making ``name`` a link to ``target``, after a hunk only fuzz applies."""
    return STALE_CONTEXT + (
        f"diff --git a/{name} b/{name}\nnew file mode 120000\n--- /dev/null\n+++ b/{name}\n"
        f"@@ -0,0 +1 @@\n+{target}\n\\ No newline at end of file\n"
    )


@pytest.mark.parametrize("shape", ["absolute link", "relative link", "link in the base"])
def test_gnu_patchs_result_is_copied_back_without_following_a_link(
    tmp_path: Path, shape: str
) -> None:
    """Threat (red team): GNU patch (the ladder's last step) makes the links a patch asks for.

    Copying its result back followed them: a prediction making ``leak.txt`` a link to a file of
    the harness's machine (absolute, or relative climbing out of the scratch folder) put that
    file's bytes into the candidate, and a new file at a name the base holds as a link outside
    the repository was written through it. The link stays a link (gate I refuses it), no bytes
    of the outside file reach the workspace, and nothing outside is written.
    """
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("canary-secret-4711\n")
    repo = _repo(tmp_path)
    if shape == "link in the base":
        (repo / "leak.txt").symlink_to(secret)
        git(repo, "add", "leak.txt")
        git(repo, "commit", "-q", "-m", "a link")
        patch = STALE_CONTEXT + (
            "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n"
            "@@ -0,0 +1 @@\n+planted\n"
        ).replace("new.txt", "leak.txt")
    else:
        depth = "../" * 12
        target = str(secret) if shape == "absolute link" else depth + str(secret).lstrip("/")
        patch = _link_patch("leak.txt", target)
    proposal = apply_as_proposal(repo, patch.encode(), "m")
    assert secret.read_text() == "canary-secret-4711\n"  # never written through
    leak = repo / "leak.txt"
    if proposal.status == "done":
        assert proposal.applied is not None and proposal.applied.step == "patch --batch --fuzz=5"
        assert leak.is_symlink() or "canary" not in leak.read_text()
    for path in repo.rglob("*"):
        if path.is_file() and not path.is_symlink() and ".git" not in path.parts:
            assert "canary" not in path.read_text(errors="replace"), path
