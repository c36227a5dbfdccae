"""The harness's git takes no driver, configuration or attribute from what untrusted code wrote.

Red team findings 1 (a filter driver run by the harness's ``git status``), 6 (``merge=union`` hid
a conflict) and 2's binary variant (``*.py -diff`` turned the patch into a binary patch the
integrity patterns cannot read).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from _lifecycle_git import commit, git, new_repo, write
from repogate import git as rgit
from repogate.contract import Generator
from repogate.gates.generated import check_generated
from repogate.receipt import Check
from repogate.sandbox import SandboxPolicy

BASE = {"pkg/__init__.py": "", "pkg/core.py": "A = 1\nB = 2\nC = 3\n", "tools/gen.py": "pass\n"}


@pytest.fixture
def python_bin(tmp_path: Path) -> Path:
    folder = tmp_path / "envbin"
    folder.mkdir()
    (folder / "python").symlink_to(sys.executable)
    return folder / "python"


def _regenerate(
    tmp_path: Path, python_bin: Path, gen: str, extra: dict[str, str] | None = None
) -> Check:
    """Commit ``gen`` as the generator (plus ``extra`` files) and run the freshness check."""
    repo, base = new_repo(tmp_path / "repo", {**BASE, **(extra or {})})
    head = commit(repo, {"tools/gen.py": gen})
    checkout = tmp_path / "checkout"
    rgit.export_tree(repo, head, checkout)
    generator = Generator(name="g", command="python tools/gen.py", outputs=("pkg/**",))
    changed = rgit.changed_paths(repo, base, head)
    policy = SandboxPolicy(timeout_s=60)
    return check_generated(checkout, (generator,), changed, policy, python_bin).checks[0]


def _candidate(tmp_path: Path, files: dict[str, str]) -> tuple[Path, str, str]:
    """Return a harness workspace at the base with ``files`` written and committed as candidate."""
    repo, base = new_repo(tmp_path / "repo", BASE)
    ws = tmp_path / "ws"
    rgit.prepare_workspace(repo, base, ws)
    write(ws, files)
    return ws, base, rgit.commit_candidate(ws, "candidate", parent=base)


def test_generator_cannot_make_the_harness_git_run_a_filter_driver(
    tmp_path: Path, python_bin: Path
) -> None:
    """Untrusted code must not make the harness run a command: a generator (candidate code) writes a
    filter driver into the checkout's .git/config (and empties its info/attributes), the tree's
    .gitattributes names it, and the harness's own status after regeneration must neither run it
    nor lose the change it made."""
    marker = tmp_path / "PWNED"
    gen = (
        "import pathlib\n"
        "pathlib.Path('.git/info/attributes').write_text('')\n"
        "with open('.git/config', 'a') as f:\n"
        f'    f.write(\'[filter "x"]\\n\\tclean = "touch {marker}; cat"\\n\')\n'
        "pathlib.Path('pkg/core.py').write_text('A = 1\\nB = 2\\nC = 4\\n')\n"
    )
    check = _regenerate(tmp_path, python_bin, gen, {".gitattributes": "* filter=x\n"})
    assert not marker.exists(), "the harness's git ran the candidate's filter driver"
    assert check.status == "failed", check.detail
    assert check.detail == "regeneration changed pkg/core.py"


def test_generator_replacing_dot_git_cannot_hide_its_change(
    tmp_path: Path, python_bin: Path
) -> None:
    """A generator that points the checkout's .git at another repository (or empties it) must not
    change what the harness sees: the harness reads the tree with its own git directory."""
    other = tmp_path / "other"
    gen = (
        "import pathlib, shutil\n"
        "shutil.rmtree('.git')\n"
        f"pathlib.Path('.git').write_text('gitdir: {other}/.git\\n')\n"
        "pathlib.Path('pkg/new.py').write_text('X = 1\\n')\n"
    )
    new_repo(other, {"unrelated": "x"})
    check = _regenerate(tmp_path, python_bin, gen)
    assert check.status == "failed", check.detail
    assert check.detail == "regeneration changed pkg/new.py"


def test_merge_union_attribute_cannot_hide_a_conflict(tmp_path: Path) -> None:
    """A candidate's ``merge=union`` must not make the harness's merge take both sides of a
    conflict with the moved target and report it clean."""
    repo, base = new_repo(tmp_path / "repo", BASE)
    target = commit(repo, {"pkg/core.py": "A = 1\nB = 20\nC = 3\n"})
    ws = tmp_path / "ws"
    rgit.prepare_workspace(repo, base, ws)
    write(ws, {"pkg/core.py": "A = 1\nB = 21\nC = 3\n", ".gitattributes": "* merge=union\n"})
    cand = rgit.commit_candidate(ws, "candidate", parent=base)
    rgit.fetch_commit(ws, repo, target)
    merged = rgit.merge_candidate(ws, target, cand)
    assert merged.conflicted == ("pkg/core.py",)


def test_replay_ignores_attributes_of_the_replayed_history(tmp_path: Path) -> None:
    """The sentinel's replay merges in a harness repository: a ``merge=union`` the candidate adds
    must not hide a follow-up commit's conflict either."""
    repo, base = new_repo(tmp_path / "repo", BASE)
    follow = commit(repo, {"pkg/core.py": "A = 1\nB = 20\nC = 3\n"})
    git(repo, "checkout", "-q", "-b", "cand", base)
    cand = commit(
        repo, {"pkg/core.py": "A = 1\nB = 21\nC = 3\n", ".gitattributes": "* merge=union\n"}
    )
    history = tmp_path / "history"
    rgit.harness_repo(repo / ".git", history)
    step = rgit.replay_commit(history, cand, follow, base)
    assert step.merge.conflicted == ("pkg/core.py",)


