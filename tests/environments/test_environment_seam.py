"""The environment seam: the backend map, the one-line error, digests kept, nothing reaching in."""

from __future__ import annotations

import ast
import hashlib
import json
import sys
from pathlib import Path

import pytest

from _venv_record import uv_record
from repogate import environments
from repogate._version import __version__
from repogate.contract import EnvironmentRecipe, load_contract
from repogate.environments import (
    BACKENDS,
    as_record,
    backend,
    backend_of,
)
from repogate.environments.uv import UvEnvironment, cache_key
from repogate.errors import ContractError
from repogate.sandbox import SandboxPolicy

SRC = Path(__file__).resolve().parents[2] / "src" / "repogate"
PACKAGE = SRC / "environments"
UV_FIELDS = frozenset({"python", "bin_dir", "venv", "import_roots"})
"""The uv record's own fields: only the uv backend reads them."""

CONTRACT = """
id = "t1"
repo = "repo"
base_commit = "{sha}"
[requirement]
statement = "parse bounded config strings"
[environment]
python = "3.12"
{backend}
"""


def test_the_map_resolves_uv_first() -> None:
    assert next(iter(BACKENDS)) == "uv"
    assert backend("uv") is UvEnvironment
    assert UvEnvironment.backend == "uv"


@pytest.mark.parametrize("name", ["docker", "UV", ""])
def test_an_unknown_backend_is_a_one_line_error_naming_the_choices(name: str) -> None:
    with pytest.raises(ContractError) as info:
        backend(name)
    assert str(info.value) == f"unknown environment backend {name!r}; use one of uv, image"
    assert "\n" not in str(info.value)


def test_a_recipe_naming_an_unknown_backend_is_refused_at_load(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(CONTRACT.format(sha="a" * 40, backend='backend = "docker"'))
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert "environment.backend" in str(info.value) and "'uv'" in str(info.value)


def test_the_default_backend_leaves_the_cache_key_as_it_was() -> None:
    """The key of a uv recipe is the one made before recipes named a backend."""
    recipe = EnvironmentRecipe(python="3.12", install=("uv pip install -e .",))
    before = recipe.model_dump(mode="json")
    assert "backend" not in before and recipe.backend == "uv"
    interpreter = ("3.12.1", "CPython", "linux-x86_64")
    payload = {  # cache_key's formula, without the backend
        "layout": 3,
        "evaluator": __version__,
        "recipe": before,
        "python": interpreter,
        "locks": {"uv.lock": "x"},
        "exclude_newer": None,
    }
    expected = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    assert cache_key(recipe, interpreter, {"uv.lock": "x"}) == expected


def test_the_default_backend_leaves_the_contract_digest_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "c.toml").write_text(CONTRACT.format(sha="a" * 40, backend=""))
    (tmp_path / "b" / "c.toml").write_text(CONTRACT.format(sha="a" * 40, backend='backend = "uv"'))
    implicit = load_contract(tmp_path / "a" / "c.toml")
    explicit = load_contract(tmp_path / "b" / "c.toml")
    dumped = implicit.model_dump(mode="json")
    assert "backend" not in dumped["environment"]
    assert "image" not in dumped["environment"]  # the image backend's, left out while unset
    for key in ("cost_budget_usd", "sample_budget"):
        del dumped["permissions"][key]
    canonical = json.dumps(
        {"contract": dumped, "evaluator": __version__}, sort_keys=True, separators=(",", ":")
    )
    assert implicit.policy_digest() == hashlib.sha256(canonical.encode()).hexdigest()
    assert explicit.policy_digest() == implicit.policy_digest()


def test_a_record_stored_before_backends_reads_as_uv(tmp_path: Path) -> None:
    """The stored JSON keeps its shape (no backend key) and reads back as the uv record."""
    env = uv_record(tmp_path / "venv", import_roots=("src",))
    stored = env.describe()
    assert "backend" not in stored
    assert set(UV_FIELDS) <= set(stored)
    assert backend_of(stored) == "uv"
    assert backend_of(env) == "uv"
    assert backend_of({"backend": "image"}) == "image"
    again = UvEnvironment.model_validate(stored)
    assert again == env
    assert as_record(again) is again


