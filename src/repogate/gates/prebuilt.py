"""Edits the graded trees would not run: sources of extension modules built once, at the base.

An environment built with an in-place build (astropy's ``build_ext --inplace``, through an
editable install) keeps the compiled extension modules it wrote below the import roots and
places them into every graded tree (:class:`repogate.environments._venv.GeneratedFile`): a tree
written afresh from git holds their sources only. The environment is built once, at the base, so
those modules are the **base's** build whatever the candidate changed. An edit to what they are
built from is not what the tests run: red team rt33 changed ``_speed.c`` to answer 4 and its
test, run with the base's ``_speed.*.so``, passed (an accepted change the tests never ran). Such
an edit fails ``edits_permitted`` instead, naming the path and the build it bypasses.

What counts as what they are built from: a file with a compiled language's suffix
(:data:`SOURCE_SUFFIXES`: C, C++, Cython, Fortran, CUDA, Objective-C, Rust) anywhere in the tree
(astropy compiles ``cextern/`` libraries into its modules), and the setuptools build scripts
(``setup.py``, astropy's per-package ``setup_package.py``), added, changed or deleted. Not
counted: ``pyproject.toml`` and ``setup.cfg`` (edited for many other reasons; a change there that
alters the build is not seen), and a ``.py`` module named like a built one (Python imports the
built module ahead of it in a real install too, so the tests see what users would).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from repogate.git import ChangedPath

SOURCE_SUFFIXES = (
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".cxx",
    ".c++",
    ".hh",
    ".hpp",
    ".hxx",
    ".h++",
    ".inc",
    ".pyx",
    ".pxd",
    ".pxi",
    ".f",
    ".for",
    ".f77",
    ".f90",
    ".f95",
    ".cu",
    ".m",
    ".mm",
    ".rs",
)
"""Suffixes (compared case-folded) of files a compiler turns into an extension module."""

BUILD_SCRIPTS = frozenset({"setup.py", "setup_package.py"})
"""Base names of setuptools scripts that declare extension modules and how they are compiled."""

_SHOWN = 3


def stale_build_edits(changed: Sequence[ChangedPath], prebuilt: Sequence[str]) -> list[str]:
    """Return the changed paths the environment's prebuilt extension modules do not reflect.

    Args:
        changed: the patch's changed paths (either status, a deletion included).
        prebuilt: the extension modules the environment built at the base and places into each
            graded tree (relative paths, ``pkg/_speed.cpython-311-x86_64-linux-gnu.so``); empty
            when there are none, and then nothing is returned.

    Returns:
        One entry per such path, with why (the first few prebuilt modules named), sorted.
    """
    if not prebuilt:
        return []
    named = ", ".join(sorted(prebuilt)[:_SHOWN])
    more = f" and {len(prebuilt) - _SHOWN} more" if len(prebuilt) > _SHOWN else ""
    why = (
        f"(a source of the extension modules the environment built at the base ({named}{more}): "
        "the graded trees run that build, not this edit)"
    )
    found = set()
    for change in changed:
        name = posixpath.basename(change.path)
        if name.casefold().endswith(SOURCE_SUFFIXES) or name in BUILD_SCRIPTS:
            found.add(f"{change.path} {why}")
    return sorted(found)
