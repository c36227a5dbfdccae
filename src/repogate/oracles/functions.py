"""What the differential oracle calls, and with what: changed functions and their input strategies.

Read from source text with :mod:`ast` only: the harness never imports the code under test.

- :func:`changed_functions`: the module-level functions, and the static and class methods of
  module-level classes, whose definition differs between the base and the candidate or between
  the base and the reference (``ast.dump``, so comments and formatting are no change). Each is
  a :class:`Target`, with the reason it cannot be called when it cannot (an instance method needs
  an instance, a generator or coroutine gives no comparable result, ``*args``-only signatures).
- :func:`literals_in_tests`: the literal values the task's tests pass (any constant in the hidden test
  files), the seeds the strategies draw from first.
- :func:`strategy_for`: a Hypothesis strategy for one target's arguments: the contract's named
  strategies, then the annotation (``int``, ``str``, ``list[int]``, ``X | None`` ...), then the
  test literals mixed with small values of the basic types.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from repogate._model import FrozenModel

_MAX_LITERALS = 200
OMIT = "\0omit"
"""Stands for an argument left at its default."""


class Target(FrozenModel):
    """One function the differential oracle compares.

    Attributes:
        path: its file, relative to the tree.
        module: the dotted module name it is imported by.
        qualname: ``function`` or ``Class.method``.
        params: ``(name, annotation source or "", has a default, positional only)`` per parameter.
        not_applicable: why it cannot be called ("" when it can).
    """

    path: str
    module: str
    qualname: str
    params: tuple[tuple[str, str, bool, bool], ...] = ()
    not_applicable: str = ""

    @property
    def name(self) -> str:
        """``module.qualname``: how a contract names it."""
        return f"{self.module}.{self.qualname}"


def is_test_path(path: str) -> bool:
    """True for a test file or a file under a test folder: never code the oracles mutate or compare.

    ``test_*.py``, ``*_test.py``, ``conftest.py``, or anything under ``tests/``, ``test/`` or
    ``testing/``.
    """
    name = path.rsplit("/", 1)[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(p in ("tests", "test", "testing") for p in path.split("/")[:-1])
    )


def module_name(path: str, roots: Sequence[str]) -> str | None:
    """The dotted name ``path`` imports as, from the first import root holding it; None if none."""
    for root in (*[r for r in roots if r not in ("", ".")], "."):
        prefix = "" if root == "." else root.rstrip("/") + "/"
        if not path.startswith(prefix) or not path.endswith(".py"):
            continue
        parts = path[len(prefix) : -3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and all(p.isidentifier() for p in parts):
            return ".".join(parts)
    return None


@dataclass
class _Defs:
    nodes: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    methods: dict[str, str] = field(default_factory=dict)  # qualname -> decorator kind


def _definitions(source: bytes | None) -> _Defs:
    defs = _Defs()
    if source is None:
        return defs
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return defs
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defs.nodes[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    qual = f"{node.name}.{item.name}"
                    defs.nodes[qual] = item
                    names = {d.id for d in item.decorator_list if isinstance(d, ast.Name)}
                    kind = "static" if "staticmethod" in names else ""
                    defs.methods[qual] = kind or ("class" if "classmethod" in names else "instance")
    return defs


def _why_not(node: ast.FunctionDef | ast.AsyncFunctionDef, method: str | None) -> str:
    if isinstance(node, ast.AsyncFunctionDef):
        return "a coroutine function: no comparable result without an event loop"
    if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in ast.walk(node)):
        return "a generator function: its result is an iterator, not a value"
    if method == "instance":
        return "an instance method: calling it needs an instance the oracle cannot construct"
    if method == "class" and node.args.args:
        return ""
    return ""


def _params(
    node: ast.FunctionDef | ast.AsyncFunctionDef, method: str | None
) -> tuple[tuple[str, str, bool, bool], ...]:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if method == "class":
        positional = positional[1:]
    defaults = len(args.defaults)
    rows = []
    for index, arg in enumerate(positional):
        has_default = index >= len(positional) - defaults
        text = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        rows.append((arg.arg, text, has_default, arg in args.posonlyargs))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        text = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        rows.append((arg.arg, text, default is not None, False))
    return tuple(rows)


def changed_functions(
    files: Mapping[str, tuple[bytes | None, bytes | None, bytes | None]], roots: Sequence[str]
) -> list[Target]:
    """The functions changed by the candidate or the reference, in file and name order.

    Args:
        files: per changed Python file, its text at the base, on the candidate and in the
            reference (None where absent).
        roots: the environment's import roots (``src``, ``.``).

    Returns:
        One :class:`Target` per changed definition present in both the candidate and the
        reference; those that cannot be called carry the reason.
    """
    targets = []
    for path in sorted(files):
        base, cand, ref = (_definitions(text) for text in files[path])
        module = module_name(path, roots)
        for qual in sorted(set(cand.nodes) | set(ref.nodes)):
            before = base.nodes.get(qual)
            changed = any(
                qual in d.nodes and (before is None or ast.dump(d.nodes[qual]) != ast.dump(before))
                for d in (cand, ref)
            )
            if not changed:
                continue
            if module is None:
                why = "its file is not importable under the environment's import roots"
            elif qual not in cand.nodes or qual not in ref.nodes:
                where = "candidate" if qual not in cand.nodes else "reference"
                why = f"absent from the {where}: nothing to compare with"
            else:
                method = ref.methods.get(qual)
                why = _why_not(ref.nodes[qual], method) or _why_not(cand.nodes[qual], method)
            node = ref.nodes.get(qual) or cand.nodes[qual]
            targets.append(
                Target(
                    path=path,
                    module=module or "",
                    qualname=qual,
                    params=_params(node, ref.methods.get(qual)) if not why else (),
                    not_applicable=why,
                )
            )
    return targets


def literals_in_tests(sources: Iterable[bytes]) -> list[Any]:
    """The constants the tests hold (str, bytes, int, float, bool), first seen first, deduplicated."""
    seen: dict[tuple[str, str], Any] = {}
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(
                node.value, str | bytes | int | float | bool
            ):
                value = node.value
                if isinstance(value, float) and not math.isfinite(value):
                    continue  # no literal spelling: the call server could not read it back
                if isinstance(value, str) and (len(value) > 200 or "\n" in value):
                    continue  # docstrings and messages, not inputs
                seen.setdefault((type(value).__name__, repr(value)), value)
                if len(seen) >= _MAX_LITERALS:
                    return list(seen.values())
    return list(seen.values())


_SIMPLE: dict[str, st.SearchStrategy[Any]] = {
    "int": st.integers(),
    "str": st.text(max_size=20),
    "float": st.floats(allow_nan=False, allow_infinity=False),
    "bool": st.booleans(),
    "bytes": st.binary(max_size=20),
    "None": st.none(),
}


def _from_annotation(node: ast.expr, literals: Sequence[Any]) -> st.SearchStrategy[Any] | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return st.none()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _from_annotation(ast.parse(node.value, mode="eval").body, literals)
        except SyntaxError:
            return None
    if isinstance(node, ast.Name | ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        simple = _SIMPLE.get(name)
        if simple is None:
            return None
        seeds = [v for v in literals if type(v).__name__ == name]
        return st.one_of(st.sampled_from(seeds), simple) if seeds else simple
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = (_from_annotation(n, literals) for n in (node.left, node.right))
        return st.one_of(left, right) if left is not None and right is not None else None
    if isinstance(node, ast.Subscript):
        outer = (
            node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", "")
        )
        inner = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        parts = [_from_annotation(n, literals) for n in inner]
        if any(p is None for p in parts):
            return None
        ok = [p for p in parts if p is not None]
        if outer in ("list", "List", "Sequence", "Iterable") and len(ok) == 1:
            return st.lists(ok[0], max_size=5)
        if outer in ("Optional",) and len(ok) == 1:
            return st.one_of(st.none(), ok[0])
        if outer in ("Union",):
            return st.one_of(*ok)
        if outer in ("dict", "Dict", "Mapping") and len(ok) == 2:
            return st.dictionaries(ok[0], ok[1], max_size=5)
        if outer in ("tuple", "Tuple"):
            return st.tuples(*ok)
        if outer in ("set", "Set", "frozenset"):
            return st.sets(ok[0], max_size=5) if len(ok) == 1 else None
    return None


def _fallback(literals: Sequence[Any]) -> st.SearchStrategy[Any]:
    basic = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20))
    return st.one_of(st.sampled_from(literals), basic) if literals else basic


def strategy_for(
    target: Target, literals: Sequence[Any], named: Mapping[str, str]
) -> st.SearchStrategy[tuple[tuple[Any, ...], dict[str, Any]]]:
    """A strategy of ``(args, kwargs)`` for ``target``.

    Args:
        target: the function.
        literals: the tests' literal values (:func:`literals_in_tests`).
        named: parameter name -> a zero-argument function of ``hypothesis.strategies`` (the
            contract's ``oracles.strategies``); checked by the caller.

    A parameter with a default is left out half the time (its default used).
    """
    positional: list[st.SearchStrategy[Any]] = []
    keyword: dict[str, st.SearchStrategy[Any]] = {}
    for name, annotation, has_default, positional_only in target.params:
        if name in named:
            chosen: st.SearchStrategy[Any] = getattr(st, named[name])()
        else:
            parsed = None
            if annotation:
                try:
                    parsed = _from_annotation(ast.parse(annotation, mode="eval").body, literals)
                except SyntaxError:
                    parsed = None
            chosen = parsed if parsed is not None else _fallback(literals)
        if has_default:
            chosen = st.one_of(st.just(OMIT), chosen)
        if positional_only:
            positional.append(chosen)
        else:
            keyword[name] = chosen

    def build(
        drawn: tuple[tuple[Any, ...], dict[str, Any]],
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        args, kwargs = drawn
        kept = []
        for value in args:
            if value == OMIT:
                break  # a positional-only argument left out: every later one too
            kept.append(value)
        return tuple(kept), {k: v for k, v in kwargs.items() if v != OMIT}

    return st.tuples(st.tuples(*positional), st.fixed_dictionaries(keyword)).map(build)
