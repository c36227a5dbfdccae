"""Checkouts carry the tags of the base's past, so tag-versioned projects get their real version.

Threat: the harness's checkout had no tags, so a project versioned by hatch-vcs/setuptools-scm
built as ``0.1.devN`` and a real task could not resolve its dependencies (issue 9, item 6).
Carrying a tag made after the base would leak the future (SWE-bench issue #465), so only tags on
the base or its ancestors arrive, as lightweight tags (no tag object with a later date).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from _lifecycle_git import ENV
from _task import commit_at
from repogate import environments, git, sandbox
from repogate.contract import EnvironmentRecipe

DATE = "2024-06-01T00:00:00Z"
PYPROJECT = """[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "tagged"
dynamic = ["version"]

[tool.hatch.version]
source = "vcs"

[tool.hatch.build.targets.wheel]
packages = ["src/tagged"]
"""


def _sh(repo: Path, *args: str, date: str = DATE) -> str:
    env = {**os.environ, **ENV, "GIT_COMMITTER_DATE": date}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def _history(root: Path) -> tuple[Path, list[str]]:
    """Three commits: v0.9.0, v1.0.0 (annotated) on the first, base the second, v2.0.0 on the
    third; and v1.0.0-late, annotated on the first after the base's date."""
    repo = root / "src-repo"
    files = {"pyproject.toml": PYPROJECT, "src/tagged/__init__.py": "VALUE = 1\n"}
    shas = [commit_at(repo, files, DATE, "first")]
    shas.append(commit_at(repo, {"src/tagged/__init__.py": "VALUE = 2\n"}, DATE, "base"))
    shas.append(commit_at(repo, {"src/tagged/__init__.py": "VALUE = 3\n"}, DATE, "later"))
    _sh(repo, "tag", "-a", "v1.0.0", "-m", "one", shas[0])
    _sh(repo, "tag", "-a", "v1.0.0-late", "-m", "later", shas[0], date="2025-01-01T00:00:00Z")
    _sh(repo, "tag", "v0.9.0", shas[0])
    _sh(repo, "tag", "v2.0.0", shas[2])
    return repo, shas


def test_tags_on_the_base_and_its_ancestors_arrive_later_ones_do_not(tmp_path: Path) -> None:
    repo, shas = _history(tmp_path)
    ws = tmp_path / "ws"
    git.prepare_workspace(repo, shas[1], ws)
    listing = _sh(
        ws, "for-each-ref", "--format=%(refname) %(objecttype) %(objectname)", "refs/tags"
    )
    assert listing.splitlines() == [
        f"refs/tags/v0.9.0 commit {shas[0]}",
        f"refs/tags/v1.0.0 tag {_sh(repo, 'rev-parse', 'v1.0.0').strip()}",
    ]
    assert _sh(ws, "describe", "--tags", "--long").startswith("v1.0.0-1-g")
    export = tmp_path / "export"
    git.export_tree(ws, shas[1], export)
    assert _sh(export, "tag").split() == ["v0.9.0", "v1.0.0"]
    assert not git.has_object(ws, shas[2])


@pytest.mark.slow
def test_a_hatch_vcs_project_builds_with_the_version_of_its_tags(tmp_path: Path) -> None:
    """A non-editable install from the harness's checkout gets 1.0.1.dev1, not 0.1.dev2."""
    repo, shas = _history(tmp_path)
    ws = tmp_path / "ws"
    git.prepare_workspace(repo, shas[1], ws)
    install = tmp_path / "install"
    git.export_tree(ws, shas[1], install)
    recipe = EnvironmentRecipe(install=("uv pip install .",))
    policy = sandbox.SandboxPolicy(timeout_s=600)
    env = environments.build(
        environments.BuildRequest(
            recipe=recipe, base_checkout=install, cache_dir=tmp_path / "cache", policy=policy
        )
    )
    code = "import importlib.metadata as m, tagged; print(m.version('tagged'), tagged.VALUE)"
    checkout = tmp_path / "checkout"
    git.export_tree(ws, shas[1], checkout)
    done = env.run([*env.python_argv(), "-c", code], checkout, policy)
    version, value = done.stdout.split()
    assert version.startswith("1.0.1.dev1+g"), done.stdout + done.stderr
    assert value == "2"  # the checkout's code, not the installed copy
