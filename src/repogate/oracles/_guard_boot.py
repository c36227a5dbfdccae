"""repogate's bootstrap for a graded pytest session: take the guard's key, then run pytest.

Copied by the harness as ``repogate_boot.py`` beside the guard (:mod:`repogate.oracles.guard`)
and run as ``python repogate_boot.py ARGS`` in place of ``python -m pytest ARGS``. Python puts
this file's read-only harness folder first on ``sys.path``, not the working folder, so nothing of
the checkout can have been imported when its first lines run: they read the run's key from the
pipe the harness handed the process (``REPOGATE_GUARD_KEY_FD``) and close it. Before this, a
module of the checkout that the standard library imports optionally while pytest starts (Python
3.11's ``copy`` tries ``org.python.core``) read the key ahead of the guard.

The key is then held by a one-shot function, a local of :func:`main`; the guard takes it from
this frame when it loads (``take_key``). Then the working folder goes first on ``sys.path`` and
pytest runs as ``-m`` runs it (``runpy``, ``__main__``), so the tests see what
``python -m pytest`` shows them. The key is in this process's memory from then on: code of the
checkout can still find it there; this raises the bar, it is no boundary (``docs/security.md``).
"""

# ruff: noqa: PTH109 (os.getcwd: as little imported as can be, before pytest)
from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable


def read_key() -> bytes:
    """Read the key from the pipe ``REPOGATE_GUARD_KEY_FD`` names and close it (b"" if none).

    The variable is removed, so child processes never read another descriptor of that number.
    The guard calls it too, when the session was not started through this bootstrap.
    """
    name = os.environ.pop("REPOGATE_GUARD_KEY_FD", "")
    if not name.isdigit():
        return b""
    fd = int(name)
    try:
        key = os.read(fd, 64) if stat.S_ISFIFO(os.fstat(fd).st_mode) else b""
        os.close(fd)
    except OSError:
        return b""
    return key


def _one_shot(key: bytes) -> Callable[[], bytes]:
    held = [key]

    def take_key() -> bytes:
        value, held[:] = (held[0] if held else b""), []
        return value

    return take_key


def main() -> None:
    """Take the key, then run pytest with this command's arguments as ``python -m pytest``."""
    take_key = _one_shot(read_key())  # found by the guard in this frame  # noqa: F841
    import runpy  # after the key is read

    sys.path[0] = os.getcwd()  # what -m puts first; this harness folder stays on PYTHONPATH
    runpy.run_module("pytest", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
