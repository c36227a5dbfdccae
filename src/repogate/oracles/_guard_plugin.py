"""repogate's guard: notices the candidate's code changing pytest's test-running machinery.

Copied by the harness as ``repogate_guard.py`` into a harness-owned folder on PYTHONPATH and
loaded into every graded pytest session with ``-p repogate_guard``; repogate itself never
imports it. With ``REPOGATE_GUARD_DIR`` set it writes ``guard-<pid>.json`` there: when it was
loaded, whether it saw the session finish, and every change it found. Without it, it does
nothing.

At load (``-p`` plugins load after pytest's own plugins and before any conftest or test file)
it records every function and class of ``pytest``, ``_pytest.*`` and ``pluggy.*``, and the
functions of those classes (``Function.runtest``, ``TestReport.from_item_and_call``,
``CallInfo.from_call``, junitxml's ``LogXML`` ...). After each test, cheaply, and at session
finish, fully, it compares them, and reads the implementations registered for the hooks that
run a test and report it (``pytest_pyfunc_call``, ``pytest_runtest_*``,
``pytest_report_teststatus``, ...). A change or a hook implementation is accepted only when its
code lies in a folder the interpreter was given before the session's code ran (the standard
library, the environment's packages, the harness's plugin folders: :func:`_installed`; not a
folder the code makes or adds later, such as its temporary folder) or in an oracle file of the
graded tree: a ``conftest.py`` or a helper of a tests folder (gate I refuses every edit to those:
they are the base's or the hidden tests' own) that the harness listed before the run
(``repogate_oracles.json`` beside this file: path and SHA-256) and that still holds those bytes.
A file the session's code writes into the checkout (``tests/_helper.py``, a new or rewritten
``conftest.py``) is the candidate's code, and a listed file trusted once and changed later is
recorded too. Anything else (``pytest.Function.runtest = lambda self: None`` in library code)
is recorded, and the harness then trusts none of the session's outcomes.

With ``REPOGATE_RUNNER_UNDER_TEST=1`` (the contract's ``[oracles] runner_under_test``: the
repository is pytest itself) the checkout's own ``pytest``, ``_pytest`` and ``py`` modules, found
below a checkout folder on ``sys.path`` when the guard loads, are trusted as the runner
(:func:`_runner_file`), and only those: code from any other file of the checkout is judged as
above. The record then says ``runner_under_test`` and how many runner files were trusted.

With ``REPOGATE_GUARD_READS=1`` (runs on the base or the reference, never on a candidate) it
also starts the read trace (:mod:`repogate.oracles._guard_reads`, copied beside it as
``repogate_reads.py``), and its record's ``reads`` lists the checkout's data files test code and
product code opened (:mod:`repogate.oracles.graded_reads`).

It runs inside the process the candidate's code runs in: that code can find and defeat it. It
raises the bar; it is no boundary. It must run on every pytest the target may pin, so it uses
only old, stable hooks and tolerates missing names.
"""

# ruff: noqa: PTH100, PTH105, PTH109, PTH112, PTH113, PTH118, PTH120, PTH123, PTH206
# (os.path and open(): the guard imports as little as it can into the session it watches)
from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

_OUT = os.environ.get("REPOGATE_GUARD_DIR")
_RUNNER = os.environ.get("REPOGATE_RUNNER_UNDER_TEST") == "1"
_RUNNER_PACKAGES = ("pytest", "_pytest", "py")  # repogate.vocabulary.RUNNER_PACKAGES


def _from_boot() -> bytes | None:
    """The key the harness's bootstrap took (``repogate_boot.py`` beside this file), or None.

    The bootstrap reads it before anything of the checkout can be imported and holds it in a
    one-shot function, a local of its ``main`` frame, an ancestor of this import; the files of
    the checkout its audit hook saw imported before this (it then withdrew the key: b"") go to
    :data:`_EARLY`.
    """
    boot = os.path.join(os.path.dirname(os.path.realpath(__file__)), "repogate_boot.py")
    frame: types.FrameType | None = sys._getframe()
    while frame is not None:
        code = frame.f_code
        if code.co_name == "main" and os.path.realpath(code.co_filename) == boot:
            take = frame.f_locals.get("take_key")
            key = take() if callable(take) else None
            early = frame.f_locals.get("early")
            if isinstance(early, list) and key is not None:
                _EARLY.extend(str(e) for e in early)
            return key
        frame = frame.f_back
    return None


