"""The guard's read trace: which checkout files test code and product code open in a session.

Copied by the harness as ``repogate_reads.py`` beside the guard (:mod:`repogate.oracles.guard`)
and imported by it only when ``REPOGATE_GUARD_READS=1`` (runs on the base or the reference,
never on a candidate's code); repogate itself never imports it. :func:`start` adds an audit hook
(:func:`sys.addaudithook`, PEP 578) that records each file of the checkout other than Python code
opened for reading, with who opened it: the checkout file of the innermost frame at the ``open``.
That file is *test code* when it holds a collected test (not a doctest: those live in product
modules), is a ``conftest.py``, a test module (``test_*.py``, ``*_test.py``) or a file the guard
counts as the oracle's (a ``tests``/``test``/``testing`` folder), or the frame is a doctest
example's; any other file of the checkout is *product code*. An open with no frame of the
checkout (pytest reading its configuration, the import system) is not recorded. The hook only
records; it changes no outcome and no object of pytest's.

It must run on every Python and pytest the target may pin: only the standard library.
"""

# ruff: noqa: PTH100, PTH113, PTH118, PTH119, PTH206
# (os.path: the trace imports as little as it can into the session it watches)
from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any

_MAX_READS = 1000  # files kept per side, and characters below: far below the record's size cap
_MAX_READ_CHARS = 64 * 1024
_CODE = (".py", ".pyc", ".pyo", ".pyi", ".so", ".pyd")
_root = [""]
_opened: dict[str, set[str]] = {}  # data file of the checkout -> files of the frames that opened it
_frame_files: dict[str, str] = {}  # code file -> relative checkout path, "" when outside it
_data_files: dict[str, str] = {}  # absolute path opened -> relative data file, "" when none
_test_files: set[str] = set()  # files holding a collected test other than a doctest
_tracing = [False]


def start(root: str) -> None:
    """Trace the reads of checkout ``root`` (a real path) from now on, for the whole process."""
    _root[0] = root
    sys.addaudithook(_audit)


def note_tests(items: Iterable[Any]) -> None:
    """Note the files holding collected tests other than doctests (``session.items``): test code."""
    for item in items:
        where = getattr(item, "path", None) or getattr(item, "fspath", None)
        if where is not None and "Doctest" not in type(item).__name__:
            relative = _inside(str(where))
            if relative:
                _test_files.add(relative)


def _inside(path: str) -> str:
    """``path`` relative to the checkout, or "" when it lies outside it."""
    root = _root[0]
    real = os.path.realpath(path)
    return os.path.relpath(real, root) if root and real.startswith(root + os.sep) else ""


def _reader(frame: types.FrameType | None) -> str:
    """The checkout file of the innermost frame from ``frame`` outwards in it, else ""."""
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<doctest "):
            return "<doctest>"
        relative = _frame_files.get(name)
        if relative is None:
            relative = _frame_files[name] = "" if name.startswith("<") else _inside(name)
        if relative:
            return relative
        frame = frame.f_back
    return ""


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """Record a read of a checkout file other than Python code, with the file that asked."""
    if event != "open" or _tracing[0] or len(_opened) >= 4 * _MAX_READS:
        return
    _tracing[0] = True
    try:
        path, mode, flags = (*tuple(args), None, None, None)[:3]
        if isinstance(mode, str):
            if not ("r" in mode or "+" in mode):
                return
        elif isinstance(flags, int) and flags & os.O_ACCMODE == os.O_WRONLY:
            return
        if path is None or isinstance(path, int):
            return
        name = os.path.abspath(os.fsdecode(os.fspath(path)))
        relative = _data_files.get(name)
        if relative is None:
            relative = _data_file(name)
            if len(_data_files) < 64 * _MAX_READS:  # a bounded cache: thousands of temp files
                _data_files[name] = relative
        if relative:
            _opened.setdefault(relative, set()).add(_reader(sys._getframe(1)))
    except Exception:  # a path it cannot read is not recorded; the open itself goes on
        return
    finally:
        _tracing[0] = False


def _data_file(path: str) -> str:
    """``path`` relative to the checkout when it is a file there other than code or git's, else ""."""
    relative = _inside(path)
    parts = relative.split(os.sep)
    if not relative or relative.endswith(_CODE) or ".git" in parts or "__pycache__" in parts:
        return ""
    return relative if os.path.isfile(os.path.join(_root[0], relative)) else ""


def _test_code(reader: str, oracle_file: Callable[[str], bool]) -> bool:
    name = os.path.basename(reader)
    return (
        reader == "<doctest>"
        or reader in _test_files
        or oracle_file(reader)
        or name.startswith("test_")
        or name.endswith("_test.py")
    )


def reads(oracle_file: Callable[[str], bool]) -> dict[str, Any]:
    """The data files test code opened and those product code opened, sorted, capped.

    Args:
        oracle_file: the guard's test for a checkout file gate I holds as the oracle's.
    """
    test: set[str] = set()
    product: set[str] = set()
    for path, readers in list(_opened.items()):
        for reader in readers - {""}:
            (test if _test_code(reader, oracle_file) else product).add(path)
    kept = {"test": _capped(test), "product": _capped(product)}
    whole = len(kept["test"]) == len(test) and len(kept["product"]) == len(product)
    return {**kept, "truncated": not whole or len(_opened) >= 4 * _MAX_READS}


def _capped(paths: set[str]) -> list[str]:
    kept: list[str] = []
    size = 0
    for path in sorted(paths)[:_MAX_READS]:
        size += len(path) + 4
        if size > _MAX_READ_CHARS:
            break
        kept.append(path)
    return kept
