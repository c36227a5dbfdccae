"""Mutants of a reference patch's added lines, made with mutmut's operators.

Only lines the reference adds are mutated (the rest of the file is the base's, which the task
does not test for): the added lines are read from the patch's hunks, each file's post-reference
text is parsed with libcst, and every node lying wholly on added lines is offered to the
operators (never the body of an ``if TYPE_CHECKING:``, which no test runs). The operators are
mutmut's own (``mutmut.mutation.mutators.mutation_operators``,
mutmut 3.8: numbers, strings, ``True``/``False``, assignments to ``None``, augmented
assignments, ``not`` removed, call arguments dropped or set to ``None``, string-method swaps,
``is``/``in``/``break``/``continue`` swaps, arithmetic, comparison and boolean operator swaps,
ternary conditions forced): they are plain functions from one libcst node to its replacements,
so they can be called on a chosen source span, which mutmut's own runner (which rewrites whole
files into trampolines and runs its own test loop) cannot do. Two operators mutmut lacks are
added here, modelled on its style: a removed statement (a simple statement line becomes
``pass``) and a swapped return value (``return X`` becomes ``return None``).

A mutant whose code parses to the same AST as the reference is *equivalent* (a change of
spelling only) and is kept apart, never run. A mutant that changes only string constants (a
message passed to a call, or a forward reference inside a type annotation) is marked
``text_only``: run, and if it survives, *equivalent-looking*.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from mutmut.mutation.mutators import mutation_operators

T = TypeVar("T")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class Mutant:
    """One mutation of one file: where, which operator, and the whole mutated text."""

    path: str
    line: int
    operator: str
    before: str
    after: str
    text: str
    equivalent: bool
    text_only: bool = False


def added_lines(patch: bytes) -> dict[str, set[int]]:
    """The new-side line numbers each file's added lines have, from a ``git diff`` patch."""
    lines: dict[str, set[int]] = {}
    path: str | None = None
    number = 0
    for raw in patch.decode("utf-8", "replace").splitlines():
        if raw.startswith("+++ "):
            target = raw[4:].strip()
            path = None if target == "/dev/null" else target.removeprefix("b/")
            continue
        if raw.startswith(("diff --git", "--- ")):
            continue
        hunk = _HUNK.match(raw)
        if hunk:
            number = int(hunk.group(1))
            continue
        if path is None or not raw:
            continue
        if raw[0] == "+":
            lines.setdefault(path, set()).add(number)
            number += 1
        elif raw[0] == " ":
            number += 1
    return lines


def _statement_removed(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    if isinstance(node, cst.SimpleStatementLine) and not all(
        isinstance(s, cst.Pass) or (isinstance(s, cst.Expr) and isinstance(s.value, cst.BaseString))
        for s in node.body
    ):
        yield node.with_changes(body=[cst.Pass()])


def _return_swapped(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    value = node.value if isinstance(node, cst.Return) else None
    if value is not None and not (isinstance(value, cst.Name) and value.value == "None"):
        yield node.with_changes(value=cst.Name("None"))


_OWN = ((cst.SimpleStatementLine, _statement_removed), (cst.Return, _return_swapped))


def _type_checking(test: cst.BaseExpression) -> bool:
    """``TYPE_CHECKING``, ``t.TYPE_CHECKING``, ``typing.TYPE_CHECKING``: false at run time."""
    name = test.attr if isinstance(test, cst.Attribute) else test
    return isinstance(name, cst.Name) and name.value == "TYPE_CHECKING"


class _Collect(cst.CSTVisitor):
    """The nodes lying wholly on ``lines``, each with its first line.

    Never the test or body of an ``if TYPE_CHECKING:`` (code only type checkers read: no test
    can kill its mutants); its ``else`` is visited.
    """

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, lines: set[int]) -> None:
        self.lines = lines
        self.found: list[tuple[cst.CSTNode, int]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.If) and _type_checking(node.test):
            if node.orelse is not None:
                node.orelse.visit(self)
            return False
        span = self.get_metadata(PositionProvider, node, None)
        if span is not None and all(
            n in self.lines for n in range(span.start.line, span.end.line + 1)
        ):
            self.found.append((node, span.start.line))
        return True


def _annotations(tree: ast.AST) -> Iterator[ast.expr]:
    """Every annotation in ``tree``: parameters', returns' and annotated assignments'."""
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            yield node.annotation
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            yield node.returns


def _dump(text: str, *, strings: bool = True) -> str | None:
    """The AST of ``text`` with docstrings left out (so a mutated docstring is no change).

    ``strings=False`` also blanks the string constants passed to calls (a message's text:
    ``raise ValueError("...")``, ``warnings.warn("...")``) and every string inside a type
    annotation (a forward reference, ``t.Optional["Context"]``: no code reads it at run time
    unless it evaluates annotations); a string used as a key, compared or returned stays, since
    code reads it.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    if not strings:  # a string passed to a call: a message (a key or a compared value is not)
        for call in [n for n in ast.walk(tree) if isinstance(n, ast.Call)]:
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                parts = arg.values if isinstance(arg, ast.JoinedStr) else [arg]
                for part in parts:
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        part.value = ""
        for annotation in list(_annotations(tree)):
            for inner in ast.walk(annotation):
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                    inner.value = ""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.dump(tree)


def _docstring(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.SimpleString) and node.value.lstrip("rbuRBU").startswith(
        ('"""', "'''")
    )


def mutate_file(path: str, text: str, lines: set[int]) -> list[Mutant]:
    """Every mutant of ``text`` (the file after the reference) on ``lines``, in source order.

    A file that does not parse gives none.
    """
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return []
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    collect = _Collect(lines)
    wrapper.visit(collect)
    original, textless = _dump(text), _dump(text, strings=False)
    out: list[Mutant] = []
    seen: set[str] = set()
    operators = [*mutation_operators, *_OWN]
    for node, line in collect.found:
        if _docstring(node):
            continue
        for kind, operator in operators:
            if not isinstance(node, kind):
                continue
            for replacement in operator(node):
                mutated = module.deep_replace(node, replacement)
                assert isinstance(mutated, cst.Module)
                code = mutated.code
                if code == text or code in seen:
                    continue
                seen.add(code)
                out.append(
                    Mutant(
                        path=path,
                        line=line,
                        operator=getattr(operator, "__name__", str(operator)),
                        before=module.code_for_node(node).strip()[:200],
                        after=module.code_for_node(replacement).strip()[:200],
                        text=code,
                        equivalent=_dump(code) == original,
                        text_only=_dump(code, strings=False) == textless,
                    )
                )
    return out


def mutants_of(texts: Mapping[str, str], patch: bytes) -> list[Mutant]:
    """The mutants of each Python file the reference ``patch`` adds lines to.

    Args:
        texts: path -> the file's text after the reference (Python files only).
        patch: the reference patch.
    """
    added = added_lines(patch)
    return [
        m for path in sorted(texts) for m in mutate_file(path, texts[path], added.get(path, set()))
    ]


def spread(items: Sequence[T], budget: int) -> list[T]:
    """At most ``budget`` of ``items``, evenly spaced over them (deterministic)."""
    if len(items) <= budget:
        return list(items)
    step = len(items) / budget
    return [items[int(i * step)] for i in range(budget)]
