"""The public surface is what `__all__` names, and every name there resolves.

Every package of ``repogate`` (found in ``src/``, so a new one is covered when it lands) declares
its public face in ``__init__.__all__``: objects it re-exports, or the public modules it holds. Code
outside a package takes only names its ``__all__`` gives, whether imported (``from repogate.git
import X``, ``import repogate.gates.verification``) or read off the package (``git.X``). As httpx
tests its own ``__all__``.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection
from functools import cache
from pathlib import Path

import pytest

from _src_imports import SRC, Import, attribute_uses, imports, inside, packages

PACKAGES = [p for p in packages() if p != "repogate"]


def _face(package: str) -> list[str]:
    loaded = importlib.import_module(package)
    names = getattr(loaded, "__all__", None)
    assert isinstance(names, list | tuple), f"{package} has no __all__"
    return list(names)


@pytest.mark.parametrize("module", ["repogate", "repogate.gates.authority", *PACKAGES])
def test_every_exported_name_resolves(module: str) -> None:
    names = _face(module)
    assert names, module
    loaded = importlib.import_module(module)
    missing = []
    for name in names:
        if not hasattr(loaded, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ModuleNotFoundError:
                missing.append(name)
    assert missing == []
    assert [n for n in names if n.startswith("_") and n != "__version__"] == []
    assert len(set(names)) == len(names)


@cache
def _uses(src: Path) -> tuple[Import, ...]:
    return (*imports(src), *attribute_uses(src))


def _outside_uses(package: str, face: Collection[str], src: Path = SRC) -> list[str]:
    """``where: importer takes name`` for each name taken from ``package`` by code outside it."""
    found = []
    for imp in _uses(src):
        if inside(imp.importer, package) or not inside(imp.module, package):
            continue
        # package.sub[.deeper]: the package gives "sub"
        deeper = imp.module[len(package) + 1 :].split(".")[0]
        name = imp.name if imp.module == package else deeper
        if name is not None and name not in face:
            found.append(f"{imp.where}: {imp.importer} takes {package}.{name}")
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_code_outside_a_package_takes_only_names_its_all_gives(package: str) -> None:
    assert _outside_uses(package, _face(package)) == []


def test_the_rule_finds_names_outside_the_face(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/low/__init__.py": "from pkg.low._impl import given, kept\n",
        "pkg/low/_impl.py": "given = kept = 1\n",
        "pkg/low/tool.py": "from pkg.low._impl import kept\n",
        "pkg/user.py": (
            "from pkg.low import given, kept\n"
            "from pkg.low._impl import given as again\n"
            "import pkg.low.tool\n"
            "from pkg import low\n"
            "low.given, low.kept\n"
        ),
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert _outside_uses("pkg.low", ["given"], tmp_path) == [
        "pkg/user.py:1: pkg.user takes pkg.low.kept",
        "pkg/user.py:2: pkg.user takes pkg.low._impl",
        "pkg/user.py:3: pkg.user takes pkg.low.tool",
        "pkg/user.py:5: pkg.user takes pkg.low.kept",
    ]


def test_the_top_level_api() -> None:
    import repogate

    assert sorted(repogate.__all__) == [
        "CandidateState",
        "Check",
        "Decision",
        "Evidence",
        "Profile",
        "Receipt",
        "TransitionContract",
        "__version__",
        "decide",
        "load_contract",
        "patch_digest",
    ]
