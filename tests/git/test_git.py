from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from repogate import git
from repogate.errors import GitError, PatchApplyError, UserInputError
from repogate.state import patch_digest

_ENV = {
    "PATH": os.environ["PATH"],
    "HOME": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def sh(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=_ENV,
        capture_output=True,
        text=True,
        check=check,
    )


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", message)
    return sh(repo, "rev-parse", "HEAD").stdout.strip()


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, list[str]]:
    """A repository with three commits on main, a tag on the last, and a side branch."""
    repo = tmp_path / "src"
    repo.mkdir()
    sh(repo, "init", "-q")
    shas = [commit(repo, {"a.py": f"x = {i}\n"}, f"c{i}") for i in range(3)]
    sh(repo, "tag", "-a", "v1", "-m", "v1")
    sh(repo, "branch", "side", shas[1])
    return repo, shas


@pytest.fixture
def workspace(history: tuple[Path, list[str]], tmp_path: Path) -> tuple[Path, str]:
    repo, shas = history
    ws = tmp_path / "ws"
    return ws, git.prepare_workspace(repo, shas[0], ws)


def test_workspace_holds_nothing_after_base(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """Threat: an agent reads the fix from future history (SWE-bench issue #465)."""
    repo, shas = history
    for source in (repo, tmp_path / "bare"):
        if source != repo:
            sh(tmp_path, "clone", "-q", "--mirror", str(repo), str(source))
        ws = tmp_path / f"ws-{source.name}"
        base = git.prepare_workspace(source, shas[0][:8], ws)
        assert base == shas[0]
        assert sh(ws, "log", "--all", "--format=%H").stdout.split() == [shas[0]]
        assert sh(ws, "tag").stdout == ""
        assert sh(ws, "for-each-ref", "--format=%(refname)").stdout.split() == ["refs/heads/main"]
        for later in shas[1:]:
            assert sh(ws, "cat-file", "-e", later, check=False).returncode != 0
            assert not git.has_object(ws, later)
        reflog = sh(ws, "reflog", "--all", "--format=%H").stdout.split()
        assert set(reflog) == {shas[0]}
        assert not (ws / ".git" / "FETCH_HEAD").exists()
        assert (ws / "a.py").read_text() == "x = 0\n"
        assert git.status_porcelain(ws) == ()


def _assert_holds_what(copy: Path, fetched: Path, absent: list[str]) -> None:
    """``copy`` holds the commits, tags and refs ``fetched`` holds and none of ``absent``; it is
    clean, has no link back to where it came from, and carries the harness's neutral attributes."""
    for listed in (("log", "--all", "--format=%H"), ("tag",), ("for-each-ref",)):
        assert sh(copy, *listed).stdout == sh(fetched, *listed).stdout
    assert not any(git.has_object(copy, sha) for sha in absent)
    assert sh(copy, "remote").stdout == "" and git.status_porcelain(copy) == ()
    assert not (copy / ".git" / "FETCH_HEAD").exists()
    assert (copy / ".git" / "info" / "attributes").read_text() == git.NEUTRAL_ATTRIBUTES


def test_cached_workspace_holds_what_a_fetched_one_holds(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """A workspace copied from the base-history cache is the fetched workspace, made once."""
    repo, shas = history
    sh(repo, "tag", "early", shas[0])
    cache = tmp_path / "cache"
    fetched, copied, again = tmp_path / "fetched", tmp_path / "copied", tmp_path / "again"
    assert git.prepare_workspace(repo, shas[0], fetched) == shas[0]
    assert git.prepare_workspace(repo, shas[0][:8], copied, cache=cache) == shas[0]
    (entry,) = cache.glob("*.git")
    made = entry.stat().st_mtime_ns
    git.prepare_workspace(repo, shas[0], again, cache=cache)
    assert list(cache.glob("*.git")) == [entry] and entry.stat().st_mtime_ns == made
    for ws in (copied, again):
        _assert_holds_what(ws, fetched, absent=shas[1:])
        assert set(sh(ws, "reflog", "--all", "--format=%H").stdout.split()) == {shas[0]}
    (copied / "a.py").write_text("written by an agent\n")  # a copy: the cache is untouched
    assert sh(entry, "show", "main:a.py").stdout == "x = 0\n"
    # a tag added to the mirror on an ancestor later: another entry, carrying it
    sh(repo, "tag", "later-on-base", shas[0])
    tagged = tmp_path / "tagged"
    git.prepare_workspace(repo, shas[0], tagged, cache=cache)
    assert len(list(cache.glob("*.git"))) == 2
    assert sh(tagged, "tag").stdout.split() == ["early", "later-on-base"]


def test_base_missing_is_user_error(history: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, _ = history
    with pytest.raises(UserInputError, match="deadbeef") as info:
        git.prepare_workspace(repo, "deadbeef" * 5, tmp_path / "ws")
    assert str(repo) in str(info.value)


def test_resolve_source(history: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, _ = history
    cache = tmp_path / "cache"
    sh(tmp_path, "clone", "-q", "--bare", str(repo), str(cache / "owner+name" / "repo"))
    assert git.resolve_source("src", tmp_path, None) == repo.resolve()
    found = git.resolve_source("https://github.com/owner/name.git", tmp_path, cache)
    assert found == (cache / "owner+name" / "repo").resolve()
    assert git.resolve_source("git@github.com:owner/name.git", tmp_path, cache) == found
    with pytest.raises(UserInputError, match="--repo-cache DIR") as info:
        git.resolve_source("https://github.com/other/thing", tmp_path, cache)
    assert "https://github.com/other/thing" in str(info.value)
    with pytest.raises(UserInputError, match="not a git repository"):
        git.resolve_source("nowhere", tmp_path, None)


def test_rev_helpers(history: tuple[Path, list[str]]) -> None:
    repo, shas = history
    assert git.rev_parse(repo, shas[1][:7]) == shas[1]
    assert git.is_ancestor(repo, shas[0], shas[2])
    assert not git.is_ancestor(repo, shas[2], shas[0])
    assert git.log_range(repo, shas[0], shas[2], first_parent=True) == tuple(shas[1:])
    assert len(git.tree_of(repo, shas[0])) == 40
    assert git.show_file(repo, shas[1], "a.py") == b"x = 1\n"
    assert git.show_file(repo, shas[1], "missing.py") is None
    with pytest.raises(GitError):
        git.rev_parse(repo, "no-such-ref")
    with pytest.raises(GitError):
        git.rev_parse(repo, "--all")


def test_commit_candidate_is_deterministic(workspace: tuple[Path, str], tmp_path: Path) -> None:
    ws, base = workspace
    (ws / "new.txt").write_text("n\n")
    (ws / "ignored.log").write_text("x\n")
    (ws / ".gitignore").write_text("*.log\n")
    first = git.commit_candidate(ws, "candidate", parent=base)
    again = git.commit_candidate(ws, "candidate", parent=base)
    assert first == again
    assert git.rev_parse(ws, git.CANDIDATE_REF) == first
    paths = {c.path: c.status for c in git.changed_paths(ws, base, first)}
    assert paths == {"new.txt": "A", ".gitignore": "A"}
    author = sh(ws, "log", "-1", "--format=%an <%ae> %aI %cn %cI", first).stdout.strip()
    assert author == (
        "repogate-harness <harness@repogate.invalid> 2000-01-01T00:00:00+00:00 "
        "repogate-harness 2000-01-01T00:00:00+00:00"
    )
    empty = git.commit_candidate(tmp_path / "ws", "nothing", parent=base)
    assert git.tree_of(ws, empty) == git.tree_of(ws, first)


def test_commit_candidate_refuses_hostile_git_config(workspace: tuple[Path, str]) -> None:
    """Threat: the agent configures a filter driver so the harness's `git add` runs its command."""
    ws, base = workspace
    sh(ws, "config", "filter.x.clean", "touch pwned")
    with pytest.raises(PatchApplyError, match=r"filter\.x\.clean"):
        git.commit_candidate(ws, "c", parent=base)
    assert not (ws / "pwned").exists()


def test_commit_candidate_refuses_missing_git_dir(workspace: tuple[Path, str]) -> None:
    ws, base = workspace
    sh(ws, "rev-parse", "HEAD")
    (ws / ".git").rename(ws / "moved")
    (ws / ".git").write_text("gitdir: moved\n")
    with pytest.raises(PatchApplyError, match=r"\.git"):
        git.commit_candidate(ws, "c", parent=base)


def test_changed_paths_marks_symlinks(workspace: tuple[Path, str]) -> None:
    ws, base = workspace
    (ws / "link").symlink_to("a.py")
    (ws / "a.py").unlink()
    cand = git.commit_candidate(ws, "c", parent=base)
    changes = {c.path: c for c in git.changed_paths(ws, base, cand)}
    assert changes["link"] == git.ChangedPath("A", "link", None, True)
    assert changes["a.py"].status == "D"
    assert not changes["a.py"].is_symlink


def test_a_type_change_is_a_link_change_whichever_side_the_link_is_on(
    workspace: tuple[Path, str],
) -> None:
    """Threat (red team): a link replaced by a regular file (``T``) was read as a plain file.

    The link rule of gate I let the agent put its own table where a link a graded test reads
    through was. A link replaced by a file, a file replaced by a link, and a link deleted are
    each marked as links; a file edited in place is not.
    """
    ws, base = workspace
    for name in ("table.json", "gone.json"):
        (ws / name).symlink_to("a.py")
    (ws / "plain.json").write_text("{}\n")
    (ws / "data.json").write_text("{}\n")
    first = git.commit_candidate(ws, "links", parent=base)
    (ws / "table.json").unlink()
    (ws / "table.json").write_text("{}\n")
    (ws / "plain.json").unlink()
    (ws / "plain.json").symlink_to("a.py")
    (ws / "gone.json").unlink()
    (ws / "data.json").write_text("[]\n")
    second = git.commit_candidate(ws, "types", parent=first)
    changes = {c.path: (c.status, c.is_symlink) for c in git.changed_paths(ws, first, second)}
    assert changes == {
        "table.json": ("T", True),
        "plain.json": ("T", True),
        "gone.json": ("D", True),
        "data.json": ("M", False),
    }


def test_whitespace_only_change_changes_digest(workspace: tuple[Path, str]) -> None:
    """Threat: two Python programs differing only in indentation share one patch identity."""
    ws, base = workspace
    (ws / "m.py").write_text("if x:\n    a()\n    b()\n")
    one = git.commit_candidate(ws, "c", parent=base)
    (ws / "m.py").write_text("if x:\n    a()\nb()\n")
    two = git.commit_candidate(ws, "c", parent=base)
    d1, d2 = git.diff_binary(ws, base, one), git.diff_binary(ws, base, two)
    assert patch_digest(d1) != patch_digest(d2)
    assert git.diff_binary(ws, base, one, exclude=["m.py"]) == b""
    assert git.diff_binary(ws, base, one, paths=["m.py"]) == d1


def test_binary_patch_round_trip(workspace: tuple[Path, str], tmp_path: Path) -> None:
    ws, base = workspace
    blob = bytes(range(256)) * 10
    (ws / "img.bin").write_bytes(blob)
    cand = git.commit_candidate(ws, "c", parent=base)
    patch = git.diff_binary(ws, base, cand)
    assert b"GIT binary patch" in patch
    fresh = tmp_path / "fresh"
    git.export_tree(ws, base, fresh)
    git.apply_patch(fresh, patch, index=True)
    assert (fresh / "img.bin").read_bytes() == blob
    assert git.status_porcelain(fresh) == ("A  img.bin",)


def test_export_tree_is_clean_and_self_contained(
    workspace: tuple[Path, str], tmp_path: Path
) -> None:
    ws, base = workspace
    (ws / "b.txt").write_text("b\n")
    cand = git.commit_candidate(ws, "c", parent=base)
    out = tmp_path / "export"
    git.export_tree(ws, cand, out)
    assert git.rev_parse(out, "HEAD") == cand
    assert git.status_porcelain(out) == ()
    assert not (out / ".git" / "objects" / "info" / "alternates").exists()
    (out / "b.txt").write_text("changed\n")
    (out / "c.txt").write_text("new\n")
    assert git.status_porcelain(out) == (" M b.txt", "?? c.txt")


def test_copy_repository_is_clean_unlinked_and_holds_what_its_source_holds(
    workspace: tuple[Path, str], tmp_path: Path
) -> None:
    ws, base = workspace
    early = tmp_path / "early"
    git.copy_repository(ws, base, early)  # before any later commit exists in the workspace
    (ws / "b.txt").write_text("b\n")
    cand = git.commit_candidate(ws, "c", parent=base)
    late = tmp_path / "late"
    git.copy_repository(ws, cand, late)
    assert git.rev_parse(late, "HEAD") == cand and (late / "b.txt").read_text() == "b\n"
    assert git.rev_parse(early, "HEAD") == base and not (early / "b.txt").exists()
    assert git.status_porcelain(early) == () == git.status_porcelain(late)
    assert not git.has_object(early, cand)  # made before: the later commit is not in it
    assert sh(late, "remote", check=False).stdout == ""  # no link back to the workspace
    assert (late / ".git" / "info" / "attributes").read_text() == git.NEUTRAL_ATTRIBUTES
    objects = ws / ".git" / "objects"
    files = [f.relative_to(objects) for f in objects.rglob("*") if f.is_file()]
    assert files and all((late / ".git" / "objects" / f).is_file() for f in files)
    # copies, not hard links: a test writing in the copy cannot reach the workspace
    assert all(
        (objects / f).stat().st_ino != (late / ".git" / "objects" / f).stat().st_ino for f in files
    )
    with pytest.raises(GitError):
        git.copy_repository(ws, cand, late)  # not empty


def test_export_from_history_holds_its_commit_history_and_nothing_newer(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """Trees made from the kept base history hold what export_tree's hold: rev's history only."""
    repo, shas = history
    sh(repo, "tag", "old", shas[0])
    ws = tmp_path / "ws"
    base = git.prepare_workspace(repo, shas[0], ws)
    kept = tmp_path / "base.git"
    git.keep_history(ws, kept)
    (ws / "b.txt").write_text("b\n")
    cand = git.commit_candidate(ws, "c", parent=base)
    git.fetch_commit(ws, repo, shas[2])  # later history arrives in the workspace (a merge target)
    for rev, files in ((base, {"a.py"}), (cand, {"a.py", "b.txt"})):
        out = tmp_path / f"tree-{rev[:8]}"
        git.export_from_history(kept, ws, rev, out)
        reference = tmp_path / f"ref-{rev[:8]}"
        git.export_tree(ws, rev, reference)
        assert git.rev_parse(out, "HEAD") == rev
        assert {p.name for p in out.iterdir() if p.name != ".git"} == files
        assert sh(out, "tag").stdout.split() == ["old"]
        _assert_holds_what(out, reference, absent=shas[1:])
    later = tmp_path / "later"  # a descendant with newer history: it arrives, as it should
    git.export_from_history(kept, ws, shas[2], later)
    assert git.rev_parse(later, "HEAD") == shas[2] and git.has_object(later, shas[1])
    # a commit not descending from the kept base: made by export_tree, never from the copy
    orphan = git.commit_tree(ws, git.tree_of(ws, cand), [], "orphan")
    alone = tmp_path / "alone"
    git.export_from_history(kept, ws, orphan, alone)
    assert sh(alone, "log", "--all", "--format=%H").stdout.split() == [orphan]
    assert not git.has_object(alone, base)
    with pytest.raises(GitError):
        git.keep_history(ws, kept)  # exists: never written twice


def test_patch_that_does_not_apply(workspace: tuple[Path, str]) -> None:
    ws, _ = workspace
    patch = b"--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 99\n+x = 100\n"
    with pytest.raises(PatchApplyError, match=r"a\.py"):
        git.apply_patch(ws, patch)
    assert (ws / "a.py").read_text() == "x = 0\n"


def _new_file_patch(path: str) -> bytes:
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        "@@ -0,0 +1 @@\n+evil\n"
    ).encode()


@pytest.mark.parametrize(
    ("path", "why"),
    [
        (".git/hooks/post-checkout", "inside .git"),
        ("sub/.GIT/config", "inside .git"),
        ("/OUTSIDE/abs.txt", "absolute"),
        ("../escape.txt", r"'\.\.'"),
        ("ok/../../escape.txt", r"'\.\.'"),
        ("link/escape.txt", "symbolic link"),
    ],
)
def test_patch_refused_for_paths_outside(
    workspace: tuple[Path, str], tmp_path: Path, path: str, why: str
) -> None:
    """Threat: a patch writes outside the workspace (hooks, absolute paths, '..', symlinks)."""
    ws, _ = workspace
    outside = tmp_path / "outside"
    outside.mkdir()
    sentinel = outside / "sentinel"
    sentinel.write_text("untouched")
    (ws / "link").symlink_to(outside)
    path = path.replace("/OUTSIDE", str(outside))
    with pytest.raises(PatchApplyError, match=why):
        git.apply_patch(ws, _new_file_patch(path))
    assert sorted(p.name for p in outside.iterdir()) == ["sentinel"]
    assert sentinel.read_text() == "untouched"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "src", "ws"]
    assert not (ws / ".git" / "hooks" / "post-checkout").exists()


def test_git_itself_refuses_symlink_made_in_same_patch(
    workspace: tuple[Path, str], tmp_path: Path
) -> None:
    """Threat: a patch creates a symlink out of the workspace, then writes through it."""
    ws, _ = workspace
    outside = tmp_path / "outside"
    outside.mkdir()
    target = str(outside).encode()
    patch = (
        b"diff --git a/esc b/esc\nnew file mode 120000\n--- /dev/null\n+++ b/esc\n"
        b"@@ -0,0 +1 @@\n+"
        + target
        + b"\n\\ No newline at end of file\n"
        + _new_file_patch("esc/f")
    )
    with pytest.raises(PatchApplyError):
        git.apply_patch(ws, patch)
    assert list(outside.iterdir()) == []
    assert not (ws / "esc").exists()


def test_empty_patch_is_a_no_op(workspace: tuple[Path, str]) -> None:
    ws, _ = workspace
    git.apply_patch(ws, b"")
    assert git.status_porcelain(ws) == ()


def test_init_repo_and_commit_all_are_deterministic(tmp_path: Path) -> None:
    shas = []
    for name in ("one", "two"):
        repo = tmp_path / name
        git.init_repo(repo)
        (repo / "f.txt").write_text("f\n")
        shas.append(git.commit_all(repo, "first"))
        assert git.status_porcelain(repo) == ()
    assert shas[0] == shas[1]
    assert git.log_range(tmp_path / "one", shas[0], "HEAD", first_parent=True) == ()


def test_a_linked_worktree_is_a_source_and_a_workspace_comes_from_it(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """``git worktree add`` makes a checkout whose ``.git`` is a file: it is a repository too.

    ``tasks mine`` on such a checkout said "is not a git repository".
    """
    repo, shas = history
    linked = tmp_path / "linked"
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(linked), shas[-1]],
        check=True,
    )
    assert (linked / ".git").is_file()
    source = git.resolve_source(str(linked), tmp_path, None)
    assert source == linked.resolve()
    ws = tmp_path / "ws"
    assert git.prepare_workspace(source, shas[1], ws) == shas[1]
    assert git.rev_parse(ws, "HEAD") == shas[1]


@pytest.mark.parametrize(
    "url", ["https://github.com/../outside", "https://github.com/owner/..", "https://../a/b"]
)
def test_a_url_whose_parts_are_not_folder_names_is_never_looked_up(
    history: tuple[Path, list[str]], tmp_path: Path, url: str
) -> None:
    """``repo = "../outside"`` in an instance became ``https://github.com/../outside``, which
    the cache lookup joined into a folder beside the repository cache and used (red team)."""
    repo, _ = history
    cache = tmp_path / "cache" / "inner"
    cache.mkdir(parents=True)
    sh(tmp_path, "clone", "-q", "--bare", str(repo), str(tmp_path / "cache" / "outside"))
    sh(tmp_path, "clone", "-q", "--bare", str(repo), str(tmp_path / "outside"))
    with pytest.raises(UserInputError, match="not a folder name"):
        git.resolve_source(url, tmp_path, cache)


def test_a_repository_cache_that_is_a_file_is_named_as_one(tmp_path: Path) -> None:
    """``--repo-cache afile`` said "no local mirror ... in repository cache afile" (new user)."""
    cache = tmp_path / "afile"
    cache.write_text("x")
    with pytest.raises(UserInputError, match="is a file, not a folder") as info:
        git.resolve_source("https://github.com/owner/name", tmp_path, cache)
    assert info.value.fix.startswith("give the folder holding the mirrors")
