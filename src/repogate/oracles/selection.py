"""Which base-passing tests a change can affect, from per-test coverage recorded at the base.

The base's whole suite runs once under coverage with one context per test (the node id; setup,
call and teardown together), cached per base state (:mod:`repogate.oracles.base_suite`). A
candidate's change is compared with the base file by file, at the level of definitions (``ast``,
so comments and formatting count for nothing):

- a function or method whose code changed selects every test that executed a line of it at the
  base;
- a new, undecorated function whose name the base module did not bind (nor a builtin's, nor a
  dunder; as a method, only in a class without bases) may still be reached by name: ``getattr``,
  ``hasattr``, a ``__getattr__``, a dispatch table keyed by strings, a registry, ``__all__``, an
  entry point, or a name built at run time (``getattr(self, "visit_" + kind)``). So:

  - when its name occurs as a whole word anywhere in the base tree (any file: an identifier, a
    string constant, a configuration entry), the whole suite runs;
  - otherwise a new method selects every test that executed a line of its class at the base, and
    a new module-level function every test that executed a line of its module.

  A removed or renamed function, and any change to module- or class-level code (a new class,
  ``__all__``, ``__init_subclass__``, a registration), falls back to the whole suite (below).

Selection cannot be trusted, and the whole suite runs, when a change reaches code that no
per-test context sees, or that the tests may read without importing. Each rule, with the path
that triggered it, is recorded as the fallback reason:

- a file that is added, deleted, a symbolic link, or changes type (a new module can shadow another,
  a deleted one breaks its importers);
- ``conftest.py``, ``setup.py``, ``sitecustomize.py`` / ``usercustomize.py`` and any non-Python file
  (configuration, packaging, data the tests read), except changelog-like documents that no test
  collects and no Python file of the tree names;
- module-level or class-level code that changed (constants, imports, class attributes, a
  decorator, which may register the function elsewhere; a removed or renamed function): it runs
  at import, outside every test's context;
- a changed function that ran outside every test (at import or collection time);
- a changed Python file that never ran under coverage at the base (not imported by the tests, run in
  a subprocess, or installed outside the checkout), or that does not parse;
- a child process the base's tests started was still running after a test (a server or worker
  other tests may use), or one that may run the checkout's code (a fork, or a Python or a path
  of the checkout on its command line; not a program such as matplotlib's ``fc-list``) was
  started outside every test (at import or collection): what runs in a child is measured in
  no context, whoever uses it;
- no coverage at all (it could not be installed or recorded).

Base-passing tests that have no context in the coverage run (they failed there, or their id was
spelled differently) are always selected, and so are those that started a child process at the
base (a CLI run with ``subprocess``, a ``multiprocessing`` pool): the child runs code of the
checkout no context records (red team red37: a broken ``main()`` that only a ``subprocess`` test
ran selected no test and was accepted).
"""

from __future__ import annotations

import ast
import builtins
import fnmatch
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from repogate._model import FrozenModel

_ALWAYS_WHOLE = frozenset({"conftest.py", "setup.py", "sitecustomize.py", "usercustomize.py"})
_INERT_DOCUMENTS = (
    "CHANGES*",
    "CHANGELOG*",
    "HISTORY*",
    "NEWS*",
    "AUTHORS*",
    "changelog.d/*",
    "newsfragments/*",
    "changes/*",
)


@dataclass(frozen=True)
class FileChange:
    """One path changed from the base to the tested tree.

    Attributes:
        path: the path relative to the checkout (``/`` separators).
        status: git's letter: ``A`` added, ``M`` modified, ``D`` deleted, ``T`` type changed.
        before: the file's bytes at the base (None when added).
        after: the file's bytes in the tested tree (None when deleted).
        is_symlink: the path is a symbolic link on either side.
    """

    path: str
    status: str
    before: bytes | None
    after: bytes | None
    is_symlink: bool = False