def _signer() -> Callable[[bytes], str]:
    """Take the run's key, from the harness's bootstrap or the pipe the harness handed over.

    The harness writes a fresh key into a pipe whose reading end only the test command's own
    process inherits (``REPOGATE_GUARD_KEY_FD`` names it). ``python -m pytest`` is started
    through the bootstrap, which reads it before the checkout is importable; any other command
    shape leaves it to this, at the guard's load (before conftest and test modules, but after
    whatever pytest's start-up imported), with the bootstrap's own reader. Without a key,
    records go unsigned (the harness trusts none).
    """
    key = _from_boot()
    if key is not None:
        os.environ.pop("REPOGATE_GUARD_KEY_FD", "")
        return _mac(key)
    from repogate_boot import read_key  # type: ignore[import-not-found]  # copied beside this file

    return _mac(read_key())


def _mac(key: bytes) -> Callable[[bytes], str]:
    def sign(data: bytes) -> str:
        return hmac.new(key, data, hashlib.sha256).hexdigest() if key else ""

    return sign


_EARLY: list[str] = []  # files of the checkout imported before this loaded (the bootstrap saw)
_sign = _signer()
_ROOT = os.path.realpath(os.getcwd())
_PREFIXES = ("pytest", "_pytest", "pluggy")
_HOOKS = (
    "pytest_pyfunc_call",
    "pytest_runtest_protocol",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_runtest_teardown",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_report_teststatus",
    "pytest_runtestloop",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
)
# Checked after every test (identity only); the whole record is compared at session finish.
_HOT = (
    ("_pytest.python", "Function", "runtest"),
    ("_pytest.python", "Function", "setup"),
    ("_pytest.python", None, "pytest_pyfunc_call"),
    ("_pytest.runner", None, "runtestprotocol"),
    ("_pytest.runner", None, "call_and_report"),
    ("_pytest.runner", None, "call_runtest_hook"),
    ("_pytest.runner", None, "pytest_runtest_makereport"),
    ("_pytest.runner", "CallInfo", "from_call"),
    ("_pytest.reports", "TestReport", "from_item_and_call"),
    ("_pytest.reports", "TestReport", "__init__"),
    ("_pytest.junitxml", "LogXML", "pytest_runtest_logreport"),
    ("_pytest.junitxml", "LogXML", "pytest_sessionfinish"),
)

_DESCRIPTORS = (classmethod, staticmethod, property)
_ORACLE_FOLDERS = {"tests", "test", "testing"}

_READS = bool(_OUT) and os.environ.get("REPOGATE_GUARD_READS") == "1"

_found: list[str] = []
_finished = False
_passed: set[str] = set()  # ids whose call phase passed, as pytest reported it
_running: list[str] = []  # the test whose protocol is under way (logstart to logfinish)
_interrupted: list[str] = []  # set when pytest's session was cut short (KeyboardInterrupt, exit)
_PHASE = os.path.join("_pytest", "runner.py")
_PHASE_RUNNERS = ("call_runtest_hook", "from_call")  # run one phase: pytest 3 to 8; pytest 9
_crashed: list[str] = []  # per internal error: the test under way then ("" outside any test)
_MAX_CRASHED = 10
_FILES: dict[str, bool] = {}
_RELIED: set[str] = set()  # oracle files (relative) whose code was trusted
_RUNNER_TRUSTED: set[str] = set()  # runner files of the checkout (real paths) trusted


def _checkout_roots() -> tuple[str, ...]:
    """The checkout's folders on ``sys.path`` at load (its import roots), the top last."""
    found = []
    for folder in sys.path:
        real = os.path.realpath(folder) if folder else ""
        if real and (real + os.sep).startswith(_ROOT + os.sep) and real not in found:
            found.append(real)
    return tuple(sorted(found, key=len, reverse=True))


def _runner_file(real: str) -> bool:
    """True when ``real`` (a checkout file) is the runner's: ``pytest``, ``_pytest`` or ``py``.

    Only with ``REPOGATE_RUNNER_UNDER_TEST=1``, and only below one of the checkout's import
    roots as the session was started (``src/_pytest/runner.py`` with ``src`` on the path).
    """
    if not _RUNNER:
        return False
    for root in _CHECKOUT_ROOTS:
        if real.startswith(root + os.sep):
            head = os.path.relpath(real, root).split(os.sep, 1)[0]
            if head in _RUNNER_PACKAGES or head in [f"{n}.py" for n in _RUNNER_PACKAGES]:
                _RUNNER_TRUSTED.add(real)
                return True
            return False
    return False


