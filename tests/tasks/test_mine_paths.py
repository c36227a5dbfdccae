"""``tasks mine --paths`` reads globs in the contracts' dialect (:mod:`repogate.globs`).

``*`` stays within one folder, ``**`` crosses folders, and a folder names every file below it:
the same pattern selects the same paths in ``--paths`` as in a contract's ``permissions``.
"""

from __future__ import annotations

from pathlib import Path

from repogate import git
from repogate.globs import matches
from repogate.tasks.mine import select_commits


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    return git.commit_all(repo, message)


def _history(repo: Path) -> dict[str, str]:
    git.init_repo(repo)
    return {
        "base": _commit(repo, {"src/top.py": "x = 1\n", "tests/test_top.py": "\n"}, "base"),
        "deep": _commit(repo, {"src/a/b.py": "y = 1\n", "tests/test_b.py": "\n"}, "deep"),
        "top": _commit(repo, {"src/top.py": "x = 2\n", "tests/test_top.py": "#\n"}, "top"),
        "ci": _commit(
            repo, {"src/top.py": "x = 3\n", ".github/workflows/ci.yml": "on: push\n"}, "ci"
        ),
    }


def test_paths_globs_are_the_contract_dialect(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    commits = _history(repo)
    span = f"{commits['base']}..HEAD"

    def chosen(*globs: str) -> list[str]:
        by_commit = {v: k for k, v in commits.items()}
        return [by_commit[c] for c, _, _ in select_commits(repo, span, globs, None)]

    assert not matches("src/a/b.py", "src/*.py")
    assert chosen("src/*.py") == ["top"]
    assert chosen("src/**/*.py") == ["deep", "top"]
    assert chosen("src/a") == ["deep"]
    assert chosen("*test_b.py") == []
    assert chosen("**/test_b.py") == ["deep"]
