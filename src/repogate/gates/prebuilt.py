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
(:data:`SOURCE_SUFFIXES`: C, C++, Cython, Fortran, CUDA, Objective-C, Rust, SWIG, assembly)
or a template of one (``_fast.pyx.in``, numpy's ``x.c.src``) anywhere in the tree
(astropy compiles ``cextern/`` libraries into its modules), and the setuptools build scripts
(``setup.py``, astropy's per-package ``setup_package.py``), added, changed or deleted. Not
counted here: ``pyproject.toml`` and ``setup.cfg`` (edited for many other reasons; the tables of
them an install reads are compared by :mod:`repogate.gates.build_config`, which refuses a change
to them whenever the environment's install commands read them, prebuilt modules or not), and a
``.py`` module named like a built one (Python imports the built module ahead of it in a real
install too, so the tests see what users would).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from repogate._counted import listed
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
    ".i",
    ".swg",
    ".s",
    ".asm",
    ".ipp",
    ".inl",
    ".tcc",
    ".f03",
    ".f08",
)
"""Suffixes (compared case-folded) of files a compiler turns into an extension module."""

TEMPLATE_SUFFIXES = (".in", ".src", ".tmpl", ".tpl", ".template")
"""Suffixes of templates a build expands into a source first (``_fast.pyx.in``, ``x.c.src``)."""

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
    named = listed(sorted(prebuilt), _SHOWN)
    why = (
        f"(a source of the extension modules the environment built at the base ({named}): "
        "the graded trees run that build, not this edit)"
    )
    found = set()
    for change in changed:
        name = posixpath.basename(change.path)
        if is_build_source(name):
            found.add(f"{change.path} {why}")
    return sorted(found)


def is_build_source(name: str) -> bool:
    """Whether a file named ``name`` (a base name) is what an extension module is built from.

    A compiled language's source (:data:`SOURCE_SUFFIXES`), a template of one
    (:data:`TEMPLATE_SUFFIXES` after it: ``_fast.pyx.in``), or a build script
    (:data:`BUILD_SCRIPTS`).
    """
    if name in BUILD_SCRIPTS:
        return True
    folded = name.casefold()
    for template in TEMPLATE_SUFFIXES:
        if folded.endswith(template) and folded[: -len(template)].endswith(SOURCE_SUFFIXES):
            return True
    return folded.endswith(SOURCE_SUFFIXES)
