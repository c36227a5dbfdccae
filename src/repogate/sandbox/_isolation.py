"""Which isolation this machine gives untrusted commands, and when weak isolation is allowed.

Bubblewrap is the isolation: an allowlisted file system (:mod:`repogate.sandbox._mounts`), its own PID
namespace (nothing outlives the run: ``--die-with-parent``), no network unless granted. The
mechanism is probed once per process by running ``true`` under it; ``REPOGATE_SANDBOX``
(``auto``, ``bwrap``, ``unshare``, ``none``) restricts the choice.

Anything weaker (``unshare``: network and PID namespaces only; ``none``: nothing) leaves the
user's files open to untrusted code, so :func:`require_isolation` refuses it unless it was
allowed: by the user (``--allow-weak-isolation``, or ``REPOGATE_ALLOW_WEAK_ISOLATION=1``), or by
the harness for its own embedded scenarios (:func:`allowing_weak_isolation`). The isolation in
force is then said in every record (``WEAK ISOLATION ...``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

from repogate._model import FrozenModel
from repogate.errors import IsolationError
from repogate.sandbox._mounts import mount_arguments

IsolationKind = Literal["bwrap", "unshare", "none"]


class Isolation(FrozenModel):
    """The isolation actually in force: which mechanism, and whether the network was really off."""

    kind: IsolationKind
    network_off: bool
    detail: str = ""
    root: str | None = None
    """The image digest (``sha256:<hex>``) when an image's root file system was ``/``; None:
    this machine's system folders."""


SANDBOX_ENV = "REPOGATE_SANDBOX"
WEAK_ENV = "REPOGATE_ALLOW_WEAK_ISOLATION"
WEAK_FLAG = "--allow-weak-isolation"
_PROBE_TIMEOUT_S = 15.0
_NOT_ISOLATED = (
    "NETWORK NOT ISOLATED: neither bubblewrap nor unshare could make a network namespace on this "
    "machine, so the command could reach the network; install bubblewrap or allow user namespaces"
)
_WEAK_FS = (
    "WEAK ISOLATION: filesystem not restricted ({why}), so untrusted code can read and "
    "write the user's files"
)
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install "
    f"bubblewrap) and allow user namespaces, or pass {WEAK_FLAG} to run untrusted code without "
    "file-system isolation"
)
_weak_allowed_by: list[str] = []  # reasons in force, innermost last (see allowing_weak_isolation)


def bwrap_prefix(network: bool, cwd: Path, mounts: Sequence[str]) -> list[str]:
    prefix = ["bwrap", *mounts, "--unshare-pid", "--unshare-ipc"]
    prefix += [] if network else ["--unshare-net"]
    return [*prefix, "--die-with-parent", "--chdir", str(cwd), "--"]


def unshare_prefix() -> list[str]:
    """``unshare``: no network, and its own PID namespace whose processes die with the command."""
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    user = [] if root else ["--map-root-user"]
    return ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", *user, "--"]


def _fault(argv: list[str]) -> str | None:
    """Why ``argv`` does not run here (not installed, cannot run, its exit and words), or None."""
    if shutil.which(argv[0]) is None:
        folders = os.environ.get("PATH", os.defpath).split(os.pathsep)
        found = [p for d in folders if (p := Path(d or ".") / argv[0]).is_symlink() or p.exists()]
        if found:  # a device, a folder, a file without its execute bit, a broken link
            return f"present at {found[0]} but cannot run here: not an executable file"
        return "not installed"
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:  # not a program, no permission, hung
        return f"present but cannot run here: {' '.join(str(exc).split())}"
    if done.returncode == 0:
        return None
    words = " ".join(done.stderr.decode(errors="replace").split()) or "no message"
    return f"present but cannot run here: exit {done.returncode}: {words}"


@functools.cache
def _available(choice: str) -> tuple[IsolationKind, str]:
    """Probe once per process which allowed network-isolation mechanism really works here.

    Returns:
        The mechanism, and why bubblewrap is not it (empty when it is): ``bubblewrap (bwrap) is
        not installed``, ``bubblewrap (bwrap) is present but cannot run here: exit 1: bwrap: No
        permissions to create new namespace ...`` (what the probe met), or the choice of
        ``REPOGATE_SANDBOX`` (``REPOGATE_SANDBOX=unshare leaves bubblewrap out``).
    """
    probe = bwrap_prefix(False, Path("/"), mount_arguments([], [], []))
    fault = _fault([*probe, "true"]) if choice in ("auto", "bwrap") else None
    if choice in ("auto", "bwrap") and fault is None:
        return "bwrap", ""
    why = (
        f"bubblewrap (bwrap) is {fault}"
        if fault
        else f"{SANDBOX_ENV}={choice} leaves bubblewrap out"
    )
    if choice in ("auto", "unshare") and _fault([*unshare_prefix(), "true"]) is None:
        return "unshare", why
    return "none", why


