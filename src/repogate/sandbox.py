"""Run an untrusted command: timeout, output caps, scrubbed environment, no network, isolation kept.

Every agent, install and test command goes through :func:`run`:

- **timeout**: the command starts in its own session (process group); at ``timeout_s`` the whole
  group is sent SIGKILL, the result has ``returncode -9`` and ``timed_out=True``. Under bubblewrap
  it also gets its own PID namespace, so descendants that left the group die with it.
- **output caps**: stdout and stderr are drained in 64 KiB chunks until the pipes close; the first
  ``output_cap_bytes`` of each are kept and the rest only counted (``truncated_bytes``), so a
  command printing gigabytes costs no memory.
- **environment**: built from nothing: ``PATH``, ``LANG``, ``LC_ALL``, ``LC_CTYPE``, ``TERM`` and
  ``TZ`` from the caller when set, a private ``HOME`` and ``TMPDIR``, then what the policy grants.
  Tokens and keys (``GITHUB_TOKEN``, ``AWS_*``, ``SSH_AUTH_SOCK`` ...) are never copied.
- **network**: off unless granted, with Linux namespaces: bubblewrap (``bwrap --unshare-net``)
  when it works here, else ``unshare --net`` (``--map-root-user`` when not root), else nothing,
  and then :func:`isolation` says loudly that the network was not isolated. The mechanism is
  chosen once per process by running ``true`` under each; ``REPOGATE_SANDBOX`` (``auto``,
  ``bwrap``, ``unshare``, ``none``) restricts the choice, e.g. where bubblewrap misbehaves.

A command that cannot be started (not found, not executable) is a result with return code 127
(or 126), never an exception.
"""

from __future__ import annotations

import contextlib
import functools
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from repogate import clock

IsolationKind = Literal["bwrap", "unshare", "none"]


class SandboxPolicy(BaseModel):
    """What an untrusted command is granted.

    Attributes:
        network: allow network access (default off).
        timeout_s: wall-clock budget in seconds; the whole process group is killed past it.
        output_cap_bytes: bytes kept of stdout and of stderr each; the rest is dropped, counted.
        env: extra environment variables granted (the rest of the caller's environment is scrubbed).
        home: a private HOME to use; None makes a fresh temporary one.
        writable: when set, the filesystem is read-only except these folders (and the private
            HOME and TMPDIR); None leaves it writable. Needs bubblewrap; recorded in the isolation.
        hidden: folders replaced by an empty one for the command (the harness's full-history
            repository, the run directory). The user's credential folders are always hidden.
    """

    model_config = ConfigDict(frozen=True)

    network: bool = False
    timeout_s: float = Field(default=600.0, gt=0)
    output_cap_bytes: int = Field(default=4 * 1024 * 1024, gt=0)
    env: Mapping[str, str] = Field(default_factory=dict)
    home: Path | None = None
    writable: tuple[Path, ...] | None = None
    hidden: tuple[Path, ...] = ()


class Isolation(BaseModel):
    """The isolation actually in force: which mechanism, and whether the network was really off."""

    model_config = ConfigDict(frozen=True)

    kind: IsolationKind
    network_off: bool
    detail: str = ""


class ExecResult(BaseModel):
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

    model_config = ConfigDict(frozen=True)

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


SANDBOX_ENV = "REPOGATE_SANDBOX"
_ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ")
_CHUNK = 64 * 1024
_DRAIN_GRACE_S = 2.0  # after the command exits, how long descendants may hold its pipes open
_PROBE_TIMEOUT_S = 15.0
_NOT_ISOLATED = (
    "NETWORK NOT ISOLATED: neither bubblewrap nor unshare could make a network namespace on this "
    "machine, so the command could reach the network; install bubblewrap or allow user namespaces"
)


# Credential stores of the user running repogate, files and folders relative to HOME: never
# visible to untrusted commands. Cloud and cluster tools; git and forges; package registries
# (npm, yarn, cargo, pip, gem, maven); secret managers (Vault, 1Password, keyrings, pass).
SECRET_PATHS = (
    ".ssh", ".gnupg", ".aws", ".azure", ".docker", ".kube", ".config/gcloud", ".terraform.d",
    ".netrc", ".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub",
    ".pypirc", ".config/pip", ".pip", ".npmrc", ".yarnrc", ".yarnrc.yml", ".cargo/credentials",
    ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml",
    ".vault-token", ".config/op", ".local/share/keyrings", ".password-store",
)  # fmt: skip


def _mounts(policy: SandboxPolicy | None, scratch: Path | None) -> list[str]:
    """Return bubblewrap's mount arguments, in order.

    The root (read-only when ``writable`` is set), then hidden folders and credential files, then
    the writable folders and the private scratch.
    """
    if policy is None or policy.writable is None:
        mounts = ["--dev-bind", "/", "/", "--proc", "/proc"]
    else:
        mounts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    user_home = Path.home()
    secrets = [user_home / name for name in SECRET_PATHS]
    for path in [*(policy.hidden if policy else ()), *secrets]:
        if path.is_dir():
            mounts += ["--tmpfs", str(path)]
        elif path.exists():
            mounts += ["--ro-bind", "/dev/null", str(path)]
    if policy is not None and policy.writable is not None:
        for path in (*policy.writable, *((scratch,) if scratch else ())):
            mounts += ["--bind", str(path), str(path)]
    return mounts