def test_as_record_refuses_what_no_backend_stores() -> None:
    class Impostor:
        backend = "uv"

    with pytest.raises(TypeError, match="Impostor is no environment backend's record"):
        as_record(Impostor())  # type: ignore[arg-type]


def test_a_command_runs_in_the_uv_environment_on_the_checkout(tmp_path: Path) -> None:
    """run: the venv's interpreter, the checkout's import roots, the recipe's conditions."""
    venv = Path(sys.prefix)
    env = uv_record(venv, import_roots=("src",), timezone="Asia/Tokyo", locale="C.UTF-8")
    checkout = tmp_path / "checkout"
    (checkout / "src" / "mod").mkdir(parents=True)
    (checkout / "src" / "mod" / "__init__.py").write_text("WHERE = 'checkout'\n")
    code = (
        "import os, sys, mod; print(mod.WHERE, os.environ['TZ'], os.environ['EXTRA'], sys.prefix)"
    )
    policy = SandboxPolicy(timeout_s=60, env={"EXTRA": "granted"})
    result = env.run([*env.python_argv(), "-c", code], checkout, policy)
    assert result.ok, result.stderr
    assert result.stdout.split() == ["checkout", "Asia/Tokyo", "granted", str(venv)]
    assert env.checkout_roots() == ("src",)


def test_a_granted_variable_wins_over_the_environments(tmp_path: Path) -> None:
    env = uv_record(tmp_path / "venv", timezone="Asia/Tokyo")
    grant = env.grant(tmp_path, SandboxPolicy(env={"TZ": "UTC"}, network=True))
    assert grant.env["TZ"] == "UTC"
    assert grant.env["PATH"].split(":")[0] == str(tmp_path / "venv" / "bin")
    assert grant.network is True
    assert env.variables(tmp_path)["TZ"] == "Asia/Tokyo"


def _outside_modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if not p.is_relative_to(PACKAGE))


def _reach_ins(text: str, name: str) -> list[str]:
    """What module ``name`` (its source ``text``) does that only the environments package may."""
    found: list[str] = []
    for node in ast.walk(ast.parse(text)):
        line = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "repogate.environment" or node.module.startswith(
                "repogate.environments."
            ):
                found.append(f"{line} imports {node.module}")
            if node.module == "repogate.environments":
                found += [
                    f"{line} imports {a.name} from repogate.environments"
                    for a in node.names
                    if a.name not in environments.__all__
                ]
        elif isinstance(node, ast.Import):
            found += [
                f"{line} imports {a.name}"
                for a in node.names
                if a.name.startswith("repogate.environments.")
            ]
        elif isinstance(node, ast.Attribute) and node.attr in UV_FIELDS:
            receiver = ast.unparse(node.value)
            if node.attr != "python" or ("env" in receiver and "toolchain" not in receiver):
                found.append(f"{line} reads {receiver}.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in ("activate", "BuiltEnvironment"):
            found.append(f"{line} names {node.id}")
    return found


def test_no_module_outside_the_package_reaches_into_a_backend() -> None:
    """Only ``repogate.environments`` imports a backend or reads the uv record's own fields."""
    modules = _outside_modules()
    assert len(modules) > 100  # the walk sees the source tree
    found = [
        hit
        for path in modules
        for hit in _reach_ins(path.read_text(encoding="utf-8"), str(path.relative_to(SRC)))
    ]
    assert found == []


def test_the_reach_in_walk_finds_each_kind() -> None:
    """The walk above is not blind: each kind of reach-in is found in a planted module."""
    planted = (
        "from repogate.environments.uv import UvEnvironment\n"
        "import repogate.environments._editable\n"
        "from repogate.environments import Environment, _record\n"
        "def f(env, progress, recipe):\n"
        "    activate(env, None)\n"
        "    return (env.bin_dir, progress.workspace_env.python, env.toolchain.python,\n"
        "            env.import_roots, env.venv, recipe.python)\n"
    )
    found = sorted(hit.split(" ", 1)[1] for hit in _reach_ins(planted, "planted.py"))
    assert found == [
        "imports _record from repogate.environments",
        "imports repogate.environments._editable",
        "imports repogate.environments.uv",
        "names activate",
        "reads env.bin_dir",
        "reads env.import_roots",
        "reads env.venv",
        "reads progress.workspace_env.python",
    ]