@pytest.mark.parametrize("attributes", ["*.py -diff\n", "*.py binary\n", "*.py diff=x\n"])
def test_diff_attribute_cannot_make_the_patch_unreadable(tmp_path: Path, attributes: str) -> None:
    """The integrity patterns read the patch's added lines: a candidate's ``-diff``/``binary``
    must not turn the patch of its Python files into a ``GIT binary patch``."""
    payload = "import _pytest.python as _pp\n_pp.Function.runtest = lambda self: None\n"
    files = {"pkg/__init__.py": payload, "pkg/.gitattributes": attributes}
    ws, base, cand = _candidate(tmp_path, files)
    for patch in (
        rgit.diff_binary(ws, base, cand),
        rgit.diff_binary_capped(ws, base, cand, 1 << 20),
    ):
        assert patch is not None
        assert b"GIT binary patch" not in patch
        assert b"+_pp.Function.runtest = lambda self: None\n" in patch


def test_text_and_ident_attributes_do_not_rewrite_the_candidate(tmp_path: Path) -> None:
    """``ident``, ``eol`` and ``working-tree-encoding`` in the tree must not change the bytes the
    harness commits: the candidate is what the agent left, byte for byte."""
    text = "X = '$Id$'\r\nY = 2\r\n"
    attrs = "*.py ident eol=lf text working-tree-encoding=UTF-16\n"
    ws, _, cand = _candidate(tmp_path, {"pkg/a.py": text, ".gitattributes": attrs})
    assert rgit.show_file(ws, cand, "pkg/a.py") == text.encode()


def test_generator_cannot_hide_new_files_behind_its_own_gitignore(
    tmp_path: Path, python_bin: Path
) -> None:
    """A regeneration that writes new files plus a ``.gitignore`` ignoring them (and itself) still
    changed the tree: the self-ignoring ``.gitignore`` is reported."""
    gen = (
        "import pathlib\n"
        "pathlib.Path('pkg/out').mkdir()\n"
        "pathlib.Path('pkg/out/.gitignore').write_text('*\\n')\n"
        "pathlib.Path('pkg/out/x.py').write_text('X = 1\\n')\n"
    )
    check = _regenerate(tmp_path, python_bin, gen)
    assert check.status == "failed", check.detail
    assert check.detail == "regeneration changed pkg/out/.gitignore"


def test_a_tool_cache_the_project_ignores_is_not_a_change(tmp_path: Path, python_bin: Path) -> None:
    """A generator that leaves ``.pytest_cache`` (its own ``.gitignore`` says ``*``) in a project
    whose ``.gitignore`` already ignores that folder changed nothing the project tracks."""
    gen = (
        "import pathlib\n"
        "pathlib.Path('.pytest_cache').mkdir()\n"
        "pathlib.Path('.pytest_cache/.gitignore').write_text('*\\n')\n"
        "pathlib.Path('.pytest_cache/v').write_text('1\\n')\n"
    )
    check = _regenerate(tmp_path, python_bin, gen, {".gitignore": ".pytest_cache/\n"})
    assert check.status == "passed", check.detail


def test_a_fifo_left_by_a_generator_is_a_change_never_a_hang(
    tmp_path: Path, python_bin: Path
) -> None:
    """The harness's status of a tree a generator dirtied opens no FIFO: one planted in place of a
    tracked file is a change, a new one is not read (git lists regular files and links only)."""
    gen = "import os\nos.remove('pkg/core.py')\nos.mkfifo('pkg/core.py')\nos.mkfifo('pkg/zz.py')\n"
    check = _regenerate(tmp_path, python_bin, gen)
    assert check.status == "failed", check.detail
    assert check.detail == "regeneration changed pkg/core.py"