def isolation(network: bool) -> Isolation:
    """Return the isolation this machine gives a command with (or without) a network grant.

    Args:
        network: whether the command is granted the network.

    Environment:
        ``REPOGATE_SANDBOX``: ``auto`` (default: bubblewrap, else unshare), ``bwrap``,
        ``unshare`` or ``none``; a mechanism named but not working here gives ``none``.

    Returns:
        ``kind`` is ``'bwrap'``, ``'unshare'`` or ``'none'``; ``network_off`` is True only when a
        network namespace is really in force; when none could be had for a command without a
        grant, ``detail`` starts with ``NETWORK NOT ISOLATED`` (print it and record it).
    """
    kind, why = _available(_choice())
    weak_fs = _WEAK_FS.format(why=why)
    if kind == "bwrap":
        net = "network granted by policy" if network else "no network"
        detail = f"bwrap: filesystem allowlist, own PID namespace, {net}"
        return Isolation(kind="bwrap", network_off=not network, detail=detail)
    if kind == "unshare":
        net = "network granted by policy" if network else "no network"
        detail = f"{weak_fs}; unshare: own PID namespace, {net}"
        return Isolation(kind="unshare", network_off=not network, detail=detail)
    if network:
        return Isolation(kind="none", network_off=False, detail=f"{weak_fs}; network granted")
    return Isolation(kind="none", network_off=False, detail=f"{_NOT_ISOLATED}; {weak_fs}")


def _choice() -> str:
    """``REPOGATE_SANDBOX``'s mechanism, ``auto`` when unset or empty."""
    return os.environ.get(SANDBOX_ENV, "auto").strip().lower() or "auto"


_STRENGTH: dict[IsolationKind, int] = {"bwrap": 2, "unshare": 1, "none": 0}


def weakest(*records: Isolation) -> Isolation:
    """Return the weakest of ``records``: the lesser mechanism, then the one with the network on.

    A run resumed or extended on another machine (or with other settings) holds attempts made
    under each; what it records is the weakest, so isolation never reads stronger than some of
    its attempts had. Raises ValueError with no records.
    """
    return min(records, key=lambda r: (_STRENGTH[r.kind], r.network_off))


def weak_isolation_reason() -> str | None:
    """Return why weak isolation is allowed now (the flag, or the harness's own scenarios), or None.

    ``REPOGATE_ALLOW_WEAK_ISOLATION=1`` in the environment is the ``--allow-weak-isolation`` flag.
    """
    if _weak_allowed_by:
        return _weak_allowed_by[-1]
    if os.environ.get(WEAK_ENV, "").strip().lower() in ("1", "true", "yes"):
        return f"{WEAK_ENV}=1"
    return None


@contextlib.contextmanager
def allowing_weak_isolation(reason: str | None) -> Iterator[None]:
    """Allow commands to run without bubblewrap inside the ``with`` block, for ``reason``.

    Args:
        reason: who allowed it, e.g. ``--allow-weak-isolation`` or ``embedded default: built-in
            scenarios and their shipped agents only``; None allows nothing more.
    """
    if reason is None:
        yield
        return
    _weak_allowed_by.append(reason)
    try:
        yield
    finally:
        _weak_allowed_by.pop()


def require_isolation(network: bool, image: bool = False) -> Isolation:
    """Return the isolation in force for untrusted code, refusing weak isolation unless allowed.

    Args:
        network: whether the command is granted the network.
        image: the command runs in an image's root file system, which only bubblewrap can give:
            weak isolation is refused even when allowed.

    Raises:
        IsolationError: bubblewrap is not usable (or not chosen) and weak isolation was not
            allowed, or the command needs an image's root; the message says how to install it.
    """
    iso = isolation(network)
    if iso.kind != "bwrap" and image:
        raise IsolationError(
            "an image's root file system needs bubblewrap (bwrap), which is not usable here, "
            "so the command would run on this machine's system instead",
            INSTALL_HINT,
        )
    if iso.kind != "bwrap" and weak_isolation_reason() is None:
        choice = os.environ.get(SANDBOX_ENV, "auto")
        why = (
            f"{SANDBOX_ENV}={choice} chooses weaker isolation"
            if choice.strip().lower() in ("unshare", "none")
            else _available(_choice())[1]
        )
        raise IsolationError(
            f"{why}, so untrusted code would run without file-system isolation", INSTALL_HINT
        )
    return iso
