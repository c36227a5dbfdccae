"""The harness's merge and the sentinel's replay, on real repositories built with the git CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from _lifecycle_git import commit, new_repo
from _lifecycle_git import git as run
from repogate import git
from repogate.errors import GitError


def _history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo, base = new_repo(tmp_path / "r", {"a.py": "one\ntwo\nthree\n", "b.txt": "b\n"})
    fix = commit(repo, {"a.py": "one\nTWO\nthree\n"}, "fix")
    follow = commit(repo, {"a.py": "one\nTWO\nthree\nfour\n"}, "follow")
    clash = commit(repo, {"a.py": "one\n2\nthree\nfour\n"}, "clash")
    return repo, {"base": base, "fix": fix, "follow": follow, "clash": clash}


def test_merge_candidate_onto_its_own_parent_is_the_candidate_tree(tmp_path: Path) -> None:
    repo, c = _history(tmp_path)
    result = git.merge_candidate(repo, c["base"], c["fix"])
    assert result.clean
    assert result.tree == git.tree_of(repo, c["fix"])


def test_merge_candidate_reports_conflicted_paths(tmp_path: Path) -> None:
    repo, c = _history(tmp_path)
    run(repo, "checkout", "-q", "-b", "other", c["base"])
    other = commit(repo, {"a.py": "one\nzwei\nthree\n"}, "other")
    result = git.merge_candidate(repo, c["fix"], other)
    assert result.conflicted == ("a.py",)
    assert any(m.kind == "CONFLICT (contents)" for m in result.messages)
    assert b"<<<<<<<" in (git.show_file(repo, result.tree, "a.py") or b"")


def test_replay_applies_only_the_commits_own_change(tmp_path: Path) -> None:
    repo, c = _history(tmp_path)
    onto = git.tree_with_files(repo, git.tree_of(repo, c["fix"]), {"b.txt": b"candidate\n"})
    step = git.replay_commit(repo, onto, c["follow"], c["fix"])
    assert step.merge.clean and not step.empty
    assert git.show_file(repo, step.merge.tree, "a.py") == b"one\nTWO\nthree\nfour\n"
    assert git.show_file(repo, step.merge.tree, "b.txt") == b"candidate\n"


def test_replay_conflict_carries_the_marked_text(tmp_path: Path) -> None:
    repo, c = _history(tmp_path)
    onto = git.tree_with_files(
        repo, git.tree_of(repo, c["follow"]), {"a.py": b"one\nXX\nthree\nfour\n"}
    )
    step = git.replay_commit(repo, onto, c["clash"], c["follow"])
    assert step.merge.conflicted == ("a.py",)
    ((path, text),) = step.conflict_text
    assert path == "a.py" and text is not None
    assert b"<<<<<<<" in text and b"XX" in text and b"\n2\n" in text


def test_replay_of_an_empty_commit_is_marked_empty(tmp_path: Path) -> None:
    repo, c = _history(tmp_path)
    empty = commit(repo, {}, "nothing")
    step = git.replay_commit(repo, c["base"], empty, c["clash"])
    assert step.empty and step.merge.tree == git.tree_of(repo, c["base"])


def test_replay_refuses_a_parent_that_is_not_an_ancestor(tmp_path: Path) -> None:
    repo, c = _history(tmp_path)
    with pytest.raises(GitError):
        git.replay_commit(repo, c["base"], c["fix"], c["clash"])


def test_replay_follows_a_rename(tmp_path: Path) -> None:
    repo, c = _history(tmp_path)
    run(repo, "mv", "a.py", "moved.py")
    moved = commit(repo, {}, "move")
    onto = git.tree_with_files(
        repo, git.tree_of(repo, c["clash"]), {"a.py": b"one\n2\nthree\nfour\nfive\n"}
    )
    step = git.replay_commit(repo, onto, moved, c["clash"])
    assert step.merge.clean
    assert git.show_file(repo, step.merge.tree, "a.py") is None
    assert git.show_file(repo, step.merge.tree, "moved.py") == b"one\n2\nthree\nfour\nfive\n"


def test_commit_tree_is_deterministic_and_checkout_round_trips(tmp_path: Path) -> None:
    repo, c = _history(tmp_path)
    tree = git.tree_of(repo, c["fix"])
    first = git.commit_tree(repo, tree, [c["base"]], "state")
    assert first == git.commit_tree(repo, tree, [c["base"]], "state")
    assert git.commit_parents(repo, first) == (c["base"],)
    assert git.commit_subject(repo, c["fix"]) == "fix"
    out = tmp_path / "out"
    git.checkout_tree(repo, tree, out)
    assert (out / "a.py").read_text() == "one\nTWO\nthree\n"
    assert not (out / ".git").exists()
    assert git.tree_from_dir(repo, out) == tree


def test_existing_paths_lists_only_files_present(tmp_path: Path) -> None:
    repo, c = _history(tmp_path)
    assert git.existing_paths(repo, c["fix"], ["a.py", "gone.py", "b.txt"]) == {"a.py", "b.txt"}
    assert git.existing_paths(repo, c["fix"], []) == frozenset()


def test_tree_helpers_work_in_a_bare_repository(tmp_path: Path) -> None:
    repo, c = _history(tmp_path)
    bare = tmp_path / "bare.git"
    run(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    tree = git.tree_with_files(bare, c["fix"], {"a.py": None, "new/n.txt": b"n\n"})
    assert git.show_file(bare, tree, "a.py") is None
    assert git.show_file(bare, tree, "new/n.txt") == b"n\n"
    out = tmp_path / "out"
    git.checkout_tree(bare, tree, out)
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == ["b.txt", "n.txt"]
    assert git.tree_from_dir(bare, out) == tree
    step = git.replay_commit(bare, tree, c["clash"], c["follow"])
    assert step.merge.conflicted == ("a.py",)  # deleted here, changed by the follow-up
