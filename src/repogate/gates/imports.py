"""What a patch adds to Python's import system: files that run before, or instead of, its source.

Three kinds of added file change what the test process runs without the change showing as source
a reviewer (or gate I's added-line check) can read:

- a *coding cookie* (PEP 263, ``# -*- coding: NAME -*-`` on line 1 or 2) naming a codec that
  does not read ASCII as ASCII: with ``utf-7``, ``+AAo-`` inside a "comment" decodes to a
  newline and the text after it runs as code; an EBCDIC or multi-byte codec turns what the diff
  shows into other text. Allowed: UTF-8 and single-byte codecs that map every ASCII byte to
  itself (``latin-1``, ``cp1252``, ...);
- a *native extension module* or other importable binary (``.so``, ``.pyd``, ``.dll``,
  ``.dylib``, any name ending with one of :data:`importlib.machinery.EXTENSION_SUFFIXES`):
  Python's import prefers an extension module over the ``.py`` beside it, and its code is a
  binary no check reads;
- a new *top-level module or package* whose name is importable from the environment (pytest's
  own dependencies such as ``iniconfig``, ``pluggy``, ``packaging``, anything installed in the
  venv), from the standard library of the environment's Python (``sys.stdlib_module_names``; before
  Python 3.10, the names in its standard library's folders), or
  a harness plugin's name, or ``sitecustomize``/``usercustomize`` (:mod:`site` imports them at
  the interpreter's start, ahead of everything the harness runs): ``python -m pytest`` puts the
  checkout first on ``sys.path``, so such a file is imported *instead* of the real module,
  before any test or harness plugin runs.

A file's top-level name is found as pytest's ``prepend`` import mode finds it: the topmost folder
of the chain of folders holding ``__init__.py`` above it, or the file's own stem when its folder
has none.
"""

from __future__ import annotations

import codecs
import fnmatch
import importlib.machinery
import posixpath
import re
import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from repogate.git import ChangedPath
from repogate.sandbox import SandboxPolicy

if TYPE_CHECKING:
    from repogate.environments import Environment

ReadFile = Callable[[str, str], bytes | None]
"""(revision, path) -> file bytes at that revision, or None when absent."""

# PEP 263's regular expression, on bytes; only lines 1 and 2 carry a cookie.
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
_NATIVE_SUFFIXES = tuple(
    sorted({".so", ".pyd", ".dll", ".dylib", *importlib.machinery.EXTENSION_SUFFIXES})
)
HARNESS_MODULES = frozenset({"repogate_guard", "repogate_reads", "repogate_regress"})
"""Top-level names of the harness's own pytest plugins (loaded by name with ``-p``)."""
STARTUP_MODULES = frozenset({"sitecustomize", "usercustomize"})
"""Top-level names :mod:`site` imports when the interpreter starts, from anywhere on ``sys.path``
(an editable install's folder in the checkout among them): before the harness's bootstrap reads
the guard's key, so before anything can watch what the checkout runs."""
_MODULE_SUFFIXES = (".py", ".pyw", *_NATIVE_SUFFIXES)
_ENV_TIMEOUT_S = 60


@lru_cache(maxsize=256)
def codec_is_safe(name: str) -> bool:
    """Return True when a source file in codec ``name`` reads as its bytes show.

    True for UTF-8 and for single-byte codecs that decode every ASCII byte to itself; False for
    codecs such as ``utf-7``, ``utf-16``, ``cp037`` or ``shift_jis``, and for unknown names.
    """
    try:
        info = codecs.lookup(name)
    except LookupError:
        return False
    if info.name in ("utf-8", "utf-8-sig"):
        return True
    ascii_bytes = bytes(range(128))
    try:
        same = all(bytes([b]).decode(info.name) == chr(b) for b in ascii_bytes)
        single = len(bytes(range(256)).decode(info.name, errors="replace")) == 256
    except (UnicodeError, ValueError, TypeError):
        return False
    return same and single and ascii_bytes.decode(info.name) == ascii_bytes.decode("ascii")


