"""The follow-up requirements a base's environment does not meet, read without running code."""

from __future__ import annotations

from pathlib import Path

import pytest

from _lifecycle_git import commit, new_repo
from repogate.gates.sentinel._requirements import declared, unmet


def test_names_are_compared_normalized_and_markers_use_the_environments_python() -> None:
    got = unmet(
        [
            "Typing_Extensions>=4.6",  # installed as typing-extensions 4.7.1: met
            "tomli>=1; python_version < '3.11'",  # applies on 3.9
            "exceptiongroup; python_full_version >= '3.12.0'",  # does not apply on 3.9
            "not a requirement !!",  # unparsable: skipped
            "pluggy==1.3.*",  # met
        ],
        ["typing-extensions==4.7.1", "pluggy==1.3.0", "-e file:///srv/checkout"],
        "3.9.18",
    )
    assert got == ("tomli>=1 (not installed)",)


def test_a_version_freeze_cannot_read_satisfies_nothing() -> None:
    assert unmet(["pkg>=1"], ["pkg==not-a-version"], "3.11.4") == (
        "pkg>=1 (has pkg not-a-version)",
    )


def test_declared_reads_both_files_and_survives_broken_ones(tmp_path: Path) -> None:
    repo, _base = new_repo(tmp_path / "r", {"m.py": "X = 1\n"})
    good = commit(
        repo,
        {
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["attrs>=23"]\n',
            "setup.cfg": "[options]\ninstall_requires =\n    pluggy>=1.4\n    # a comment\n",
        },
        "good",
    )
    assert declared(repo, good) == ("attrs>=23", "pluggy>=1.4")
    broken = commit(repo, {"pyproject.toml": "[project\n", "setup.cfg": "no section\n"}, "bad")
    assert declared(repo, broken) == ()


@pytest.mark.parametrize(
    "files",
    [
        {"pyproject.toml": 'project = "m"\n'},  # [project] not a table
        {"pyproject.toml": '[project]\ndependencies = "attrs"\n'},  # not a list
        {"pyproject.toml": "x = " + "[" * 5000 + "]" * 5000 + "\n"},  # nesting past the stack
        {"setup.cfg": "[options]\ninstall_requires = %(x)s\n"},  # interpolation is not read
    ],
    ids=["project-not-a-table", "dependencies-not-a-list", "deep-nesting", "interpolation"],
)
def test_a_hostile_follow_up_declares_nothing_and_raises_nothing(
    tmp_path: Path, files: dict[str, str]
) -> None:
    """Red team: a follow-up's packaging files crashed gate S (AttributeError, RecursionError)."""
    repo, _base = new_repo(tmp_path / "r", {"m.py": "X = 1\n"})
    sha = commit(repo, files, "hostile")
    got = declared(repo, sha)
    assert got in ((), ("%(x)s",))


def test_a_marker_that_cannot_be_compared_is_not_a_requirement_unmet() -> None:
    """``python_version ~= '3'`` raises packaging's UndefinedComparison; the red team's crash."""
    assert unmet(["tomli; python_version ~= '3'", "six>=2"], ["six==1.0"], "3.9.18") == (
        "six>=2 (has six 1.0)",
    )