class CoverageMap(FrozenModel):
    """Per-test coverage of the base suite: which lines of which file each test executed.

    Attributes:
        tests: test id -> checkout-relative file -> executed line numbers (1-based).
        untested: checkout-relative file -> lines executed outside every test's context (import,
            collection, session fixtures set up before the first test).
        spawning: the tests whose setup, call or teardown started a child process (what runs
            there is in no context).
        lingering: the tests after which a child process was still running (it may serve later
            tests).
        spawned_outside: a child process that may run the checkout's code was started outside
            every test (import, collection).
    """

    tests: dict[str, dict[str, tuple[int, ...]]]
    untested: dict[str, tuple[int, ...]]
    spawning: tuple[str, ...] = ()
    lingering: tuple[str, ...] = ()
    spawned_outside: bool = False

    def files(self) -> set[str]:
        """Return every file with at least one executed line, in any context."""
        return {f for lines in self.tests.values() for f in lines} | set(self.untested)


class Selection(FrozenModel):
    """The tests to run on a candidate, or the whole suite and why.

    Attributes:
        whole: True when selection cannot be trusted; every base-passing test runs.
        reasons: one sentence per fallback rule that fired (empty when ``whole`` is False).
        tests: the base-passing ids to run (every one of them when ``whole``), sorted.
        changed_units: the changed functions that drove the selection, as ``path::qualname``.
    """

    whole: bool
    reasons: tuple[str, ...]
    tests: tuple[str, ...]
    changed_units: tuple[str, ...]


@dataclass(frozen=True)
class _Unit:
    qualname: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    owner: ast.ClassDef | None

    @property
    def body_lines(self) -> range:
        end = self.node.end_lineno or self.node.body[-1].lineno
        return range(self.node.body[0].lineno, end + 1)

    @property
    def all_lines(self) -> range:
        first = min([self.node.lineno, *(d.lineno for d in self.node.decorator_list)])
        return range(first, self.body_lines.stop)

    def dump(self) -> str:
        return ast.dump(self.node, include_attributes=False)

    def decorators(self) -> list[str]:
        return [ast.dump(d, include_attributes=False) for d in self.node.decorator_list]


