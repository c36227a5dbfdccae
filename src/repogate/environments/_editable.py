"""Redirect a cached venv's installs of the build checkout to each run's own checkout.

``pip install -e .``, ``uv sync`` and ``pip install .`` leave the venv importing the project from
the checkout it was built in (or from a copy of it). A cached venv serves many checkouts, so
:func:`detach` removes the hooks that point into the build checkout and returns the folders they
named, relative to it; the caller puts ``<checkout>/<root>`` on ``PYTHONPATH`` for each run, where
it comes before site-packages. Hooks understood:

- path lines in ``.pth`` files (hatchling, flit, setuptools' lenient mode, ``easy-install.pth``);
- setuptools' ``__editable___<name>_finder.py`` modules (their ``MAPPING`` and ``NAMESPACES``), and
  the ``.pth`` lines that import them;
- a non-editable install whose ``direct_url.json`` names the checkout (``pip install .``): its
  copy in site-packages was built from the base, so the tests would exercise the base's code
  whatever the candidate changed. Each top-level module its ``RECORD`` lists is found in the
  checkout by name (src layout, flat layout, or a folder such as hatch's ``packages =
  ["lib/calc"]`` or setuptools' ``package_dir = {"" = "lib"}``); the copy is removed and the
  folder holding the checkout's module becomes an import root.

A module the checkout does not hold under its own name (``package_dir = {calc = "source"}``,
installed as a copy or through setuptools' editable finder) cannot be served from each candidate's
checkout, and anything that still names the build checkout afterwards: both are errors, never a
silent run of the base commit's code.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import shutil
from pathlib import Path, PurePosixPath

from repogate._files import PlantedLinkError, read_bytes_nofollow, write_bytes_nofollow
from repogate.errors import EnvironmentBuildError


def _under(text: str, base: Path) -> Path | None:
    text = text.strip()
    if not text or not Path(text).is_absolute():
        return None
    try:
        path = Path(text).resolve()
    except (OSError, ValueError):
        return None
    return path if path.is_relative_to(base) else None


def _text(site: Path, relative: str) -> str:
    """Return a file of ``site`` as text, never following a link the install commands planted.

    Raises:
        EnvironmentBuildError: the file is a symbolic link.
    """
    try:
        data = read_bytes_nofollow(site, relative)
    except PlantedLinkError:
        raise EnvironmentBuildError(
            f"{relative} in the environment is a symbolic link (not followed)"
        ) from None
    return (data or b"").decode("utf-8", "replace")


def _finder_roots(finder: Path, base: Path) -> list[Path]:
    """Return the import roots a setuptools editable finder names in ``base``.

    A ``MAPPING`` entry maps a package's dotted name to its folder; the root is that folder's
    ancestor one level per name component (``sympy.codegen`` at ``.../sympy/codegen`` gives
    ``...``). Taking every folder's parent put ``sympy/`` on the path for a listed subpackage,
    where ``sympy/codegen/ast.py`` shadowed the standard library's ``ast``.
    """
    found: list[Path] = []
    for node in ast.parse(_text(finder.parent, finder.name)).body:
        target: ast.expr
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if not isinstance(target, ast.Name) or target.id not in ("MAPPING", "NAMESPACES"):
            continue
        for name, entry in ast.literal_eval(value).items():
            depth = str(name).count(".") + 1  # "a.b" -> .../a/b: its root is two folders up
            for text in entry if isinstance(entry, list) else [entry]:
                path = _under(str(text), base)
                if path is None:
                    continue
                if path.name != str(name).rpartition(".")[2]:
                    raise EnvironmentBuildError(
                        f"the editable install maps module {name} to {path}, a folder of another "
                        "name, which no import root can serve from a candidate's checkout; "
                        "name the folder after the package or install it from the checkout's tree"
                    )
                if len(path.parents) > depth - 1:
                    found.append(path.parents[depth - 1])
    return found


def _strip_pth(pth: Path, base: Path, finders: list[str], roots: set[Path]) -> None:
    lines = _text(pth.parent, pth.name).splitlines()
    keep: list[str] = []
    for line in lines:
        hit = None if line.startswith(("import ", "#")) else _under(line, base)
        if hit is not None:
            roots.add(hit)
        elif not any(name in line for name in finders):
            keep.append(line)
    if keep == lines:
        return
    if any(line.strip() for line in keep):
        write_bytes_nofollow(pth.parent, pth.name, ("\n".join(keep) + "\n").encode())
    else:
        pth.unlink()


_SKIP_DIRS = frozenset({".git", ".hg", ".tox", ".nox", ".venv", "venv", "build", "dist", ".eggs"})


def _record_tops(dist_info: Path) -> dict[str, list[str]]:
    """Return the top-level modules a ``RECORD`` installs, each with its files (posix paths)."""
    tops: dict[str, list[str]] = {}
    try:
        rows = list(csv.reader((dist_info / "RECORD").read_text(encoding="utf-8").splitlines()))
    except OSError:
        return tops
    for row in rows:
        parts = PurePosixPath(row[0]).parts if row else ()
        if not parts or parts[0] == ".." or parts[0].endswith((".dist-info", ".data")):
            continue
        if parts[0] == "__pycache__" or "__pycache__" in parts or parts[-1].endswith(".pth"):
            continue
        tops.setdefault(parts[0], []).append(row[0])
    return tops


def _root_in(base: Path, top: str, files: list[str]) -> Path | None:
    """Return the checkout folder holding ``top`` with the most of ``files``, shallowest first."""
    best: tuple[int, int, Path] | None = None
    for folder, dirs, names in os.walk(base):
        dirs[:] = sorted(
            d for d in dirs if d not in _SKIP_DIRS and not d.endswith((".egg-info", ".dist-info"))
        )
        here = Path(folder)
        if top not in dirs and top not in names:
            continue
        score = sum((here / f).exists() for f in files)
        depth = len(here.relative_to(base).parts)
        if score and (best is None or (-score, depth) < (-best[0], best[1])):
            best = (score, depth, here)
    return None if best is None else best[2]


def _copied_roots(site: Path, base: Path) -> list[Path]:
    """Remove the copies a non-editable install of ``base`` left in ``site``; return their roots.

    Raises:
        EnvironmentBuildError: the checkout holds no module of a copied one's name.
    """
    found: list[Path] = []
    for direct in site.glob("*.dist-info/direct_url.json"):
        info = json.loads(_text(site, str(direct.relative_to(site))) or "{}")
        editable = bool(info.get("dir_info", {}).get("editable"))
        if info.get("url") != base.as_uri() or editable:
            continue
        for top, files in _record_tops(direct.parent).items():
            root = _root_in(base, top, files)
            if root is None:
                raise EnvironmentBuildError(
                    f"the tests would import {top} from {site / top}, a copy built from the base "
                    f"checkout, and the checkout holds no {top} to import instead (a package-dir "
                    "mapping that renames it?); install the project editable (-e .) or lay it "
                    "out under its own name"
                )
            found.append(root)
            copy = site / top
            if copy.is_dir() and not copy.is_symlink():
                shutil.rmtree(copy)
            else:
                copy.unlink(missing_ok=True)
    return found


def detach(venv: Path, checkout: Path) -> tuple[str, ...]:
    """Remove the venv's hooks into ``checkout``; return the folders they named, relative.

    Args:
        venv: the virtual environment (its ``lib/python*/site-packages`` are edited in place).
        checkout: the checkout the install commands ran in.

    Returns:
        Sorted relative folders (``.`` for the checkout's top), to put on ``PYTHONPATH``.

    Raises:
        EnvironmentBuildError: a ``.pth`` or ``__editable__`` file still names ``checkout``.
    """
    base = checkout.resolve()
    roots: set[Path] = set()
    for site in sorted(venv.glob("lib/python*/site-packages")):
        finders: list[str] = []
        for finder in site.glob("__editable___*_finder.py"):
            found = _finder_roots(finder, base)
            if found:
                roots.update(found)
                finders.append(finder.stem)
                finder.unlink()
        for pth in site.glob("*.pth"):
            _strip_pth(pth, base, finders, roots)
        roots.update(_copied_roots(site, base))
        for leftover in [*site.glob("*.pth"), *site.glob("__editable__*")]:
            if not leftover.is_dir() and str(base) in _text(site, leftover.name):
                raise EnvironmentBuildError(
                    f"{leftover.name} still points the environment at the build checkout; "
                    "this kind of editable install is not supported"
                )
    return tuple(sorted(str(r.relative_to(base)) for r in roots))
