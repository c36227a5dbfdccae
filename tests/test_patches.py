"""Reading git's diffs: paths git quotes (unicode) or ends with a tab (spaces) come out exact."""

from __future__ import annotations

from pathlib import Path

from repogate import git
from repogate.patches import added_lines, per_file, touched_paths


def _unusual_names(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose files have a unicode name, a space in a folder's name, binary bytes."""
    repo = tmp_path / "r"
    (repo / "tests" / "a b").mkdir(parents=True)
    (repo / "tests" / "test_ünï.py").write_text("x = 1\n")
    (repo / "tests" / "a b" / "test_x.py").write_text("y = 1\n")
    (repo / "logo.bin").write_bytes(b"\x00\x01")
    git.init_repo(repo)
    return repo, git.commit_all(repo, "base")


def test_unicode_and_space_paths(tmp_path: Path) -> None:
    """A hidden test file named tests/test_ünï.py must be recognised as the hidden tests' file
    (to protect it and to reset it before the hidden patch is applied)."""
    repo, base = _unusual_names(tmp_path)
    (repo / "tests" / "test_ünï.py").write_text("x = 1\nx = 2\n")
    (repo / "tests" / "a b" / "test_x.py").write_text("y = 1\ny = 2\n")
    (repo / "logo.bin").write_bytes(b"\x00\x02")
    head = git.commit_all(repo, "change")
    patch = git.diff_binary(repo, base, head)
    assert touched_paths(patch) == ("logo.bin", "tests/a b/test_x.py", "tests/test_ünï.py")
    assert added_lines(patch) == {
        "tests/a b/test_x.py": ("y = 2",),
        "tests/test_ünï.py": ("x = 2",),
    }


PATHS = ("top.md", "docs/in.md", "src/y.py", "src/a/x.py", "src/a/b/z.py", "srcx/w.py")
PATTERNS = (
    "*.md",
    "**/*.md",
    "src/*",
    "src/*.py",
    "src",
    "src/",
    "/src/a",
    "src/**/z.py",
    "src?/*",
)


def test_patch_source_paths_use_the_contract_glob_dialect(tmp_path: Path) -> None:
    """A contract's patch-source ``paths``/``exclude`` select the files its other globs match:
    ``*`` stays inside one folder (git's plain pathspecs let it cross ``/``), a folder selects
    everything below it."""
    from repogate.globs import matches

    repo = tmp_path / "r"
    for path in PATHS:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("0\n")
    git.init_repo(repo)
    base = git.commit_all(repo, "base")
    for path in PATHS:
        (repo / path).write_text("1\n")
    head = git.commit_all(repo, "change")
    for pattern in PATTERNS:
        wanted = tuple(sorted(p for p in PATHS if matches(p, pattern)))
        got = touched_paths(git.diff_binary(repo, base, head, paths=(pattern,)))
        assert tuple(sorted(got)) == wanted, pattern
        kept = tuple(sorted(p for p in PATHS if not matches(p, pattern)))
        got = touched_paths(git.diff_binary(repo, base, head, exclude=(pattern,)))
        assert tuple(sorted(got)) == kept, pattern


def test_per_file_parts_equal_each_paths_own_diff(tmp_path: Path) -> None:
    """Gate I compares a candidate's change of a hidden-test path with the hidden tests' part for
    that path: each part must be byte for byte what git prints for that path alone (binary,
    quoted and space-holding names too), or a carried test would still read as an oracle edit."""
    repo, base = _unusual_names(tmp_path)
    (repo / "tests" / "test_ünï.py").write_text("x = 1\nx = 2\n")
    (repo / "tests" / "a b" / "test_x.py").unlink()
    (repo / "logo.bin").write_bytes(b"\x00\x02")
    (repo / "new.txt").write_text("n\n")
    head = git.commit_all(repo, "change")
    parts = per_file(git.diff_binary(repo, base, head))
    assert sorted(parts) == ["logo.bin", "new.txt", "tests/a b/test_x.py", "tests/test_ünï.py"]
    for path, part in parts.items():
        assert part == git.diff_binary(repo, base, head, (path,)), path
    assert per_file(b"") == {}