class _Skeleton(ast.NodeTransformer):
    """Replace every function defined at module or class level by a placeholder naming it.

    Functions named in ``leave_out`` are dropped instead (new definitions, compared apart).
    """

    def __init__(self, leave_out: Collection[str] = ()) -> None:
        self.leave_out = set(leave_out)
        self.classes: list[ast.ClassDef] = []
        self.class_lines: dict[str, range] = {}
        self.units: dict[str, _Unit] = {}

    def _unit(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST | None:
        qualname = ".".join([*(c.name for c in self.classes), node.name])
        key, n = qualname, 1
        while key in self.units:  # the same name defined twice (if/else branches)
            n += 1
            key = f"{qualname}#{n}"
        self.units[key] = _Unit(key, node, self.classes[-1] if self.classes else None)
        return None if key in self.leave_out else ast.Expr(ast.Constant(f"def {key}"))

    visit_FunctionDef = _unit
    visit_AsyncFunctionDef = _unit

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        qualname = ".".join([*(c.name for c in self.classes), node.name])
        self.class_lines.setdefault(qualname, range(node.lineno, (node.end_lineno or 0) + 1))
        self.classes.append(node)
        self.generic_visit(node)
        self.classes.pop()
        return node


@dataclass(frozen=True)
class _Parsed:
    skeleton: str
    units: dict[str, _Unit]
    bound: set[str]
    class_lines: dict[str, range]


def _parse(source: bytes, leave_out: Collection[str] = ()) -> _Parsed | None:
    """Parse a module into its skeleton, its functions and the names bound outside functions."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    walker = _Skeleton(leave_out)
    stripped = walker.visit(tree)
    bound = {n.id for n in ast.walk(stripped) if isinstance(n, ast.Name)}
    bound |= {n.name for n in ast.walk(stripped) if isinstance(n, ast.ClassDef)}
    bound |= {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(stripped)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    bound |= {u.node.name for u in walker.units.values()}
    dump = ast.dump(stripped, include_attributes=False)
    return _Parsed(dump, walker.units, bound, walker.class_lines)


_DYNAMIC_LOOKUP = frozenset({"__getattr__", "__getattribute__", "__dir__"})


def _new_unit_is_inert(unit: _Unit, before: _Parsed) -> bool:
    """Whether adding ``unit`` changes nothing the base's tests could observe by itself.

    Not when it is decorated, defined twice, a dunder, shadows a builtin or a name the base bound,
    or is a method of a class that inherits (it may override) or looks attributes up dynamically.
    """
    name = unit.node.name
    if unit.node.decorator_list or "#" in unit.qualname or name.startswith("__"):
        return False
    if name in before.bound or name in dir(builtins):
        return False
    if unit.owner is None:
        return True
    own = {n.name for n in unit.owner.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    return not unit.owner.bases and not unit.owner.keywords and not own & _DYNAMIC_LOOKUP


@dataclass(frozen=True)
class _FileVerdict:
    reason: str = ""
    units: tuple[_Unit, ...] = ()
    scopes: tuple[tuple[str, range], ...] = ()  # (label, base lines): tests that ran one are chosen


def _scope_of(unit: _Unit, before: _Parsed, source: bytes) -> tuple[str, range]:
    """The base lines a new unit's tests ran: its class's (a method), else the whole module's."""
    owner = unit.qualname.rpartition(".")[0]
    if owner and owner in before.class_lines:
        return f"{unit.qualname} (new, in class {owner})", before.class_lines[owner]
    return f"{unit.qualname} (new, in its module)", range(1, source.count(b"\n") + 2)


def _compare_python(
    change: FileChange, untested: Collection[int], named_at_base: Collection[str]
) -> _FileVerdict:
    """Compare a modified Python file at the definition level."""
    before = _parse(change.before or b"")
    after = _parse(change.after or b"")
    if before is None or after is None:
        return _FileVerdict(f"{change.path} does not parse on one side")
    removed = sorted(set(before.units) - set(after.units))
    if removed:
        return _FileVerdict(f"{change.path}: {', '.join(removed)} removed or renamed")
    added = sorted(set(after.units) - set(before.units))
    scopes = []
    for name in added:
        unit = after.units[name]
        if not _new_unit_is_inert(unit, before):
            return _FileVerdict(f"{change.path}: new {name} may change existing behaviour")
        if unit.node.name in named_at_base:
            return _FileVerdict(
                f"{change.path}: new {name}: the base names {unit.node.name!r} (it may be "
                "looked up by name: getattr, a dispatch table, a registry, an entry point)"
            )
        scopes.append(_scope_of(unit, before, change.before or b""))
    trimmed = _parse(change.after or b"", leave_out=added)
    if trimmed is None or trimmed.skeleton != before.skeleton:
        return _FileVerdict(f"module- or class-level code of {change.path} changed")
    changed = [u for name, u in before.units.items() if u.dump() != after.units[name].dump()]
    for unit in changed:
        if unit.decorators() != after.units[unit.qualname].decorators():
            return _FileVerdict(f"decorators of {change.path}::{unit.qualname} changed")
        if set(unit.body_lines) & set(untested):
            return _FileVerdict(
                f"{change.path}::{unit.qualname} runs outside every test (import or collection)"
            )
    return _FileVerdict(units=tuple(changed), scopes=tuple(scopes))


def _documentish(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return any(
        fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(name, pattern)
        for pattern in _INERT_DOCUMENTS
    )


def _inert_document(path: str, base_ids: Collection[str], named: Collection[str]) -> bool:
    name = path.rsplit("/", 1)[-1]
    collected = any(t.split("::", 1)[0] == path for t in base_ids)
    return _documentish(path) and not collected and name not in named


@dataclass(frozen=True)
class Lookups:
    """The words :func:`select` needs looked up first, read by the caller from the trees.

    Attributes:
        documents: file names of changed changelog-like documents: does a Python file of the
            tested tree contain the name (a test may read a document it names)?
        new_names: names of the functions the changes add: does the base tree name them as a
            whole word (:func:`repogate.git.names_word`)?
    """

    documents: tuple[str, ...]
    new_names: tuple[str, ...]


def lookups(changes: Sequence[FileChange], coverage: CoverageMap | None) -> Lookups:
    """Return the words to look up before :func:`select` (none without coverage: it runs all).

    Args:
        changes: the changes :func:`select` is given.
        coverage: the coverage :func:`select` is given.
    """
    if coverage is None:
        return Lookups((), ())
    documents: list[str] = []
    names: list[str] = []
    for change in changes:
        name = change.path.rsplit("/", 1)[-1]
        if change.is_symlink or change.status != "M" or name in _ALWAYS_WHOLE:
            continue
        if not name.endswith(".py"):
            documents += [name] * _documentish(change.path)
            continue
        before = _parse(change.before or b"")
        after = _parse(change.after or b"")
        if before is not None and after is not None:
            added = [after.units[u] for u in sorted(set(after.units) - set(before.units))]
            names += [u.node.name for u in added if _new_unit_is_inert(u, before)]
    return Lookups(tuple(dict.fromkeys(documents)), tuple(dict.fromkeys(names)))


def select(
    changes: Sequence[FileChange],
    base_passing: Collection[str],
    coverage: CoverageMap | None,
    named_by_python: Collection[str],
    named_at_base: Collection[str],
    *,
    no_coverage_reason: str = "no coverage was recorded at the base",
) -> Selection:
    """Select the base-passing tests the changes can affect (or fall back to all of them).

    Args:
        changes: every path that differs from the base in the tree to test (hidden-test paths
            left out: they are the same on both sides).
        base_passing: ids that passed at the base in the whole-suite run.
        coverage: the base suite's per-test coverage, or None when none could be recorded.
        named_by_python: the :attr:`Lookups.documents` that a Python file of the tree contains
            (a test may read a document it names).
        named_at_base: the :attr:`Lookups.new_names` that occur anywhere in the base tree
            (:func:`repogate.git.names_word`); read from the base, never a tree tests wrote.
        no_coverage_reason: the fallback reason to record when ``coverage`` is None.

    Returns:
        The selection, with every fallback rule that fired.
    """
    everything = tuple(sorted(base_passing))
    if not changes:  # nothing differs from the base: nothing can have regressed
        return Selection(whole=False, reasons=(), tests=(), changed_units=())
    if coverage is None:
        return Selection(
            whole=True, reasons=(no_coverage_reason,), tests=everything, changed_units=()
        )
    measured = coverage.files()
    reasons: list[str] = []
    if coverage.lingering:
        reasons.append(
            f"a child process the base's tests started was still running after "
            f"{coverage.lingering[0]} (a server or worker later tests may use: what runs in it is "
            "in no test's coverage)"
        )
    if coverage.spawned_outside:
        reasons.append(
            "the base's tests started a child process outside every test (import or collection): "
            "what runs in it is in no test's coverage"
        )
    units: list[tuple[str, _Unit]] = []
    scopes: list[tuple[str, str, range]] = []
    for change in changes:
        name = change.path.rsplit("/", 1)[-1]
        if change.is_symlink or change.status != "M":
            word = {"A": "added", "D": "deleted"}.get(change.status, "changed type")
            reasons.append(f"{change.path} {'is a symbolic link' if change.is_symlink else word}")
        elif name in _ALWAYS_WHOLE:
            reasons.append(f"{change.path} changed (it configures or installs the tests)")
        elif not name.endswith(".py"):
            if not _inert_document(change.path, base_passing, named_by_python):
                reasons.append(f"non-Python file {change.path} changed (the tests may read it)")
        elif change.path not in measured:
            reasons.append(f"{change.path} never ran under coverage at the base")
        else:
            untested = coverage.untested.get(change.path, ())
            verdict = _compare_python(change, untested, named_at_base)
            if verdict.reason:
                reasons.append(verdict.reason)
            units += [(change.path, u) for u in verdict.units]
            scopes += [(change.path, label, lines) for label, lines in verdict.scopes]
    if reasons:
        return Selection(whole=True, reasons=tuple(reasons), tests=everything, changed_units=())
    spawning = set(coverage.spawning)
    chosen = {t for t in base_passing if t not in coverage.tests or t in spawning}
    reached = [(path, set(unit.all_lines)) for path, unit in units]
    reached += [(path, set(lines)) for path, _label, lines in scopes]
    for test, files in coverage.tests.items():
        if test in base_passing and any(set(files.get(p, ())) & lines for p, lines in reached):
            chosen.add(test)
    return Selection(
        whole=False,
        reasons=(),
        tests=tuple(sorted(chosen)),
        changed_units=(
            *(f"{p}::{u.qualname}" for p, u in units),
            *(f"{p}::{label}" for p, label, _lines in scopes),
        ),
    )
