"""Environment recipes for candidates: from the env map or derived from the base commit's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from repogate import git
from repogate.contract import EnvironmentRecipe
from repogate.environments.uv import cache_key
from repogate.errors import UserInputError
from repogate.tasks.recipe import EnvMap, MapEntry, derive_recipe, load_env_map, recipe_for


def _repo(path: Path) -> tuple[str, str]:
    git.init_repo(path)
    (path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = []\n')
    (path / "p.py").write_text("")
    first = git.commit_all(path, "first")
    (path / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["blinker"]\n')
    second = git.commit_all(path, "a new dependency")
    return first, second


def test_env_map_recipes_are_keyed_by_the_base_manifests(tmp_path: Path) -> None:
    """Two bases of one version whose dependencies differ must not share one environment.

    flask 2.3's instances share an env-map entry; the later base needs blinker, the earlier does
    not. Keyed by the recipe alone, the later task ran in the earlier base's environment.
    """
    first, second = _repo(tmp_path / "p")
    env_map = EnvMap(
        recipe=(MapEntry(repo="o/p", python="3.11", install=("uv pip install -e .",)),)
    )
    recipes = [
        recipe_for(env_map, "o/p", "1.0", tmp_path / "p", base)[0] for base in (first, second)
    ]
    assert [r["lock_inputs"] for r in recipes] == [["pyproject.toml"], ["pyproject.toml"]]
    keys = []
    for base in (first, second):
        tree = tmp_path / base
        git.export_tree(tmp_path / "p", base, tree)
        recipe = EnvironmentRecipe.model_validate(recipes[0])
        keys.append(
            cache_key(
                recipe,
                ("3.11.7", "CPython", "linux"),
                {"pyproject.toml": (tree / "pyproject.toml").read_text()},
            )
        )
    assert keys[0] != keys[1]


def test_derived_recipe_dates_pins_by_the_last_manifest_change(tmp_path: Path) -> None:
    _first, second = _repo(tmp_path / "p")
    recipe = derive_recipe(tmp_path / "p", second)
    (command,) = recipe["install"]
    assert command.startswith("uv pip install --exclude-newer 2000-01-02 ")  # harness commit dates
    assert "-e '.'" in command and command.endswith(" pytest")
    assert recipe["lock_inputs"] == ["pyproject.toml"]
    # the newest CPython released by 2000: none, so the oldest the test sessions' guard runs on
    # (3.8, PEP 578's audit hook; a derived 3.6 built for minutes, then every run failed)
    assert recipe["python"] == "3.8"


def test_an_env_map_with_two_problems_says_both_with_the_hint(tmp_path: Path) -> None:
    """The env map said only its first problem and "(and 1 more)", without pydantic's names of
    valid keys: a misspelt key beside a missing one hid what to write."""
    path = tmp_path / "env-map.toml"
    path.write_text('[[recipe]]\nrepo = "o/n"\npyhton = "3.9"\ninstall = ["pip install -e ."]\n')
    with pytest.raises(UserInputError) as info:
        load_env_map(path)
    message = str(info.value)
    assert message.startswith(
        f"env map {path}: 2 problems: key 'recipe.0.python': Field required; "
    )
    assert "unknown key 'recipe.0.pyhton' (did you mean 'python'? valid keys here: " in message


def test_an_env_map_service_boolean_written_as_a_string_is_refused(tmp_path: Path) -> None:
    """An env map entry's ``[[recipe.services]] tls = "yes"`` was read as true."""
    path = tmp_path / "env-map.toml"
    path.write_text(
        '[[recipe]]\nrepo = "o/n"\npython = "3.9"\ninstall = ["pip install -e ."]\n'
        '[[recipe.services]]\nname = "s"\nstart = "serve"\nready = "true"\nport = 8443\n'
        'tls = "yes"\n'
    )
    with pytest.raises(UserInputError) as info:
        load_env_map(path)
    assert str(info.value).startswith(
        f"env map {path}: key 'recipe.0.services.0.tls': \"yes\" is not a boolean (use true or "
        "false); "
    )
