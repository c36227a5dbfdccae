"""Every import statement of a source tree, read with :mod:`ast` (nothing is imported).

Shared by the layering tests (no reach-in, no loop) and the public-face tests (``__all__``).
Function-level and ``TYPE_CHECKING`` imports count like any other: a loop that only type
checking closes is still a loop a reader has to follow.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
"""The folder holding the ``repogate`` package's source."""


@dataclass(frozen=True)
class Import:
    """One imported module, or one name taken from a module.

    Attributes:
        importer: the dotted name of the importing module (a package by its own name).
        module: the dotted module the statement names (``from X import y``: ``X``).
        name: the name taken from ``module`` (``y``), or None for ``import X``.
        where: ``path:line`` of the statement, relative to the source folder.
    """

    importer: str
    module: str
    name: str | None
    where: str


def modules(src: Path = SRC) -> dict[str, Path]:
    """Return every module under ``src``: dotted name -> file (a package by its ``__init__.py``).

    Only importable ones: every folder above the file holds an ``__init__.py`` (the scenario
    repositories shipped as data under ``tasks/scenarios/`` are not modules of the package).
    """
    found: dict[str, Path] = {}
    for path in sorted(src.rglob("*.py")):
        relative = path.relative_to(src)
        if not all((src / folder / "__init__.py").is_file() for folder in relative.parents[:-1]):
            continue
        parts = list(relative.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def packages(src: Path = SRC) -> list[str]:
    """Return the dotted names of every package under ``src`` (folders with ``__init__.py``)."""
    return [name for name, path in modules(src).items() if path.name == "__init__.py"]


def imports(src: Path = SRC) -> Iterator[Import]:
    """Yield every import in every module under ``src``, relative imports resolved."""
    for importer, path in modules(src).items():
        tree = ast.parse(path.read_text(), str(path))
        where = str(path.relative_to(src))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(importer, alias.name, None, f"{where}:{node.lineno}")
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:
                    base = importer.split(".")
                    if path.name != "__init__.py":
                        base = base[:-1]
                    base = base[: len(base) - node.level + 1]
                    module = ".".join([*base, module] if module else base)
                for alias in node.names:
                    yield Import(importer, module, alias.name, f"{where}:{node.lineno}")


def target(imp: Import, known: Mapping[str, Path]) -> str:
    """The module an import loads: ``X.y`` when ``from X import y`` names a submodule, else ``X``."""
    if imp.name is not None and f"{imp.module}.{imp.name}" in known:
        return f"{imp.module}.{imp.name}"
    return imp.module


def inside(module: str, package: str) -> bool:
    """True when ``module`` is ``package`` or one of its submodules, at any depth."""
    return module == package or module.startswith(package + ".")


def private_reach_ins(src: Path = SRC, top: str = "repogate") -> list[str]:
    """Imports of another package's private module (``_name``), as ``where: importer -> module``.

    A module is private to the package holding it: ``a.b._c`` (and ``a.b._c.d``) may be
    imported from ``a.b`` and below only. Dunder names (``__init__``) are not private.
    """
    known = modules(src)
    found: list[str] = []
    for imp in imports(src):
        loaded = target(imp, known)
        if not inside(loaded, top):
            continue
        parts = loaded.split(".")
        for i, part in enumerate(parts):
            if part.startswith("_") and not part.startswith("__"):
                owner = ".".join(parts[:i])
                entry = f"{imp.where}: {imp.importer} -> {loaded}"
                if not inside(imp.importer, owner) and entry not in found:
                    found.append(entry)
                break
    return found


def top_level_graph(src: Path = SRC, top: str = "repogate") -> dict[str, dict[str, str]]:
    """The import graph between ``top``'s direct children (modules and packages).

    Returns: child -> {child it imports: ``path:line`` of one such import}. The package's own
    ``__init__`` (the facade above everything) is left out.
    """
    known = modules(src)
    graph: dict[str, dict[str, str]] = {}
    depth = top.count(".") + 1
    for imp in imports(src):
        loaded = target(imp, known)
        if imp.importer == top or not inside(loaded, top) or loaded == top:
            continue
        here = imp.importer.split(".")[depth]
        there = loaded.split(".")[depth]
        if here != there:
            graph.setdefault(here, {}).setdefault(there, imp.where)
    return graph


def cycles(graph: Mapping[str, Mapping[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def attribute_uses(src: Path = SRC) -> Iterator[Import]:
    """Yield every ``alias.name`` read on a module bound by an import (``from repogate import git``
    then ``git.run``), as an :class:`Import` of ``name`` from that module."""
    known = modules(src)
    for importer, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        where = str(path.relative_to(src))
        bound: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                bound.update({a.asname: a.name for a in node.names if a.asname and a.name in known})
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if f"{node.module}.{alias.name}" in known:
                        bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
            ):
                module = bound[node.value.id]
                yield Import(importer, module, node.attr, f"{where}:{node.lineno}")