def coding_cookie(data: bytes) -> str | None:
    """Return the codec a file's PEP 263 cookie names (lines 1 and 2), or None when it has none."""
    head = b"\n".join(data.splitlines()[:2])
    found = _COOKIE.search(head)
    return found.group(1).decode("ascii") if found else None


def unsafe_cookies(changed: Sequence[ChangedPath], read: ReadFile, candidate: str) -> list[str]:
    """Return changed files whose coding cookie names a codec that hides code, each with why.

    Every file is read, not only ``.py``: ``compile()`` honours a cookie in any bytes it gets.
    """
    found = []
    for change in changed:
        if change.status == "D" or change.is_symlink:
            continue
        data = read(candidate, change.path)
        name = coding_cookie(data[:4096]) if data else None
        if name is not None and not codec_is_safe(name):
            found.append(
                f"{change.path} (coding cookie {name!r}: Python would read other text than the"
                " diff shows; only UTF-8 and ASCII-preserving single-byte codecs are allowed)"
            )
    return found


def native_modules(changed: Sequence[ChangedPath]) -> list[str]:
    """Return added or changed native extension modules and libraries, each with why."""
    return [
        f"{c.path} (a native extension or library: Python imports it ahead of the source)"
        for c in changed
        if c.status != "D" and posixpath.basename(c.path).endswith(_NATIVE_SUFFIXES)
    ]


def top_level_name(path: str, has_init: Callable[[str], bool]) -> tuple[str, str] | None:
    """Return (top-level import name, its path) of the module file ``path``, or None.

    Args:
        path: a file path relative to the checkout (``/`` separators).
        has_init: whether a folder (``""`` for the top) holds an ``__init__.py``.

    Returns:
        None when ``path`` is no importable module file (``foo.txt``, ``a-b.py``).
    """
    name = posixpath.basename(path)
    if not name.endswith(_MODULE_SUFFIXES):
        return None
    stem = name.split(".", 1)[0]
    folder = posixpath.dirname(path)
    top, top_path = stem, path
    while folder and has_init(folder):
        top, top_path = posixpath.basename(folder), folder
        folder = posixpath.dirname(folder)
    if stem == "__init__" and top == "__init__":
        return None
    return (top, top_path) if top.isidentifier() else None


def shadowing(
    changed: Sequence[ChangedPath],
    read: ReadFile,
    base: str,
    candidate: str,
    importable: Collection[str],
) -> list[str]:
    """Return added top-level modules/packages named like something importable, each with why.

    Args:
        changed: the patch's changed paths.
        read: reads a file at a revision.
        base: the base commit (a top-level name already there was not added by the patch).
        candidate: the candidate commit.
        importable: top-level names importable from the environment and its standard library
            (:func:`environment_names`); :data:`HARNESS_MODULES` and :data:`STARTUP_MODULES`
            are always added.
    """
    names = set(importable) | HARNESS_MODULES | STARTUP_MODULES

    def has_init(folder: str) -> bool:
        return read(candidate, f"{folder}/__init__.py") is not None

    found: set[str] = set()
    for change in changed:
        if change.status == "D":
            continue
        top = top_level_name(change.path, has_init)
        if top is None or top[0] not in names:
            continue
        name, where = top
        existed = where != change.path and read(base, f"{where}/__init__.py") is not None
        if change.status != "A" and where == change.path:
            existed = True  # an existing top-level module, edited: not added by the patch
        if not existed:
            found.add(
                f"{where} (a new top-level module {name!r} shadowing the installed or standard"
                " one: the checkout comes first on sys.path)"
            )
    return sorted(found)