def _listed() -> dict[str, list[Any]]:
    """The graded tree's oracle files the harness listed before the run.

    ``{relative path: [sha256, inode, change time in ns]}`` (``repogate.oracles.guard``'s
    ``oracle_files``); empty when the list cannot be read (then no checkout file is trusted).
    """
    here = os.path.dirname(os.path.realpath(__file__))
    try:
        with open(os.path.join(here, "repogate_oracles.json"), encoding="utf-8") as handle:
            files = json.load(handle).get("files")
    except (OSError, ValueError, AttributeError):
        return {}
    return dict(files) if isinstance(files, dict) else {}


_ORACLES = _listed()


def _watched() -> dict[str, types.ModuleType]:
    return {
        name: module
        for name, module in list(sys.modules.items())
        if isinstance(module, types.ModuleType) and name.split(".", 1)[0] in _PREFIXES
    }


def _snapshot() -> dict[str, Any]:
    """Every function and class of the watched modules, and the functions of their classes."""
    seen: dict[str, Any] = {}
    for name, module in _watched().items():
        for attr, value in list(vars(module).items()):
            if callable(value) and not attr.startswith("__"):
                seen[f"{name}.{attr}"] = value
                if isinstance(value, type) and value.__module__ == name:
                    for member, inner in list(vars(value).items()):
                        if callable(inner) or isinstance(inner, _DESCRIPTORS):
                            seen[f"{name}.{attr}.{member}"] = inner
    return seen


def _code(value: Any) -> types.CodeType | None:
    """The code of a function, a method's function or a property's getter; None for others."""
    code = getattr(value, "__code__", None)
    if isinstance(code, types.CodeType):
        return code
    for attr in ("__func__", "fget"):
        code = getattr(getattr(value, attr, None), "__code__", None)
        if isinstance(code, types.CodeType):
            return code
    return None


def _origin(value: Any) -> str | None:
    """The file a value's code comes from, or None when it cannot be told."""
    code = _code(value)
    if code is not None:
        return code.co_filename
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    return getattr(module, "__file__", None)


def _oracle_file(relative: str) -> bool:
    """True for a checkout file gate I lets no patch add or edit (the base's or hidden tests').

    That is a conftest.py, or a file other than a test module in a tests/test/testing folder.
    """
    parts = relative.split(os.sep)
    name = parts[-1]
    if name == "conftest.py":
        return True
    test_module = name.startswith("test_") or name.endswith("_test.py")
    return not test_module and bool(_ORACLE_FOLDERS.intersection(parts[:-1]))


def _in_tests(relative: str) -> bool:
    """True for a Python file in a tests/test/testing folder of the checkout."""
    parts = relative.split(os.sep)
    return parts[-1].endswith(".py") and bool(_ORACLE_FOLDERS.intersection(parts[:-1]))


def _state(relative: str) -> list[Any] | None:
    """``[sha256, inode, change time in ns]`` of the checkout's regular file, or None.

    The file is opened without following a link; a write, even one undone, moves its change time.
    """
    try:
        fd = os.open(
            os.path.join(_ROOT, relative),
            os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0),
        )
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        digest = hashlib.sha256()
        chunk = os.read(fd, 1 << 16)
        while chunk:
            digest.update(chunk)
            chunk = os.read(fd, 1 << 16)
        return [digest.hexdigest(), info.st_ino, info.st_ctime_ns]
    except OSError:
        return None
    finally:
        os.close(fd)


def _intact(relative: str) -> bool:
    """True for an oracle file the harness listed before the run and nobody wrote since.

    With the runner under test, a listed test module counts too: pytest's own tests poke at
    the runner they test (``testing/test_pdb.py`` sets ``_pytest._CustomPdb``). Gate I has
    cleared each (an existing one unedited; a new one naming no runner internals).
    """
    if not _oracle_file(relative) and not (_RUNNER and _in_tests(relative)):
        return False
    listed = _ORACLES.get(relative)
    if listed is None or _state(relative) != listed:
        return False
    _RELIED.add(relative)
    return True


def _check_relied() -> None:
    """Record every oracle file whose code was trusted and that was written since the listing."""
    for relative in sorted(_RELIED):
        if _state(relative) != _ORACLES.get(relative):
            _note(f"oracle file {relative} was changed during the session")