def _bwrap_prefix(
    network: bool, cwd: Path, policy: SandboxPolicy | None = None, scratch: Path | None = None
) -> list[str]:
    prefix = ["bwrap", *_mounts(policy, scratch), "--unshare-pid"]
    prefix += [] if network else ["--unshare-net"]
    return [*prefix, "--die-with-parent", "--chdir", str(cwd), "--"]


def _unshare_prefix() -> list[str]:
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    return ["unshare", "--net", *([] if root else ["--map-root-user"]), "--"]


def _works(argv: list[str]) -> bool:
    if shutil.which(argv[0]) is None:
        return False
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def _available(choice: str) -> IsolationKind:
    """Probe once per process which allowed network-isolation mechanism really works here."""
    if choice in ("auto", "bwrap") and _works([*_bwrap_prefix(False, Path("/")), "true"]):
        return "bwrap"
    if choice in ("auto", "unshare") and _works([*_unshare_prefix(), "true"]):
        return "unshare"
    return "none"


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
    kind = _available(os.environ.get(SANDBOX_ENV, "auto").strip().lower() or "auto")
    if network:
        if kind == "bwrap":
            detail = "bwrap --unshare-pid: own PID namespace; network granted by policy"
            return Isolation(kind="bwrap", network_off=False, detail=detail)
        return Isolation(kind="none", network_off=False, detail="network granted by policy")
    if kind == "bwrap":
        detail = "bwrap --unshare-net --unshare-pid: no network, own PID namespace"
        return Isolation(kind="bwrap", network_off=True, detail=detail)
    if kind == "unshare":
        return Isolation(kind="unshare", network_off=True, detail="unshare --net: no network")
    return Isolation(kind="none", network_off=False, detail=_NOT_ISOLATED)


def _with_filesystem(iso: Isolation, policy: SandboxPolicy) -> Isolation:
    """Say in the isolation record what the filesystem looked like to the command."""
    if iso.kind != "bwrap":
        fs = "filesystem not restricted (needs bubblewrap)"
    elif policy.writable is None:
        fs = "filesystem writable; credential folders hidden"
    else:
        fs = (
            "filesystem read-only except "
            + ", ".join(p.name for p in policy.writable)
            + "; credential folders"
            + (" and harness folders" if policy.hidden else "")
            + " hidden"
        )
    return iso.model_copy(update={"detail": f"{iso.detail}; {fs}"})


def _environment(policy: SandboxPolicy, home: Path, tmp: Path) -> dict[str, str]:
    env = {key: os.environ[key] for key in _ENV_ALLOWLIST if key in os.environ}
    env.setdefault("PATH", os.defpath)
    env.update(HOME=str(home), TMPDIR=str(tmp), TMP=str(tmp), TEMP=str(tmp))
    env.update(policy.env)
    return env


def _wrapped(
    argv: Sequence[str], cwd: Path, iso: Isolation, policy: SandboxPolicy, scratch: Path
) -> list[str]:
    if iso.kind == "bwrap":
        return [*_bwrap_prefix(not iso.network_off, cwd, policy, scratch), *argv]
    if iso.kind == "unshare":
        return [*_unshare_prefix(), *argv]
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


def run(argv: Sequence[str], cwd: Path, policy: SandboxPolicy) -> ExecResult:
    """Run ``argv`` in ``cwd`` under ``policy`` and return what happened as a value.

    Args:
        argv: the command and its arguments (no shell).
        cwd: the working directory.
        policy: timeout, output cap, environment grant, private HOME, network grant.

    Returns:
        The result: exit code (127 when the command is not found, 126 when it cannot be run,
        -9 when stopped at the timeout), capped output, wall time, and the isolation in force.
    """
    iso = _with_filesystem(isolation(policy.network), policy)
    start = clock.monotonic()
    with tempfile.TemporaryDirectory(prefix="repogate-tmp-") as tmp:
        home = policy.home or Path(tmp) / "home"
        work_tmp = Path(tmp) / "tmp"
        for folder in (home, work_tmp):
            folder.mkdir(parents=True, exist_ok=True)
        env = _environment(policy, home, work_tmp)
        failure = _unstartable(argv, cwd, env)
        if failure is not None:
            code, message = failure
            return ExecResult(argv=tuple(argv), returncode=code, stderr=message, isolation=iso)
        try:
            proc = subprocess.Popen(
                _wrapped(argv, cwd, iso, policy, Path(tmp)),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
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


def _unstartable(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> tuple[int, str] | None:
    """Return ``(exit code, message)`` when ``argv`` cannot be started, as a shell would report."""
    if not argv:
        return 127, "empty command"
    if not cwd.is_dir():
        return 127, f"working directory {cwd} does not exist"
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
