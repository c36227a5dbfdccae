"""repogate's bootstrap for a graded pytest session: take the guard's key, then run pytest.

Copied by the harness as ``repogate_boot.py`` beside the guard (:mod:`repogate.oracles.guard`)
and run as ``python repogate_boot.py ARGS`` in place of ``python -m pytest ARGS``. Python puts
this file's read-only harness folder first on ``sys.path``, not the working folder, so nothing of
the checkout can have been imported when its first lines run: they read the run's key from the
pipe the harness handed the process (``REPOGATE_GUARD_KEY_FD``) into a ``bytearray`` and close it.

Then, before the working folder goes on ``sys.path``, they add an audit hook (PEP 578; hooks
cannot be removed) that watches every file the process opens to import and every code object it
executes until the guard takes the key. The first one that lies in the checkout (a module the
standard library imports optionally while pytest starts: Python 3.11's ``copy`` tries
``org.python.core``; a plugin named with ``-p`` ahead of the guard's) stops the run's signature
before that module's first line runs: the hook overwrites the key with zeros and empties it, and
notes the file. The guard then signs nothing (the harness trusts no unsigned record) and lists
the file; code of the checkout never runs while the key is still in memory before the guard.

With ``REPOGATE_SHIFTED_CLOCK=1`` (the import's date check, :mod:`repogate.tasks.dates`)
``time.sleep`` waits in ``select`` first: libfaketime breaks Python 3.11+'s own sleep there.

With ``REPOGATE_RUNNER_UNDER_TEST=1`` (the repository is pytest itself) the checkout's
``pytest``, ``_pytest`` and ``py`` modules below a checkout folder on ``sys.path`` are the runner
and do not stop the signature: the runner under test then runs while the key is in memory (the
weaker assurance the contract states). Any other file of the checkout still does.

The key and the notes are held by a one-shot function and a list, locals of :func:`main`; the
guard takes both from this frame when it loads (``take_key``, ``early``). Then the working
folder goes first on ``sys.path`` and pytest runs as ``-m`` runs it (``runpy``, ``__main__``), so
the tests see what ``python -m pytest`` shows them. Once the guard holds the key, code of the
checkout imported later (conftest, tests, the library) can still find it in the guard's memory:
this raises the bar, it is no boundary (``docs/security.md``).
"""

# ruff: noqa: PTH100, PTH109, PTH118, PTH119, PTH120 (os.path, os.getcwd: little imported before pytest)
from __future__ import annotations

import os
import select
import stat
import sys
import time
from collections.abc import Callable
from typing import Any, SupportsIndex

_MAX_NOTES = 20
_IMPORTED = (".py", ".pyc", ".pyw", ".pyo", ".so", ".pyd", ".zip", ".egg", ".whl")


def read_key() -> bytes:
    """Read the key from the pipe ``REPOGATE_GUARD_KEY_FD`` names and close it (b"" if none).

    The variable is removed, so child processes never read another descriptor of that number.
    The guard calls it too, when the session was not started through this bootstrap.
    """
    return bytes(_read_held())


def _read_held() -> bytearray:
    """The key, read straight into a ``bytearray`` (no other copy of it stays in memory)."""
    name = os.environ.pop("REPOGATE_GUARD_KEY_FD", "")
    held = bytearray(64)
    if not name.isdigit():
        return bytearray()
    fd = int(name)
    try:
        count = os.readv(fd, [held]) if stat.S_ISFIFO(os.fstat(fd).st_mode) else 0
        os.close(fd)
    except OSError:
        count = 0
    del held[count:]
    return held


def _one_shot(held: bytearray, active: list[bool]) -> Callable[[], bytes]:
    def take_key() -> bytes:
        active[0] = True  # the guard holds the key: the audit hook stops watching
        value = bytes(held)
        _wipe(held)
        return value

    return take_key


def _wipe(held: bytearray) -> None:
    held[:] = bytes(len(held))
    del held[:]


