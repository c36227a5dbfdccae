"""repogate's pytest plugin for graded runs, copied into the harness's tool folder.

Loaded into the environment under test with ``-p repogate_regress`` (the tool folder on
PYTHONPATH); repogate itself never imports it. Three switches, all environment variables:

- ``REPOGATE_COVERAGE_FILE``: record coverage (``coverage`` from the tool folder) of files under
  the working directory into that data file, switching the dynamic context to each test's node id
  for its setup, call and teardown, and back to the empty context between tests (what
  ``pytest-cov --cov-context=test`` does, minus the phase suffix); and beside it
  (``<file>.children.json``, :data:`CHILDREN_SUFFIX`) the tests that started a child process
  (what runs there is measured in no context) and those after which one was still running (a
  server or worker other tests may use): see :func:`_children_now`;
- ``REPOGATE_SELECT``: a file of node ids, one a line; tests whose id is not listed are
  deselected, as with ``--deselect`` (a line may also give an id cut at its first blank, as
  SWE-bench's datasets do, or a file path, keeping the whole file: see :func:`selected`);
- ``REPOGATE_HIDDEN_TESTS``: the hidden test files (paths relative to the rootdir, one a line).
  Each non-strict XPASS then gets a JUnit property ``repogate_xpass`` (``item.user_properties``,
  written on the ``<testcase>``): ``hidden`` when the xfail is the hidden tests' own, otherwise a
  sentence saying why not (read by :mod:`repogate.oracles.junit`). pytest's JUnit writer puts a
  non-strict XPASS down as a plain pass, so without this the origin of the mark is lost.

An xfail is the hidden tests' own when the test's file is a hidden test file, at least one of its
xfail marks is declared statically there and can make it non-strict, and every xfail mark on it is
declared statically there: a decorator on the function, a class's ``pytestmark`` or decorator, the
module's ``pytestmark``, or ``pytest.param(..., marks=...)`` of its parametrization (pytest keeps
the very ``Mark`` objects those declarations made, so identity tells them apart). A mark added at
run time (``item.add_marker`` from a conftest, ``pytest_collection_modifyitems``, a fixture's
``request.applymarker``, the code under test) is not, whichever file adds it. Code that rewrites
the hidden test module's objects in process before collection is not detected (the same limit as
for a forged report).

It must run on every pytest the target may pin, so it uses only old, stable hooks.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_COVERAGE_FILE = os.environ.get("REPOGATE_COVERAGE_FILE")
_SELECT = os.environ.get("REPOGATE_SELECT")
_HIDDEN = os.environ.get("REPOGATE_HIDDEN_TESTS")
XPASS_PROPERTY = "repogate_xpass"
HIDDEN_MARK = "hidden"
_cov: Any = None
try:  # now, before any checkout code runs (the checkout is first on sys.path)
    import resource as _resource
except ImportError:
    _resource = None  # type: ignore[assignment]
CHILDREN_SUFFIX = ".children.json"
"""Beside the coverage data file: which tests started child processes (read by
:func:`repogate.oracles.regress_tools.read_coverage`)."""
_SPAWN_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
     "os.forkpty", "pty.spawn"}
)  # fmt: skip
_current = [""]  # the test under way ("" between tests)
_spawning: set[str] = set()  # ids whose setup, call or teardown started a child process
_lingering: list[str] = []  # ids after which a child process was still running


def _words(value: Any) -> list[str]:
    """The strings of an audit event's argument: a command line, a path, a list of either."""
    if isinstance(value, (str, bytes, os.PathLike)):
        text = os.fsdecode(value)
        return [text, *text.split()]
    if isinstance(value, (list, tuple)):
        return [w for item in value for w in _words(item)]
    return []


def _may_run_checkout_code(event: str, args: Any) -> bool:
    """Whether a child process an audit event starts may run code of the checkout.

    A fork runs this very Python; a program is taken to run the checkout's code when any word of
    its command line names a Python (``python``, ``sys.executable``) or an existing path under the
    working directory (a script of the checkout, a ``bash ./run.sh`` that may start Python).
    Another program (matplotlib's ``fc-list`` at import, ``git``, ``true``) runs none of it, and
    coverage could record none of it anyway (seaborn's base started one at import, and with the
    first version of this rule every seaborn candidate ran its whole suite).
    """
    if event in ("os.fork", "os.forkpty"):
        return True
    words = _words(list(args) if isinstance(args, tuple) else args)
    cwd = Path.cwd()
    for word in words:
        if "python" in word.lower() or word == sys.executable:
            return True
        try:
            path = cwd / word  # an absolute word stays itself
            if cwd in path.parents and path.exists():
                return True
        except (OSError, ValueError):  # a word no file system takes (a NUL)
            continue
    return False


def _audit(event: str, args: Any) -> None:
    if event in _SPAWN_EVENTS and (_current[0] or _may_run_checkout_code(event, args)):
        _spawning.add(_current[0])


def _children_usage() -> Any:
    """What the waited-for child processes used so far (a new one always adds page faults)."""
    if _resource is None:  # not on this platform
        return None
    used = _resource.getrusage(_resource.RUSAGE_CHILDREN)
    return (used.ru_utime, used.ru_stime, used.ru_minflt, used.ru_majflt, used.ru_nvcsw)


