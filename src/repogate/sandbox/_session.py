"""A sandboxed command talked to line by line: the differential oracle's call servers.

:func:`repogate.sandbox.run` runs a command to its end; the differential oracle needs a process
that stays up while Hypothesis asks it one call after another (and shrinks). :class:`Session`
starts the command with exactly the isolation :func:`~repogate.sandbox.run` gives (the same
:func:`~repogate.sandbox.require_isolation`, the same bubblewrap allowlist, scrubbed environment,
private HOME and TMPDIR, its own session and PID namespace), writes one line to its standard
input per question and reads one line back, each within a time budget. Past the budget, or when
the command ends or prints more than a line may hold, the answer is ``None`` and the whole process
group is killed: a hang or a fork never outlives the session, and never blocks the harness.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, cast

from repogate import clock
from repogate.sandbox._isolation import Isolation, require_isolation
from repogate.sandbox._run import (
    SandboxPolicy,
    _environment,
    _kill_group,
    _unstartable,
    _with_filesystem,
    _wrapped,
)

LINE_CAP = 1024 * 1024
"""The longest answer line kept, in bytes; a longer one ends the session (answer ``None``)."""


class Session:
    """A sandboxed command answering one line per line it is sent.

    Args:
        argv: the command (no shell).
        cwd: its working folder.
        policy: the sandbox (its ``timeout_s`` bounds the whole session).

    Raises:
        IsolationError: bubblewrap is not usable and weak isolation was not allowed (on entry).
    """

    def __init__(self, argv: Sequence[str], cwd: Path, policy: SandboxPolicy) -> None:
        self.argv = tuple(argv)
        self.cwd = cwd
        self.policy = policy
        self.isolation: Isolation | None = None
        self.failure = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._buffer = bytearray()
        self._started = 0.0

    def __enter__(self) -> Session:
        iso = require_isolation(self.policy.network, image=self.policy.root is not None)
        self.isolation = _with_filesystem(iso, self.policy)
        self._tmp = tempfile.TemporaryDirectory(prefix="repogate-session-")
        tmp = Path(self._tmp.name)
        home = self.policy.home or tmp / "home"
        for folder in (home, tmp / "tmp"):
            folder.mkdir(parents=True, exist_ok=True)
        env = _environment(self.policy, home, tmp / "tmp")
        unstartable = _unstartable(self.argv, self.cwd, env)
        if unstartable is not None:
            self.failure = unstartable[1]
            return self
        try:
            self._proc = subprocess.Popen(
                _wrapped(self.argv, self.cwd, self.isolation, self.policy, tmp, env),
                cwd=self.cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            self.failure = str(exc)
        self._started = clock.monotonic()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        """True while the command runs and has answered every question so far."""
        return self._proc is not None and not self.failure

    def ask(self, line: str, timeout_s: float) -> str | None:
        """Send ``line`` (no newline in it) and return the next answer line, or None.

        None when the session is not alive, the answer did not come within ``timeout_s`` (or
        the session's own budget), the command ended, or the answer passed :data:`LINE_CAP`;
        the session is then closed and :attr:`failure` says why.
        """
        if self._proc is None or self.failure:
            return None
        stdin = cast(IO[bytes], self._proc.stdin)
        try:
            stdin.write(line.encode() + b"\n")
            stdin.flush()
        except OSError:
            self._fail("the process closed its input (it ended)")
            return None
        left = self.policy.timeout_s - (clock.monotonic() - self._started)
        deadline = clock.monotonic() + min(timeout_s, max(left, 0.0))
        stdout = cast(IO[bytes], self._proc.stdout)
        with selectors.DefaultSelector() as sel:
            sel.register(stdout.fileno(), selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                wait = deadline - clock.monotonic()
                if wait <= 0:
                    self._fail(f"timed out after {timeout_s:g} s")
                    return None
                if not sel.select(timeout=min(wait, 0.5)):
                    continue
                chunk = os.read(stdout.fileno(), 65536)
                if not chunk:
                    self._fail("the process ended without answering")
                    return None
                self._buffer += chunk
                if len(self._buffer) > LINE_CAP:
                    self._fail(f"an answer longer than {LINE_CAP} bytes")
                    return None
        answer, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        return answer.decode("utf-8", "replace")

    def _fail(self, why: str) -> None:
        self.failure = why
        self.close()
        return None

    def close(self) -> None:
        """Kill the command's whole process group and remove its private folders."""
        if self._proc is not None:
            _kill_group(self._proc)
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
            self._proc.wait()
            self._proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
