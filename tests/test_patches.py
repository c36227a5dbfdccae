"""Reading git's diffs: paths git quotes (unicode) or ends with a tab (spaces) come out exact."""

from __future__ import annotations

from pathlib import Path

from repogate import git
from repogate.patches import added_lines, touched_paths


def test_unicode_and_space_paths(tmp_path: Path) -> None:
    """A hidden test file named tests/test_ünï.py must be recognised as the hidden tests' file
    (to protect it and to reset it before the hidden patch is applied)."""
    repo = tmp_path / "r"
    (repo / "tests" / "a b").mkdir(parents=True)
    (repo / "tests" / "test_ünï.py").write_text("x = 1\n")
    (repo / "tests" / "a b" / "test_x.py").write_text("y = 1\n")
    (repo / "logo.bin").write_bytes(b"\x00\x01")
    git.init_repo(repo)
    base = git.commit_all(repo, "base")
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
