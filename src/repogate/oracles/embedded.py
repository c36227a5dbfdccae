"""Graded oracles that live in files the agent may edit: graded from the hidden tests' text.

A FAIL_TO_PASS or PASS_TO_PASS id may name a doctest inside a product module
(``calc/__init__.py::calc.add``) or a doctest text file outside the hidden tests
(``docs/usage.txt::usage.txt``). The hidden test patch does not cover such a file, and the agent
may edit it, so a patch could rewrite the expected output to match its bug and pass. Every graded
oracle is oracle wherever it lives: before any graded run (the base-state check, the candidate, the
merged tree, the sentinel's start), the graded text is put back from the hidden tests' version:

- a doctest in a ``.py`` file: the docstring of the object the id names (or the module's own) is
  replaced by the hidden tests' docstring, or inserted when the candidate dropped it; the rest of
  the candidate's file stays. An object the candidate removed stays removed (the id is then
  missing, which fails it);
- any other file (a doctest text file): the whole file is the hidden tests' version.

The hidden tests' version is the file at the hidden tests' commit when the contract derives them
from one (the fix commit carries the doctest as the fix left it), else at the base commit. Test
modules (``test_*.py``, files under ``tests/``) are not handled here: editing an existing one fails
``oracle_untouched`` already (:mod:`repogate.gates.integrity`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from repogate.contract import TransitionContract
from repogate.globs import TEST_GLOBS, matches_any


@dataclass(frozen=True)
class EmbeddedOracle:
    """One graded id inside an editable file, with the file as the hidden tests have it.

    Attributes:
        test_id: the graded id, e.g. ``calc/__init__.py::calc.add``.
        path: its file, relative to the checkout.
        text: the file's bytes in the hidden tests' version.
    """

    test_id: str
    path: str
    text: bytes


def is_doctest_id(test_id: str) -> bool:
    """True when ``test_id`` names a doctest, as pytest's doctest plugin names them.

    A doctest text file (``docs/usage.txt::usage.txt``: the file is no ``.py``), or a docstring of
    a module (``calc/__init__.py::calc``, the module's name) or of an object in it
    (``calc/__init__.py::calc.add``, a dotted name). A test function's id
    (``units/selfcheck.py::test_yards``, ``...::TestK::test_m``, ``...::test_p[a.b]``) is not one.
    """
    path, _, name = test_id.partition("::")
    if not path.endswith(".py"):
        return True
    if not name or "::" in name:
        return False
    name = name.split("[", 1)[0]
    parts = path.removesuffix(".py").split("/")
    module = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
    return "." in name or name == module


def embedded_ids(contract: TransitionContract, hidden_paths: Sequence[str]) -> tuple[str, ...]:
    """Return the graded doctest ids whose file the agent may edit and the hidden tests do not cover.

    Args:
        contract: the task.
        hidden_paths: the files the hidden test patch touches.
    """
    permissions = contract.permissions
    hidden = set(hidden_paths)
    found = []
    for test_id in (*contract.oracles.fail_to_pass, *contract.oracles.pass_to_pass):
        path = test_id.split("::", 1)[0]
        if path in hidden or matches_any(path, TEST_GLOBS) or not is_doctest_id(test_id):
            continue
        if matches_any(path, permissions.editable) and not matches_any(path, permissions.forbidden):
            found.append(test_id)
    return tuple(found)


def load_embedded(
    contract: TransitionContract,
    hidden_paths: Sequence[str],
    read: Callable[[str, str], bytes | None],
    base: str,
) -> tuple[EmbeddedOracle, ...]:
    """Read the hidden tests' version of each embedded id's file.

    Args:
        contract: the task.
        hidden_paths: the files the hidden test patch touches.
        read: ``(revision, path) -> bytes`` or None when absent, on the full-history repository.
        base: the base commit (the version used when the hidden tests are a patch file).
    """
    source = contract.oracles.hidden_tests
    rev = source.commit if source is not None and source.commit is not None else base
    found = []
    for test_id in embedded_ids(contract, hidden_paths):
        path = test_id.split("::", 1)[0]
        text = read(rev, path)
        if text is not None:
            found.append(EmbeddedOracle(test_id, path, text))
    return tuple(found)


_Scope = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


def _child(scope: _Scope, name: str) -> _Scope | None:
    named = [
        node
        for node in scope.body
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name == name
    ]
    return named[-1] if named else None  # the last definition wins, as at run time


def _at(module: ast.Module, qualname: Sequence[str]) -> _Scope | None:
    scope: _Scope | None = module
    for part in qualname:
        scope = _child(scope, part) if scope is not None else None
    return scope


def _qualname(module: ast.Module, dotted: str) -> list[str] | None:
    """Return the qualified name in ``module`` a doctest name (``module.Class.method``) names.

    The module's own dotted name is a prefix of unknown length: the longest remainder that names
    an object wins; an empty remainder names the module (its docstring).
    """
    parts = dotted.split(".")
    for start in range(len(parts) + 1):
        if _at(module, parts[start:]) is not None:
            return parts[start:]
    return None


def _offset(lines: list[bytes], lineno: int, col: int) -> int:
    return sum(len(line) for line in lines[: lineno - 1]) + col


def _docstring_node(scope: _Scope) -> ast.Expr | None:
    first = scope.body[0] if scope.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


def _span(lines: list[bytes], node: ast.stmt) -> tuple[int, int]:
    assert node.end_lineno is not None and node.end_col_offset is not None
    start = _offset(lines, node.lineno, node.col_offset)
    return start, _offset(lines, node.end_lineno, node.end_col_offset)


def splice_docstring(candidate: bytes, oracle: bytes, name: str) -> bytes | None:
    """Return ``candidate`` with the docstring of ``name`` taken from ``oracle``.

    Args:
        candidate: the candidate's module source.
        oracle: the hidden tests' version of the module.
        name: the doctest's name after ``::`` (``calc.add``; the module name alone for the
            module's docstring).

    Returns:
        The new source; None when either side cannot be parsed, the oracle has no docstring for
        the object, or the candidate has no such object.
    """
    try:
        ours, theirs = ast.parse(candidate), ast.parse(oracle)
    except (SyntaxError, ValueError):
        return None
    qualname = _qualname(theirs, name)
    if qualname is None:
        return None
    wanted, target = _at(theirs, qualname), _at(ours, qualname)
    doc = _docstring_node(wanted) if wanted is not None else None
    if doc is None or target is None:
        return None
    olines = oracle.splitlines(keepends=True)
    start, end = _span(olines, doc)
    literal = oracle[start:end]
    clines = candidate.splitlines(keepends=True)
    old = _docstring_node(target)
    if old is not None:
        a, b = _span(clines, old)
        spliced = candidate[:a] + literal + candidate[b:]
    elif isinstance(target, ast.Module):
        spliced = literal + b"\n" + candidate
    else:
        first = target.body[0]
        at = _offset(clines, first.lineno, first.col_offset)
        same_line = candidate[:at].rstrip(b" \t").endswith(b":")  # ``def f(): return 1``
        glue = b"; " if same_line else b"\n" + b" " * first.col_offset
        spliced = candidate[:at] + literal + glue + candidate[at:]
    try:
        ast.parse(spliced)
    except (SyntaxError, ValueError):
        return None
    return spliced


def restore(tree: Path, oracles: Sequence[EmbeddedOracle]) -> None:
    """Put each embedded oracle's graded text back into the checkout ``tree`` (see module docs)."""
    root = tree.resolve()
    for oracle in oracles:
        target = root / oracle.path
        planted = any(p.is_symlink() for p in (target, *target.parents) if p.is_relative_to(root))
        if planted or not target.is_file():
            continue  # removed by the candidate, or reached through a link it made: left alone
        if not oracle.path.endswith(".py"):
            target.write_bytes(oracle.text)
            continue
        name = oracle.test_id.split("::", 1)[1] if "::" in oracle.test_id else ""
        spliced = splice_docstring(target.read_bytes(), oracle.text, name.split("::")[-1])
        if spliced is not None:
            target.write_bytes(spliced)
