"""Run an untrusted command: timeout, output caps, scrubbed environment, no network, isolation kept.

Every agent, install and test command goes through :func:`run`:

- **timeout**: the command starts in its own session (process group); at ``timeout_s`` the whole
  group is sent SIGKILL, the result has ``returncode -9`` and ``timed_out=True``. It also gets its
  own PID namespace (bubblewrap, or ``unshare --pid --kill-child``), so descendants that left the
  group die with it, and nothing outlives the harness (``--die-with-parent``).
- **output caps**: stdout and stderr are drained in 64 KiB chunks until the pipes close; the first
  ``output_cap_bytes`` of each are kept and the rest only counted (``truncated_bytes``), so a
  command printing gigabytes costs no memory.
- **environment**: built from nothing: ``PATH`` and ``TERM`` from the caller when set, a fixed
  timezone and locale (``TZ=UTC``, ``LANG``/``LC_ALL=C.UTF-8``: never the caller's, so a result
  does not depend on who ran it), a private ``HOME`` and ``TMPDIR``, then what the policy grants.
  Tokens and keys (``GITHUB_TOKEN``, ``AWS_*``, ``SSH_AUTH_SOCK`` ...) are never copied.
- **file system**: under bubblewrap, an allowlist (:mod:`repogate.sandbox._mounts`): system folders and
  the command's runtime read-only, the policy's folders, a private HOME and TMPDIR; nothing else
  of the user's file system exists for the command.
- **network**: off unless granted, with Linux namespaces.
- **root file system**: this machine's system folders, or an unpacked container image's root
  (:class:`RootFilesystem`, the image backend's): then the image is ``/`` and the command's
  programs are the image's; the isolation record names the image (:attr:`Isolation.root`). An
  image root needs bubblewrap: without it :func:`run` refuses, even when weak isolation is allowed
  (the command would run on this machine's system instead, silently).

**No silent loss of isolation.** Bubblewrap is the isolation. Without it (not installed, user
namespaces off, or ``REPOGATE_SANDBOX=unshare``/``none``) :func:`run` refuses with
:class:`IsolationError` unless weak isolation was allowed: by the user
(``--allow-weak-isolation``, or ``REPOGATE_ALLOW_WEAK_ISOLATION=1``) or by the harness for its own
embedded scenarios (:func:`allowing_weak_isolation`). Then ``unshare`` still takes the network and
gives a PID namespace, ``none`` gives nothing, and :class:`Isolation` says which, loudly.

A command that cannot be started (not found, not executable) is a result with return code 127
(or 126), never an exception.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, cast

from pydantic import Field

from repogate import clock
from repogate._model import FrozenModel
from repogate.errors import IsolationError
from repogate.sandbox._isolation import (
    INSTALL_HINT,
    Isolation,
    bwrap_prefix,
    isolation,
    require_isolation,
    unshare_prefix,
    weak_isolation_reason,
)
from repogate.sandbox._mounts import (
    install_folders,
    mount_arguments,
    named_paths,
    runtime_folders,
    under_any,
)


class RootFilesystem(FrozenModel):
    """An unpacked image's root file system, shown to the command as ``/``.

    Attributes:
        path: the unpacked root on this machine (the image backend's cache); bound read-only.
        image: the image digest, ``sha256:<hex>``; recorded as :attr:`Isolation.root`.
    """

    path: Path
    image: str


class SandboxPolicy(FrozenModel):
    """What an untrusted command is granted.

    Attributes:
        network: allow network access (default off).
        timeout_s: wall-clock budget in seconds; the whole process group is killed past it.
        output_cap_bytes: bytes kept of stdout and of stderr each; the rest is dropped, counted.
        env: extra environment variables granted (the rest of the caller's environment is scrubbed).
        home: a private HOME to use; None makes a fresh temporary one.
        writable: the folders the command may write (besides its private HOME and TMPDIR);
            None means its working folder and the venv and uv cache its environment names
            (install commands). Everything else it sees is read-only.
        writable_cwd: the working folder is writable too, and nothing beside it: a test run
            writes its own tree, never the scratch folder where the harness builds other trees
            after it (a link planted there would carry the harness's later writes elsewhere).
        readable: further folders (or files) it may read; the system folders and its runtime
            (see :mod:`repogate.sandbox._mounts`) and its working folder are always readable.
        hidden: folders shown empty where a granted folder would show them (the harness's
            full-history repository, the run directory). The user's credential stores too.
        root: an image's root file system to run in (the granted folders keep their paths in
            it), or None for this machine's system folders.
        shown: file -> harness file shown read-only in its place (a TLS service's CA bundles
            with the harness CA appended, :mod:`repogate.oracles.services`); bubblewrap only:
            under weak isolation the file is seen as it is.
    """

    network: bool = False
    timeout_s: float = Field(default=600.0, gt=0)
    output_cap_bytes: int = Field(default=4 * 1024 * 1024, gt=0)
    env: Mapping[str, str] = Field(default_factory=dict)
    home: Path | None = None
    writable: tuple[Path, ...] | None = None
    writable_cwd: bool = False
    readable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    root: RootFilesystem | None = None
    shown: Mapping[Path, Path] = Field(default_factory=dict)


class ExecResult(FrozenModel):
    """A finished command as a value. A non-zero exit is a result, not an exception.

    Attributes:
        argv: the command as run (before the isolation wrapper).
        returncode: exit code; negative for a signal; -9 when stopped at the timeout.
        stdout: captured standard output (decoded UTF-8 with replacement), capped.
        stderr: captured standard error, capped.
        duration_s: wall time in seconds.
        timed_out: True when the command was stopped at ``timeout_s``.
        truncated_bytes: bytes dropped past the cap, stdout and stderr together.
        isolation: the isolation in force for this command.
    """

    argv: tuple[str, ...]
    returncode: int
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    timed_out: bool = False
    truncated_bytes: int = 0
    isolation: Isolation

    @property
    def ok(self) -> bool:
        """True when the command exited 0 within its budget."""
        return self.returncode == 0 and not self.timed_out


_ENV_ALLOWLIST = ("PATH", "TERM")
FIXED_ENV = {"TZ": "UTC", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
"""Timezone and locale of every command unless its policy grants others (the contract's)."""
_CHUNK = 64 * 1024
_DRAIN_GRACE_S = 2.0  # after the command exits, how long descendants may hold its pipes open


def _view(
    argv: Sequence[str],
    cwd: Path,
    policy: SandboxPolicy,
    scratch: Path,
    env: Mapping[str, str],
) -> list[str]:
    """Return bubblewrap's mount arguments: the allowlist of :mod:`repogate.sandbox._mounts`."""
    writable = [*policy.writable] if policy.writable is not None else [cwd, *install_folders(env)]
    writable += [*([cwd] if policy.writable_cwd else []), scratch]
    writable += [policy.home] if policy.home is not None else []
    readable = [*_runtime(argv, policy, env), *policy.readable, cwd]
    root = policy.root.path if policy.root is not None else None
    return mount_arguments(readable, writable, policy.hidden, root, policy.shown)


def _runtime(argv: Sequence[str], policy: SandboxPolicy, env: Mapping[str, str]) -> list[Path]:
    """Return what ``argv`` needs to start, read-only (:func:`runtime_folders`), minus hidden ones.

    What the command line names never grants a hidden folder (it stays absent, not empty); in an
    image, the runtime is the image's: nothing is looked up on this machine's ``PATH``.
    """
    runtime = named_paths(argv) if policy.root is not None else runtime_folders(argv, env)
    return [p for p in runtime if not under_any(p, policy.hidden)]


def _with_filesystem(iso: Isolation, policy: SandboxPolicy) -> Isolation:
    """Say in the isolation record what the filesystem looked like to the command."""
    if iso.kind != "bwrap":
        return iso.model_copy(
            update={"detail": f"{iso.detail}; allowed by {weak_isolation_reason()}"}
        )
    writable = (
        ", ".join(
            [
                *(p.name for p in policy.writable),
                *(["its working folder"] if policy.writable_cwd else []),
            ]
        )
        if policy.writable is not None
        else "its working folder and environment"
    )
    fs = f"writable: {writable}, private HOME and TMPDIR; everything else read-only or absent"
    if policy.root is None:
        return iso.model_copy(update={"detail": f"{iso.detail}; {fs}"})
    image = f"root file system: image {policy.root.image}, read-only"
    return iso.model_copy(
        update={"detail": f"{iso.detail}; {image}; {fs}", "root": policy.root.image}
    )


def _environment(policy: SandboxPolicy, home: Path, tmp: Path) -> dict[str, str]:
    env = {key: os.environ[key] for key in _ENV_ALLOWLIST if key in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update(FIXED_ENV)
    env.update(HOME=str(home), TMPDIR=str(tmp), TMP=str(tmp), TEMP=str(tmp))
    env.update(policy.env)
    return env


def _wrapped(
    argv: Sequence[str],
    cwd: Path,
    iso: Isolation,
    policy: SandboxPolicy,
    scratch: Path,
    env: Mapping[str, str],
) -> list[str]:
    if iso.kind == "bwrap":
        mounts = _view(argv, cwd, policy, scratch, env)
        return [*bwrap_prefix(not iso.network_off, cwd, mounts), *argv]
    if iso.kind == "unshare":
        prefix = unshare_prefix()
        if not iso.network_off:
            prefix.remove("--net")
        return [*prefix, *argv]
    return list(argv)


class _Capture:
    """The first ``cap`` bytes of one stream, and a count of the bytes dropped after them."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = max(self.cap - len(self.kept), 0)
        self.kept += chunk[:room]
        self.dropped += max(len(chunk) - room, 0)

    def text(self) -> str:
        return self.kept.decode("utf-8", "replace")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _pump(proc: subprocess.Popen[bytes], captures: dict[int, _Capture], timeout: float) -> bool:
    """Drain the pipes (by descriptor) into ``captures`` until they close; kill at ``timeout``.

    Returns:
        True when the command was stopped at its timeout.
    """
    start = clock.monotonic()
    timed_out = False
    exited_at: float | None = None
    with selectors.DefaultSelector() as sel:
        for fd in captures:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            now = clock.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > _DRAIN_GRACE_S:
                break  # descendants outside the group hold the pipes: stop reading
            if exited_at is None and now - start >= timeout:
                timed_out = True
                _kill_group(proc)
            for key, _ in sel.select(timeout=0.05):
                chunk = os.read(key.fd, _CHUNK)
                if chunk:
                    captures[key.fd].add(chunk)
                else:
                    sel.unregister(key.fd)
    return timed_out


def run(
    argv: Sequence[str], cwd: Path, policy: SandboxPolicy, *, pass_fds: Sequence[int] = ()
) -> ExecResult:
    """Run ``argv`` in ``cwd`` under ``policy`` and return what happened as a value.

    Args:
        argv: the command and its arguments (no shell).
        cwd: the working directory.
        policy: timeout, output cap, environment grant, private HOME, network grant.
        pass_fds: descriptors the command inherits (by number; every other one is closed), such
            as the pipe carrying the guard's key (:meth:`repogate.oracles.guard.Guard.key_pipe`).

    Returns:
        The result: exit code (127 when the command is not found, 126 when it cannot be run,
        -9 when stopped at the timeout), capped output, wall time, and the isolation in force.

    Raises:
        IsolationError: bubblewrap is not usable and weak isolation was not allowed.
    """
    iso = require_isolation(policy.network, image=policy.root is not None)
    iso = _with_filesystem(iso, policy)
    start = clock.monotonic()
    with tempfile.TemporaryDirectory(prefix="repogate-tmp-") as tmp:
        home = policy.home or Path(tmp) / "home"
        work_tmp = Path(tmp) / "tmp"
        for folder in (home, work_tmp):
            folder.mkdir(parents=True, exist_ok=True)
        env = _environment(policy, home, work_tmp)
        failure = _unstartable(argv, cwd, env, policy.root is not None)
        if failure is not None:
            code, message = failure
            return ExecResult(argv=tuple(argv), returncode=code, stderr=message, isolation=iso)
        try:
            proc = subprocess.Popen(
                _wrapped(argv, cwd, iso, policy, Path(tmp), env),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=tuple(pass_fds),
            )
        except OSError as exc:  # e.g. an executable file that is no program (ENOEXEC)
            return ExecResult(argv=tuple(argv), returncode=126, stderr=str(exc), isolation=iso)
        stdout, stderr = cast(IO[bytes], proc.stdout), cast(IO[bytes], proc.stderr)
        out, err = _Capture(policy.output_cap_bytes), _Capture(policy.output_cap_bytes)
        try:
            with stdout, stderr:
                streams = {stdout.fileno(): out, stderr.fileno(): err}
                timed_out = _pump(proc, streams, policy.timeout_s)
        except BaseException:  # Ctrl-C or a crash of ours: the command must not outlive us
            _kill_group(proc)
            proc.wait()
            raise
        returncode = proc.wait()
        _kill_group(proc)  # background children the command left behind
    if policy.root is not None and returncode == 1:
        returncode = _exec_failure(err.text()) or returncode
    return ExecResult(
        argv=tuple(argv),
        returncode=-9 if timed_out else returncode,
        stdout=out.text(),
        stderr=err.text(),
        duration_s=clock.monotonic() - start,
        timed_out=timed_out,
        truncated_bytes=out.dropped + err.dropped,
        isolation=iso,
    )


def _exec_failure(stderr: str) -> int | None:
    """In an image, bubblewrap itself says a program could not be started: 127 or 126, or None."""
    if not stderr.startswith("bwrap: execvp "):
        return None
    return 127 if "No such file or directory" in stderr.partition("\n")[0] else 126


def command_line(argv: Sequence[str], policy: SandboxPolicy) -> list[str]:
    """Return the bubblewrap command line that runs ``argv`` in ``policy``'s file-system view.

    For a launcher file the harness hands to a tool of its own (:func:`launcher`): the working
    folder is ``/``, ``/tmp`` is empty, there is no private HOME, no timeout and no output cap;
    the command's runtime (as :func:`run` shows it: the venv named by the policy's ``VIRTUAL_ENV``
    and ``PATH`` and the interpreter it was made from, or in an image what the command line
    names), the policy's folders, its root and its network grant apply. The variables are the
    caller's (the tool's): the policy's ``env`` only decides what is shown.

    Raises:
        IsolationError: bubblewrap is not usable here (a launcher is never weakly isolated).
    """
    iso = isolation(policy.network)
    if iso.kind != "bwrap":
        raise IsolationError(
            "a launcher needs bubblewrap (bwrap), which is not usable here, so the command "
            "would run on this machine (weak isolation is never given to a launcher)",
            INSTALL_HINT,
        )
    root = policy.root.path if policy.root is not None else None
    readable = [*_runtime(argv, policy, policy.env), *policy.readable]
    mounts = mount_arguments(readable, policy.writable or (), policy.hidden, root, policy.shown)
    return [*bwrap_prefix(not iso.network_off, Path("/"), mounts), *argv]


def launcher(path: Path, argv: Sequence[str], policy: SandboxPolicy) -> Path:
    """Write ``path``: a shell script that runs ``argv`` (then its own arguments) in the sandbox.

    For a tool of the harness that runs an environment's interpreter itself (``uv pip install
    --python``, which queries it): given the launcher, the tool never starts that interpreter on
    this machine. The script is :func:`command_line`, made executable (0755); ``path``'s folder
    must be the harness's own (a fresh temporary folder), as the file is written in place.

    Returns:
        ``path``.

    Raises:
        IsolationError: bubblewrap is not usable here (a launcher is never weakly isolated).
    """
    line = shlex.join(command_line(argv, policy))
    path.write_text(f'#!/bin/sh\nexec {line} "$@"\n', encoding="utf-8")
    path.chmod(0o755)
    return path


def _unstartable(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str], in_image: bool = False
) -> tuple[int, str] | None:
    """Return ``(exit code, message)`` when ``argv`` cannot be started, as a shell would report.

    In an image the program is the image's: it is looked up there, by bubblewrap (never on this
    machine, whose paths the image's links would lead to), and :func:`_exec_failure` reads why.
    """
    if not argv:
        return 127, "empty command"
    if not cwd.is_dir():
        return 127, f"working directory {cwd} does not exist"
    if in_image:
        return None
    program = argv[0]
    if "/" in program:
        path = Path(program) if Path(program).is_absolute() else cwd / program
        found = str(path) if path.exists() else None
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        return 127, f"{program}: command not found"
    if not os.access(found, os.X_OK) or Path(found).is_dir():
        return 126, f"{program}: permission denied (not executable)"
    return None