def import_names_of_tests(
    paths: Collection[str], has_init: Callable[[str], bool]
) -> dict[str, frozenset[str]]:
    """Return the top-level import names of the test modules among ``paths``, with their paths.

    A test module outside a package (``tests/test_unit.py`` with no ``tests/__init__.py``) is
    imported by its own name, ``test_unit`` (its path: the file); one in a package by its
    package's top name (its path: that package's folder).

    Args:
        paths: file paths of a tree (``/`` separators), the hidden tests' too.
        has_init: whether a folder of that tree holds an ``__init__.py``.
    """
    found: dict[str, set[str]] = {}
    for path in paths:
        name = posixpath.basename(path)
        if fnmatch.fnmatchcase(name, "test_*.py") or fnmatch.fnmatchcase(name, "*_test.py"):
            top = top_level_name(path, has_init)
            if top is not None:
                found.setdefault(top[0], set()).add(top[1])
    return {name: frozenset(where) for name, where in found.items()}


def shadowed_tests(
    changed: Sequence[ChangedPath],
    read: ReadFile,
    candidate: str,
    test_modules: Mapping[str, Collection[str]],
) -> list[str]:
    """Return added modules named like a test module of the tree elsewhere, each with why.

    pytest imports a test module outside a package by its bare name (``test_unit``), with its
    folder put on ``sys.path``: first by default, last with ``--import-mode=append``. A new
    ``test_unit.py`` at the checkout's top (on ``sys.path`` ahead of ``tests/`` then) was imported
    for ``tests/test_unit.py``, set its ``__file__`` to the real file's so pytest's mismatch check
    passed, and its no-op tests were reported under the graded ids (red team red37). Two such
    modules of one name cannot both be collected anyway (pytest's "import file mismatch"). A new
    module inside a test package (``tests/test_new.py`` beside ``tests/__init__.py``) is that
    package's, not another of its name.

    Args:
        changed: the patch's changed paths.
        read: reads a file at a revision.
        candidate: the candidate commit.
        test_modules: :func:`import_names_of_tests` of the base tree and the hidden tests.
    """

    def has_init(folder: str) -> bool:
        return read(candidate, f"{folder}/__init__.py") is not None

    found = set()
    for change in changed:
        if change.status != "A":
            continue
        top = top_level_name(change.path, has_init)
        if top is None or top[0] not in test_modules or top[1] in test_modules[top[0]]:
            continue
        found.add(
            f"{top[1]} (a new module {top[0]!r} named like the test module "
            f"{sorted(test_modules[top[0]])[0]}: pytest may import it in that one's place)"
        )
    return sorted(found)


_ENV_SCRIPT = (
    "import os, sys, sysconfig\n"
    "names = set(getattr(sys, 'stdlib_module_names', ())) | set(sys.builtin_module_names)\n"
    "paths = sysconfig.get_paths()\n"
    "def listing(folder):\n"
    "    return os.listdir(folder) if os.path.isdir(folder) else []\n"
    "if not hasattr(sys, 'stdlib_module_names'):  # Python < 3.10: list the stdlib's folders\n"
    "    for key in ('stdlib', 'platstdlib'):\n"
    "        for folder in (paths[key], os.path.join(paths[key], 'lib-dynload')):\n"
    "            names.update(e.split('.', 1)[0] for e in listing(folder) if e != 'site-packages')\n"
    "import site  # -S: importing it runs nothing (no site.main), its functions only\n"
    "here = os.path.dirname(os.path.abspath(sys.executable))\n"
    "cfgs = [os.path.join(d, 'pyvenv.cfg') for d in (here, os.path.dirname(here))]\n"
    "cfg = next((c for c in cfgs if os.path.isfile(c)), None)\n"
    "prefixes, folders = [sys.prefix], []\n"
    "if cfg:  # a venv: its own site-packages, the base's only when the venv includes them\n"
    "    keys = {}\n"
    "    for line in open(cfg, encoding='utf-8', errors='replace'):\n"
    "        key, eq, value = line.partition('=')\n"
    "        if eq: keys[key.strip().lower()] = value.strip().lower()\n"
    "    system = keys.get('include-system-site-packages') == 'true'\n"
    "    prefixes = [sys.prefix] if system else []\n"
    "    for lib in ('lib', 'lib64'):  # a venv's own layout, whatever a distribution's site says\n"
    "        top = os.path.join(os.path.dirname(cfg), lib)\n"
    "        folders += [os.path.join(top, e, 'site-packages') for e in sorted(listing(top))]\n"
    "skip = ('.dist-info', '.egg-info', '.pth')\n"
    "for folder in folders + (site.getsitepackages(prefixes) if prefixes else []):\n"
    "    names.update(e.split('.', 1)[0] for e in listing(folder)\n"
    "                 if not e.endswith(skip) and e != '__pycache__')\n"
    "print('\\n'.join(sorted(n for n in names if n.isidentifier())))\n"
)
_NAMES: dict[tuple[str, ...], frozenset[str]] = {}