def _children_now() -> bool:
    """Whether a child process of this one is running (Linux's ``/proc/self/task/*/children``).

    A multiprocessing ``spawn`` or ``forkserver`` worker starts with no audit event; it is seen
    by its resource use once waited for, or here while it runs.
    """
    try:
        tasks = os.listdir("/proc/self/task")  # noqa: PTH208 (Python 3.8 runs this too)
    except OSError:
        return False
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children") as found:  # noqa: PTH123
                if found.read().split():
                    return True
        except OSError:
            continue
    return False


if _COVERAGE_FILE:
    import coverage

    _cov = coverage.Coverage(
        data_file=_COVERAGE_FILE, source=[str(Path.cwd())], config_file=False, branch=False
    )
    _cov.start()
    if hasattr(sys, "addaudithook"):
        sys.addaudithook(_audit)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Generator[None, None, None]:
    """Record what one test executes (setup, call, teardown) under its node id.

    Also whether it started a child process (an audit event, or children's resource use grew)
    or left one running.
    """
    if _cov is not None:
        _cov.switch_context(item.nodeid)
        _current[0] = item.nodeid
        before = _children_usage()
    yield
    if _cov is not None:
        _cov.switch_context("")
        _current[0] = ""
        if _children_usage() != before:
            _spawning.add(item.nodeid)
        if _children_now():
            _lingering.append(item.nodeid)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Generator[None, Any, None]:
    """Record where the xfail mark of a non-strict XPASS comes from (see the module docs)."""
    outcome = yield
    if _HIDDEN is None or call.when != "call":
        return
    report = outcome.get_result()
    if report.passed and hasattr(report, "wasxfail"):
        # Appended to the item: the teardown report copies it, and the JUnit writer writes it.
        item.user_properties.append((XPASS_PROPERTY, mark_origin(item, _HIDDEN.splitlines())))


def mark_origin(item: Any, hidden_files: list[str]) -> str:
    """Return ``hidden`` when ``item``'s xfail is the hidden tests' own, else why not."""
    config = item.config
    root = Path(str(getattr(config, "rootpath", None) or config.rootdir)).resolve()
    path = Path(str(getattr(item, "path", None) or item.fspath)).resolve()
    try:
        relative = path.relative_to(root).as_posix()  # not is_relative_to: Python 3.8 runs this too
    except ValueError:
        relative = ""
    if relative not in hidden_files:
        return "the test's file is not a hidden test file"
    declared = _static_marks(item)
    marks = list(item.iter_markers(name="xfail"))
    if any(all(m is not d for d in declared) for m in marks):
        return "an xfail mark was added at run time, not declared in the hidden test file"
    strict_default = bool(config.getini("xfail_strict"))
    if not any(not m.kwargs.get("strict", strict_default) for m in marks):
        return "no xfail mark of the hidden test file makes it non-strict"
    return HIDDEN_MARK


def _unpacked(obj: Any) -> list[Any]:
    found = obj.get("pytestmark", []) if isinstance(obj, dict) else []
    listed = found if isinstance(found, list) else [found]
    return [getattr(m, "mark", m) for m in listed]


def _static_marks(item: Any) -> list[Any]:
    """The marks declared in the test's own module: function, classes, module, parameters."""
    module = getattr(item, "module", None)
    if module is None:
        return []
    name = module.__name__
    marks: list[Any] = _unpacked(vars(module))
    function = getattr(item, "function", None)
    if function is not None and getattr(function, "__module__", None) == name:
        marks += _unpacked(vars(function))
    for klass in getattr(getattr(item, "cls", None), "__mro__", ()):
        if getattr(klass, "__module__", None) == name:
            marks += _unpacked(dict(vars(klass)))
    callspec = getattr(item, "callspec", None)
    marks += [getattr(m, "mark", m) for m in getattr(callspec, "marks", ())]
    return marks


def selected(nodeid: str, wanted: Any) -> bool:
    """Return whether a collected test is one of ``wanted`` (see ``REPOGATE_SELECT``).

    A line names a test by its node id as the JUnit report spells it (pytest 3's instance part
    ``::()::`` dropped), by that id cut at its first blank as SWE-bench's datasets spell it, or
    names a whole file.
    """
    plain = nodeid.replace("::()::", "::")
    words = plain.split()
    return (
        plain in wanted or (bool(words) and words[0] in wanted) or plain.split("::", 1)[0] in wanted
    )


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Keep only the listed tests when a selection is given."""
    if not _SELECT:
        return
    lines = Path(_SELECT).read_text(encoding="utf-8").splitlines()
    wanted = {line for line in lines if line.strip()}
    kept = [i for i in items if selected(i.nodeid, wanted)]
    dropped = [i for i in items if not selected(i.nodeid, wanted)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_unconfigure(config: Any) -> None:
    """Stop and save the coverage data, and which tests started child processes."""
    if _cov is not None:
        _cov.stop()
        _cov.save()
        children = {
            "spawning": sorted(_spawning - {""}),
            "lingering": _lingering,
            "outside": "" in _spawning,  # at import or collection, outside every test
        }
        with open(f"{_COVERAGE_FILE}{CHILDREN_SUFFIX}", "w", encoding="utf-8") as out:  # noqa: PTH123
            json.dump(children, out)