def _source(relative: str) -> str:
    """A cached module's source file (``pkg/__pycache__/mod.cpython-311.pyc``: ``pkg/mod.py``)."""
    folder, name = os.path.split(relative)
    if os.path.basename(folder) != "__pycache__" or not name.endswith(".pyc"):
        return relative
    return os.path.join(os.path.dirname(folder), name.split(".", 1)[0] + ".py")


def _under(path: str, roots: tuple[str, ...]) -> str | None:
    """``path`` relative to the first of ``roots`` (each ending with a separator) holding it."""
    for root in roots:
        if path.startswith(root):
            return path[len(root) :]
    return None


_RUNNER_PACKAGES = ("pytest", "_pytest", "py")  # repogate.vocabulary.RUNNER_PACKAGES


def _runner_roots(roots: tuple[str, ...]) -> tuple[str, ...]:
    """The checkout's folders on ``sys.path`` now (``PYTHONPATH``), and its top, each ending in a separator."""
    found = {os.path.realpath(os.getcwd()) + os.sep}
    for folder in sys.path:
        real = os.path.realpath(folder) + os.sep if folder else ""
        if real and _under(real, roots) is not None:
            found.add(real)
    return tuple(sorted(found, key=len, reverse=True))


def _is_runner(real: str, runner: tuple[str, ...]) -> bool:
    """True when ``real`` lies in the runner's packages below one of ``runner`` (the deepest)."""
    relative = _under(real, runner)
    if relative is None:
        return False
    head = _source(relative).split(os.sep, 1)[0]
    return head in _RUNNER_PACKAGES or head in [f"{n}.py" for n in _RUNNER_PACKAGES]


def _watcher(
    held: bytearray, active: list[bool], early: list[str]
) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook: wipe ``held`` at the first file of the checkout imported before the guard.

    ``open`` events (the import system opens a module's source, cache or archive through
    ``io.open_code``) and ``exec`` events (a code object about to run) are checked until
    ``active[0]`` (the guard took the key); a file counts when its real path lies in the working
    folder. ``early`` gets the file's path relative to the working folder.
    """
    cwd = os.getcwd()
    roots = tuple({cwd + os.sep, os.path.realpath(cwd) + os.sep})
    runner = _runner_roots(roots) if os.environ.get("REPOGATE_RUNNER_UNDER_TEST") == "1" else ()
    busy = [False]

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if active[0] or busy[0] or event not in ("open", "exec"):
            return
        if event == "open":
            where = args[0]
            if not isinstance(where, str) or not where.endswith(_IMPORTED):
                return
        else:
            where = getattr(args[0], "co_filename", None)
            if not isinstance(where, str) or where.startswith("<"):
                return
        busy[0] = True  # realpath's own calls must not come back here
        try:
            path = os.path.abspath(where)
            relative = _under(path, roots) or _under(os.path.realpath(path), roots)
            if relative is not None and not _is_runner(os.path.realpath(path), runner):
                _wipe(held)
                relative = _source(relative)
                if relative not in early and len(early) < _MAX_NOTES:
                    early.append(relative)
        finally:
            busy[0] = False

    return hook


def _sleep_in_select(secs: float | SupportsIndex) -> None:
    """Sleep ``secs`` in ``select``: ``time.sleep`` under the date check's shifted clock.

    A relative wait, which ``select`` resumes after a signal with the time left (PEP 475);
    libfaketime breaks Python 3.11+'s own sleep there (``repogate.tasks.dates``).
    """
    seconds = float(secs)
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    select.select([], [], [], seconds)


def main() -> None:
    """Take the key, watch the imports, then run pytest with this command's arguments."""
    if os.environ.get("REPOGATE_SHIFTED_CLOCK") == "1":  # repogate.tasks.dates.SHIFTED_CLOCK
        time.sleep = _sleep_in_select
    held = _read_held()
    active = [False]
    early: list[str] = []  # found by the guard in this frame
    sys.addaudithook(_watcher(held, active, early))
    take_key = _one_shot(held, active)  # found by the guard in this frame  # noqa: F841
    del held
    import runpy  # after the key is read and the hook added

    sys.path[0] = os.getcwd()  # what -m puts first; this harness folder stays on PYTHONPATH
    runpy.run_module("pytest", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