def environment_names(env: Environment, required: Collection[str] = ("pytest",)) -> frozenset[str]:
    """Return the top-level names importable from an environment: its site-packages and stdlib.

    The environment's interpreter runs in the sandbox (:meth:`Environment.run`: no network,
    nothing writable, an empty working folder) with ``-I -S`` (no ``site``, so no ``.pth`` file of
    the venv runs, and no environment variable or current folder is read), and prints its
    standard library's names and the names in its site-packages folders: the venv's own
    (``lib/<python>/site-packages`` and ``lib64/<python>/site-packages`` under the folder holding
    the ``pyvenv.cfg`` beside or above the interpreter, the layout :mod:`venv` and uv make), and
    the base installation's (:func:`site.getsitepackages` of ``sys.prefix``) only when the
    venv's ``include-system-site-packages`` is ``true`` or there is no venv; ``-S`` alone leaves
    ``sys.prefix`` at the base installation. ``site.getsitepackages`` is not asked for the venv's
    folders: a distribution's patched ``site`` (Debian's) names ``local/lib/python3.X/dist-packages``
    and others a venv never has (red team 2026-12-02: no installed package was listed, and a new
    ``iniconfig/__init__.py`` passed). The interpreter is
    whatever the venv holds (``bin/python``, the standard library ``pyvenv.cfg`` leads to), so it
    never runs on this machine (red team 2026-12-02), and the harness lists no folder it names.

    Read once per environment (backend, cache key, digest) and process: a built environment is
    never changed after its build (untrusted code sees it read-only), so every attempt on it
    shares one answer instead of one sandboxed run each.

    Args:
        env: the built environment (:class:`repogate.environments.Environment`).
        required: names the list must hold to be trusted (default ``pytest``, the oracle's
            runner, installed in every graded environment): one missing means the environment's
            site-packages were not found, and the list would pass a module shadowing any
            installed package, so it is refused (fail closed).

    Returns:
        Identifiers (``json``, ``pytest``, ``_pytest``); a printed line that is none is dropped.

    Raises:
        OSError: the interpreter could not be run, failed or ran past 60 s; or a ``required``
            name is not listed.
        IsolationError: bubblewrap is not usable and weak isolation was not allowed.
    """
    names = _listed(env)
    missing = sorted(set(required) - names)
    if missing:
        raise OSError(
            f"{env.python_argv()[0]} lists no {', '.join(missing)} among its importable modules:"
            " its site-packages were not found, so an added module shadowing an installed one"
            " would pass; check the environment's pyvenv.cfg and lib/<python>/site-packages"
        )
    return names


def _listed(env: Environment) -> frozenset[str]:
    """Return the names ``env``'s interpreter lists (:func:`environment_names`), read once."""
    key = (env.backend, env.cache_key, env.digest, *env.python_argv())
    known = _NAMES.get(key)
    if known is not None:
        return known
    policy = SandboxPolicy(network=False, timeout_s=_ENV_TIMEOUT_S, writable=())
    argv = [*env.python_argv(), "-I", "-S", "-c", _ENV_SCRIPT]
    with tempfile.TemporaryDirectory(prefix="repogate-names-") as empty:
        done = env.run(argv, Path(empty), policy)
    if not done.ok:
        why = "timed out" if done.timed_out else f"exit {done.returncode}"
        raise OSError(f"{argv[0]} could not list its modules ({why}): {done.stderr.strip()[-300:]}")
    names = frozenset(line for line in done.stdout.splitlines() if line.isidentifier())
    _NAMES[key] = names
    return names
