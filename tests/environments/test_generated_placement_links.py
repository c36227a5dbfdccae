"""The build's generated modules placed into a graded tree never through a link the tree holds.

Red team rt31: :meth:`VenvRecord.place_generated` (setuptools-scm's ``_version.py`` written into
every tree the environment runs in) checked the tree with ``Path.exists``/``is_dir``, which
follow links, and wrote with folders made on the way, which *replaces* a linked folder by a new
one: a tree whose ``src/tinypkg`` was a link to a folder outside it had that link probed through
and then swapped for a folder holding only the generated file (the harness rewrote the tree it
grades, after following a path the tree planted). A link on the way now leaves the file
unplaced and the tree as it is. The environment is a real uv build whose install commands write
the generated module, as setuptools-scm's ``write_to`` does.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from _venv_record import TINY_PYPROJECT
from repogate.contract import EnvironmentRecipe
from repogate.environments.uv import UvEnvironment, build_environment
from repogate.sandbox import SandboxPolicy

pytestmark = pytest.mark.slow

GENERATED = "src/tinypkg/_version.py"
RECIPE = EnvironmentRecipe(
    python="3.11",
    install=(
        "uv pip install -e .",
        f"sh -c 'echo version = 1 > {GENERATED}'",
    ),
)


def _project(root: Path) -> Path:
    for rel, text in {
        "pyproject.toml": TINY_PYPROJECT,
        "src/tinypkg/__init__.py": "X = 1\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> UvEnvironment:
    base = _project(tmp_path_factory.mktemp("base"))
    cache = tmp_path_factory.mktemp("cache")
    return build_environment(RECIPE, base, cache, SandboxPolicy(timeout_s=600))


def test_the_build_keeps_the_generated_module(env: UvEnvironment, tmp_path: Path) -> None:
    """The premise: the module is kept, and placed into a plain tree that lacks it."""
    assert [g.path for g in env.generated] == [GENERATED]
    tree = _project(tmp_path / "tree")
    assert env.place_generated(tree) == (GENERATED,)
    assert (tree / GENERATED).read_text() == "version = 1\n"


@pytest.mark.parametrize(
    ("link", "target"),
    [
        ("src/tinypkg", "outside/tinypkg"),  # the package folder is a link out of the tree
        ("src", "outside"),  # a folder higher up is
        ("src/tinypkg", "outside/holds"),  # the link's target holds the file: never probed
    ],
)
def test_a_link_on_the_way_is_neither_followed_nor_replaced(
    env: UvEnvironment, tmp_path: Path, link: str, target: str
) -> None:
    """The tree keeps its link, nothing is written through it, the outside is untouched."""
    tree = _project(tmp_path / "tree")
    outside = tmp_path / target
    outside.mkdir(parents=True)
    (outside / "__init__.py").write_text("X = 2\n")
    if target.endswith("holds"):
        (outside / "_version.py").write_text("version = 'outside'\n")
    if link == "src":
        (outside / "tinypkg").mkdir()
    before = sorted(p.name for p in outside.rglob("*"))
    moved = tree / link
    shutil.rmtree(moved)
    moved.symlink_to(outside)
    assert env.place_generated(tree) == ()
    assert moved.is_symlink()
    assert sorted(p.name for p in outside.rglob("*")) == before


def test_a_link_at_the_name_is_left_as_it_is(env: UvEnvironment, tmp_path: Path) -> None:
    """Held before: the tree's own entry at the name (here a dangling link) is not replaced."""
    tree = _project(tmp_path / "tree")
    (tree / GENERATED).unlink(missing_ok=True)
    (tree / GENERATED).symlink_to(tmp_path / "nowhere.py")
    assert env.place_generated(tree) == ()
    assert (tree / GENERATED).is_symlink() and not (tmp_path / "nowhere.py").exists()