def _trusted(value: Any) -> bool:
    """True when ``value``'s code is installed code (:func:`_installed`) or an oracle file."""
    where = _origin(value)
    if not where or where.startswith("<"):
        return False
    return _trusted_file(where)


def _trusted_file(where: str) -> bool:
    """True when file ``where`` lies in an installed folder, or is an intact listed oracle file.

    Answered once per file name (thousands of values share a hundred files): the first answer
    stands, so a link changed afterwards in the checkout cannot turn a file's answer around.
    """
    known = _FILES.get(where)
    if known is None:
        real = os.path.realpath(where)
        if real.startswith(_ROOT + os.sep):
            known = _runner_file(real) or _intact(os.path.relpath(real, _ROOT))
        else:
            known = any(real.startswith(root + os.sep) for root in _INSTALLED)
        _FILES[where] = known
    return known


def _installed() -> tuple[str, ...]:
    """Folders code may come from and be trusted: the interpreter's and the import path's.

    That is ``sys.prefix`` and its base (the standard library, the environment's packages) and
    every folder on ``sys.path`` when the guard loads (the harness's plugin folders among them),
    but never the checkout, a folder in it or a folder holding it (whose other folders the
    session may write). A folder the session's code adds later (its own temporary folder,
    its private HOME) is not one: code from there is the candidate's.
    """
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *sys.path}
    found = []
    for folder in folders:
        real = os.path.realpath(folder) if folder else ""
        if (
            real
            and os.path.isdir(real)
            and real != "/"
            and not (real + os.sep).startswith(_ROOT + os.sep)
            and not (_ROOT + os.sep).startswith(real + os.sep)
        ):
            found.append(real)
    return tuple(found)


def _planted(value: Any) -> bool:
    """True when ``value``'s code is known to come from the checkout's library code."""
    where = _origin(value)
    return bool(where) and not _trusted(value) and not str(where).startswith("<")


def _where(value: Any) -> str:
    where = _origin(value) or "an unknown place"
    real = os.path.realpath(where) if not where.startswith("<") else where
    return os.path.relpath(real, _ROOT) if real.startswith(_ROOT + os.sep) else where


def _note(message: str) -> None:
    if message not in _found:
        _found.append(message)


def _changed(key: str, now: Any, before: Any) -> bool:
    """A new object, or the same function with other code (``f.__code__ = ...``)."""
    return now is not before or _code(now) is not _CODES.get(key)


def _compare(before: dict[str, Any]) -> None:
    now, modules = _snapshot(), list(_watched())
    for key, value in before.items():
        if key not in now:
            _note(f"{key} was removed")
        elif _changed(key, now[key], value) and not _trusted(now[key]):
            _note(f"{key} was replaced by code from {_where(now[key])}")
    for key, value in now.items():
        if key in before:
            continue
        # A module pytest imported since load brings generated code (dataclass and namedtuple
        # methods come from "<string>"): there, only code known to be the checkout's counts.
        owner = max((m for m in modules if key.startswith(f"{m}.")), key=len, default="")
        fresh = owner not in _LOADED
        if _planted(value) if fresh else not _trusted(value):
            _note(f"{key} was added by code from {_where(value)}")


def _hot() -> tuple[Any, ...]:
    values = []
    for module, cls, attr in _HOT:
        owner: Any = sys.modules.get(module)
        if owner is not None and cls is not None:
            owner = vars(owner).get(cls)
        values.append(vars(owner).get(attr) if owner is not None else None)
        values.append(_code(values[-1]))
    return tuple(values)


def _check_hooks(config: Any) -> None:
    manager = config.pluginmanager
    inner = getattr(manager, "_inner_hookexec", None)
    if inner is not None and not _trusted(inner):
        _note(f"pluggy's hook runner was replaced by code from {_where(inner)}")
    for name in _HOOKS:
        caller = getattr(manager.hook, name, None)
        execute = getattr(caller, "_hookexec", None)
        if execute is not None and not _trusted(execute):
            _note(f"{name}'s hook runner was replaced by code from {_where(execute)}")
    # every hook, not only those that run a test: a collection hook can swap every test's body
    for name, caller in sorted(vars(manager.hook).items()):
        get = getattr(caller, "get_hookimpls", None)
        for impl in get() if callable(get) else ():
            if not _trusted(impl.function):
                _note(f"{name} implemented by code from {_where(impl.function)}")


