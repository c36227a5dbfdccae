"""The strength an imported SWE-bench instance is judged at: lifecycle by default, SWE-bench's on request.

Imported by SWE-bench's own rules, repogate's ``accepted`` equalled SWE-bench's ``resolved`` on
every real attempt tried (issue 21): only the declared tests, no sentinel, any path editable. These
tests pin what lifecycle strength adds and that ``--as swebench`` keeps the old rules, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from _lifecycle_git import ENV, write
from _tasks_repo import build_history, diff, instance
from repogate import git
from repogate.cli import main
from repogate.tasks.import_strength import (
    cohort_tags,
    permissions_for,
    sentinel_table,
    sentinel_window,
)
from repogate.tasks.ingest import Candidate
from repogate.tasks.recipe import load_env_map
from repogate.tasks.swebench import draft, read_instances


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("strength")
    return root / "mirrors" / "acme+calc", build_history(root / "mirrors" / "acme+calc")


def _patch(*files: tuple[str, str]) -> bytes:
    """A patch touching ``files`` as (path, kind): ``edit``, ``add`` or ``delete``."""
    out = []
    for path, kind in files:
        head = f"diff --git a/{path} b/{path}\n"
        if kind == "add":
            head += "new file mode 100644\nindex 0000000..1111111\n--- /dev/null\n"
        elif kind == "delete":
            head += "deleted file mode 100644\nindex 1111111..0000000\n--- a/{path}\n"
        else:
            head += f"index 1111111..2222222 100644\n--- a/{path}\n"
        head += "+++ /dev/null\n" if kind == "delete" else f"+++ b/{path}\n"
        out.append(head + "@@ -1 +1 @@\n-a\n+b\n")
    return "".join(out).encode()


def test_permissions_are_the_references_source_folders_never_tests_ci_or_packaging() -> None:
    """An agent must not pass by editing the tests, CI or packaging, or by leaving a script at
    the repository root (a ``bug_reproduction.py`` passed ``edits_permitted`` under SWE-bench's
    rules)."""
    got = permissions_for(
        _patch(
            ("src/flask/app.py", "edit"),
            ("src/flask/json/tag.py", "edit"),
            ("docs/api.rst", "edit"),
        )
    )
    assert got["editable"] == ["docs/**", "src/flask/**"]
    assert "bug_reproduction.py" not in got["editable"]
    for glob in (
        "**/tests/**",
        "**/conftest.py",
        ".github/**",
        "setup.py",
        "pyproject.toml",
        "tox.ini",
    ):
        assert glob in got["forbidden"]


def test_a_root_file_or_packaging_file_the_reference_edits_stays_editable() -> None:
    """The reference itself must stay permitted: a root file it adds is editable by name, and a
    forbidden glob matching a file it edits is dropped (else the gold attempt would be refused)."""
    got = permissions_for(
        _patch(("requests/models.py", "edit"), ("HISTORY.rst", "add"), ("setup.py", "edit"))
    )
    assert got["editable"] == ["HISTORY.rst", "requests/**", "setup.py"]
    assert "setup.py" not in got["forbidden"] and "pyproject.toml" in got["forbidden"]


def test_cohort_tags_read_the_references_shape() -> None:
    tags = cohort_tags(_patch(("a/x.py", "edit"), ("b/y.py", "add"), ("tests/t.py", "edit")), None)
    assert tags == {"change_type": "new-file", "integration_width": "2", "follow_up_horizon": "0"}
    assert cohort_tags(_patch(("x.py", "delete")), None)["change_type"] == "deletion"


def test_the_window_is_the_next_commits_after_the_fix_touching_its_files(
    history: tuple[Path, dict[str, str]],
) -> None:
    repo, c = history
    reference = diff(repo, c["base"], c["sub"], exclude=("tests/",)).encode()
    found = sentinel_window(repo, c["base"], reference, 2)
    assert found.fix == c["sub"]  # the first first-parent commit holding the reference's blobs
    assert found.follow_ups == (c["negative"], c["mul"])  # "docs" touches README.md only
    assert found.branch == git.default_branch(repo)
    assert sentinel_window(repo, c["base"], reference, 0).follow_ups == ()


def test_a_fix_not_in_history_leaves_no_window_and_says_why(
    history: tuple[Path, dict[str, str]],
) -> None:
    """A reference whose post-image no commit holds (a fix merged with other changes) must not
    be replayed against the wrong commit: no window, and the contract says why."""
    repo, c = history
    real = diff(repo, c["base"], c["sub"], exclude=("tests/",))
    reference = real.replace("+    return a - b", "+    return b - a")
    assert reference != real
    found = sentinel_window(repo, c["base"], reference.encode(), 3)
    assert (found.fix, found.follow_ups) == (None, ())
    assert "holds the reference's change" in found.why_none
    # a base that is not on the default branch's history (here: a commit of no branch)
    lone = git.commit_tree(repo, git.tree_of(repo, c["base"]), [], "unrelated")
    assert "not in the history" in sentinel_window(repo, lone, reference.encode(), 3).why_none


def _draft(history: tuple[Path, dict[str, str]], tmp_path: Path, strength: str) -> Candidate:
    repo, c = history
    path = tmp_path / "i.jsonl"
    path.write_text(json.dumps(instance(repo, c)) + "\n")
    (inst,) = read_instances(path)
    made = draft(inst, path, load_env_map(None), repo.parent, strength)  # type: ignore[arg-type]
    assert isinstance(made, Candidate)
    return made


def test_as_swebench_keeps_swebenchs_rules(
    history: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    contract = _draft(history, tmp_path, "swebench").contract
    assert contract["oracles"]["regression"] == "declared"
    assert "sentinel" not in contract and "permissions" not in contract
    assert contract["cohort"]["strength"] == "swebench"
    lifecycle = _draft(history, tmp_path, "lifecycle").contract
    assert lifecycle["oracles"]["regression"] == "base-passing"
    assert lifecycle["sentinel"]["follow_ups"] and lifecycle["permissions"]["editable"]


def test_the_selection_rule_says_which_strength(
    history: tuple[Path, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, c = history
    path = tmp_path / "i.jsonl"
    path.write_text(json.dumps(instance(repo, c, repo="nobody/nothing")) + "\n")  # rejected at once
    out = tmp_path / "sb"
    args = ["tasks", "import", str(path), "--repo-cache", str(repo.parent), "--out"]
    assert main([*args, str(out), "--as", "swebench"]) == 0
    rule = json.loads((out / "taskset.json").read_text())["rule"]
    assert "as SWE-bench judges them (declared PASS_TO_PASS only, no sentinel" in rule
    assert main([*args, str(tmp_path / "x"), "--as", "strict"]) == 2
    err = capsys.readouterr().err
    assert err.endswith(
        "error: --as 'strict' is not an import strength; give --as lifecycle or --as swebench\n"
    )
    assert not (tmp_path / "x").exists()


def test_a_changelog_entry_reworded_as_it_landed_does_not_hide_the_fix(
    history: tuple[Path, dict[str, str]],
) -> None:
    """A pull request's news entry is often edited when it lands: the fix is still found by its
    code files."""
    repo, c = history
    code = diff(repo, c["base"], c["sub"], exclude=("tests/",))
    news = (
        "diff --git a/CHANGES.rst b/CHANGES.rst\nnew file mode 100644\n"
        "index 0000000..1234567\n--- /dev/null\n+++ b/CHANGES.rst\n@@ -0,0 +1 @@\n+- sub\n"
    )
    found = sentinel_window(repo, c["base"], (code + news).encode(), 1)
    assert found.fix == c["sub"]


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **ENV}
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return done.stdout.decode().strip()


def test_a_fix_merged_from_a_side_branch_lands_with_its_merge(tmp_path: Path) -> None:
    """SWE-bench's fixes are pull requests: the commit holding the change sits on a side branch
    and reaches the default branch with its merge; the window starts after the merge, and a
    patch without ``index`` lines (as SWE-bench's sometimes are) is still found."""
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    write(repo, {"calc.py": "def add(a, b):\n    return a + b\n", "other.py": "x = 1\n"})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-qb", "pr")
    write(
        repo,
        {"calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"},
    )
    _git(repo, "commit", "-qam", "sub")
    fix = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "main")
    write(repo, {"other.py": "x = 2\n"})
    _git(repo, "commit", "-qam", "meanwhile on main")
    _git(repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #1", "pr")
    merge = _git(repo, "rev-parse", "HEAD")
    write(
        repo,
        {
            "calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b  # later\n"
        },
    )
    _git(repo, "commit", "-qam", "follow-up")
    follow = _git(repo, "rev-parse", "HEAD")
    patch = _git(repo, "diff", base, fix) + "\n"
    bare = "".join(
        line for line in patch.splitlines(keepends=True) if not line.startswith("index ")
    )
    for reference in (patch, bare):
        found = sentinel_window(repo, base, reference.encode(), 3)
        assert (found.fix, found.landing, found.follow_ups) == (fix, merge, (follow,))
    # the replay starts from the landing, so the real commits between it and the first follow-up
    # (here "meanwhile on main" is before it; any after it) are part of the first step
    table = sentinel_table(found, ["calc.py"])
    assert table["after"] == merge and table["follow_ups"] == [follow]
