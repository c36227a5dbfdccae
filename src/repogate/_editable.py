"""Redirect a cached venv's installs of the build checkout to each run's own checkout.

``pip install -e .``, ``uv sync`` and ``pip install .`` leave the venv importing the project from
the checkout it was built in (or from a copy of it). A cached venv serves many checkouts, so
:func:`detach` removes the hooks that point into the build checkout and returns the folders they
named, relative to it; the caller puts ``<checkout>/<root>`` on ``PYTHONPATH`` for each run, where
it comes before site-packages. Hooks understood:

- path lines in ``.pth`` files (hatchling, flit, setuptools' lenient mode, ``easy-install.pth``);
- setuptools' ``__editable___<name>_finder.py`` modules (their ``MAPPING`` and ``NAMESPACES``), and
  the ``.pth`` lines that import them;
- a non-editable install whose ``direct_url.json`` names the checkout: its copy stays, and the
  checkout's ``src`` (or top) folder shadows it.

Anything else that still names the build checkout afterwards is an error, never a silent run of the
base commit's code.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

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
                if path is not None and len(path.parents) > depth - 1:
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


def _copied_roots(site: Path, base: Path) -> list[Path]:
    found: list[Path] = []
    for direct in site.glob("*.dist-info/direct_url.json"):
        info = json.loads(_text(site, str(direct.relative_to(site))) or "{}")
        editable = bool(info.get("dir_info", {}).get("editable"))
        if info.get("url") == base.as_uri() and not editable:
            found.append(base / "src" if (base / "src").is_dir() else base)
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