def _write() -> None:
    if not _OUT:
        return
    record: dict[str, Any] = {
        "schema_version": 2,
        "module": os.path.realpath(__file__),
        "finished": _finished,
        "changes": _found,
        "passed_calls": len(_passed),
    }
    if _crashed:
        record["internal_errors"] = _crashed
    if _interrupted:
        record["interrupted"] = _interrupted[0]
    if _RUNNER:
        record["runner_under_test"] = True
        record["runner_files_trusted"] = len(_RUNNER_TRUSTED)
    if _READS:
        record["reads"] = _trace.reads(_oracle_file)
    record["mac"] = _sign(json.dumps(record, sort_keys=True, separators=(",", ":")).encode())
    target = os.path.join(_OUT, f"guard-{os.getpid()}.json")
    temporary = f"{target}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    os.replace(temporary, target)


_INSTALLED = _installed()
_CHECKOUT_ROOTS = _checkout_roots()
_BEFORE = _snapshot()
_LOADED = frozenset(_watched())
_CODES = {_key: _code(_value) for _key, _value in _BEFORE.items()}
_HOT_BEFORE = _hot()
for _early in _EARLY:  # its code ran before the guard, with the key in memory: it was withdrawn
    _note(f"{_early} of the checkout was imported before the guard loaded (the run is unsigned)")
for _key, _value in _BEFORE.items():  # changed before this plugin loaded (a shadowed import)
    if _planted(_value):
        _note(f"{_key} comes from {_where(_value)}")
_BYTECODE = (".pyc", ".pyo")
_CWD = os.path.abspath(os.getcwd())
_PYCACHE_PREFIX = getattr(sys, "pycache_prefix", None)  # the harness sets none


_TEST_DIRS = frozenset({"tests", "test", "testing"})


def _test_side(bytecode: str) -> bool:
    """Whether checkout-relative ``bytecode`` caches a file of the test suite.

    ``a/__pycache__/name.<tag>.pyc`` caches ``a/name.py`` (a legacy ``a/name.pyc`` sits beside
    it); the source is the suite's as :func:`repogate.tasks.mine.is_test_path` says (under a
    ``tests``/``test``/``testing`` folder, ``test_*.py``, ``*_test.py``, ``conftest.py``), a
    copy here because this plugin imports nothing of repogate (``tests/oracles`` checks they
    agree).
    """
    parts = bytecode.replace(os.sep, "/").split("/")
    folders = parts[:-2] if len(parts) > 1 and parts[-2] == "__pycache__" else parts[:-1]
    name = parts[-1].split(".", 1)[0]
    return (
        bool(_TEST_DIRS.intersection(folders))
        or name.startswith("test_")
        or name.endswith("_test")
        or name == "conftest"
    )


def _bytecode_opened(event: str, args: Any) -> None:
    """Note compiled bytecode of the checkout's tests being opened (a PEP 578 ``open`` event).

    Nothing of the harness's writes bytecode into the checkout (``PYTHONDONTWRITEBYTECODE=1``,
    pytest then writes no cache) and gate I refuses a committed one, so a ``.pyc`` there was
    written by the session's code: pytest's assertion rewriter loads its cache of a test module
    (``tests/__pycache__/test_unit.cpython-311-pytest-9.2.0.pyc``) instead of the source when
    the header matches, and Python a module's ``__pycache__`` entry. Red team red37: product
    code imported by the first graded file wrote one of no-op tests for the second, which was
    collected from it, the bug unfixed. The path is judged as given and as resolved (a
    ``__pycache__`` made a link to a folder elsewhere), and any bytecode opened while
    ``sys.pycache_prefix`` is not what it was at load counts too (pytest and Python then read
    every cache under the prefix the code chose). Only a file that exists is noted (every
    import first tries its cache path).

    In the checkout only bytecode of the test suite's own files counts (:func:`_test_side`):
    product bytecode is no oracle (the candidate writes product source as it likes), and a
    project's own tests write it legitimately (pytest-dev/pytest-5103's suite compiled
    ``src/_pytest/cacheprovider.py`` in a child process with its own environment, and a later
    test imported it: the first version of this watch voided that base run).
    """
    if event != "open" or not args:
        return
    path = args[0]
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str) or not path.endswith(_BYTECODE):
        return
    given, real = os.path.abspath(path), os.path.realpath(path)
    inside = any(
        _test_side(os.path.relpath(p, r))
        for p in (given, real)
        for r in (_ROOT, _CWD)
        if p.startswith(r + os.sep)
    )
    moved = getattr(sys, "pycache_prefix", None) != _PYCACHE_PREFIX
    if not (inside or moved) or not os.path.isfile(real):
        return
    if moved:
        where = f"{path} (compiled bytecode under a sys.pycache_prefix the session's code set)"
    else:
        where = f"{os.path.relpath(given, _CWD)} (compiled bytecode in the checkout, written during the run)"
    _note(f"{where} was opened: Python or pytest runs it instead of its source")


if hasattr(sys, "addaudithook"):
    sys.addaudithook(_bytecode_opened)
if _READS:  # the read trace, copied beside this file (runs on the base or the reference only)
    import repogate_reads as _trace  # type: ignore[import-not-found]

    _trace.start(_ROOT)
_write()


def _from_inside_a_test(what: str) -> None:
    """Note ``what`` when it is done from inside a test's phase or from another thread.

    pytest logs a test's start, reports and finish, and ends its session, from its own runner
    loop on the main thread, never while a phase of a test runs (``call_runtest_hook`` of
    ``_pytest/runner.py`` on the stack for pytest 3 to 8, ``CallInfo.from_call`` for pytest 9,
    which calls the phase's hook directly). The candidate's code called by
    a test can reach the same hooks through ``item.ihook`` and forge a passing report before
    pytest makes the real one (red team); so can a thread it starts.
    """
    if threading.current_thread() is not threading.main_thread():
        _note(f"{what} from a thread the session's code started, not by pytest's runner")
        return
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name in _PHASE_RUNNERS and code.co_filename.endswith(_PHASE):
            _note(f"{what} from inside a running test, not by pytest's runner")
            return
        frame = frame.f_back


def pytest_collection_finish(session: Any) -> None:
    """Tell the read trace which files hold a collected test (test code), when it runs."""
    if _READS:
        _trace.note_tests(getattr(session, "items", ()))


def pytest_runtest_logreport(report: Any) -> None:
    """Count the calls that passed; after a teardown, check the hot functions are pytest's own."""
    _from_inside_a_test(f"{report.nodeid}: a {report.when} report was logged")
    if report.when == "call" and report.outcome == "passed":
        _passed.add(report.nodeid)
    if report.when == "teardown" and _hot() != _HOT_BEFORE:
        _compare(_BEFORE)


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    """Note the test under way, for an internal error that ends the session during it."""
    _from_inside_a_test(f"{nodeid}: its start was logged")
    _running[:] = [nodeid]


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    """Keep the record on disk current (a process that leaves early leaves what was seen)."""
    _from_inside_a_test(f"{nodeid}: its finish was logged")
    _running.clear()
    if _found:
        _write()


def pytest_internalerror(excrepr: Any, excinfo: Any) -> None:
    """Note the test under way (or none) when pytest's internal error ended the session."""
    _from_inside_a_test("pytest's internal error was reported")
    if len(_crashed) < _MAX_CRASHED:
        _crashed.append(_running[0] if _running else "")


def pytest_keyboard_interrupt(excinfo: Any) -> None:
    """Note a session cut short: pytest calls this for KeyboardInterrupt and ``pytest.exit``."""
    _interrupted[:] = [getattr(excinfo, "typename", "") or "interrupted"]


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    """Compare everything, and the hook implementations, at the end of the session."""
    _from_inside_a_test("the session's finish was called")
    _compare(_BEFORE)
    _check_hooks(session.config)
    _check_relied()
    for item in getattr(session, "items", ()):
        runtest = vars(type(item)).get("runtest", getattr(type(item), "runtest", None))
        if "runtest" in vars(item) or not _trusted(runtest):
            planted = vars(item).get("runtest", runtest)
            _note(f"{item.nodeid}: its runtest comes from {_where(planted)}")
            break


def pytest_unconfigure(config: Any) -> None:
    """Check once more after every other plugin finished, and write the record."""
    global _finished
    _from_inside_a_test("the session was ended")
    if _running and not _crashed and not _interrupted:
        _note(f"the session ended while {_running[0]} was under way, with no error of pytest's")
    _compare(_BEFORE)
    _check_hooks(config)
    _check_relied()
    _finished = True
    _write()
