"""Run one untrusted command: timeout, output caps, scrubbed environment, network off, isolation recorded.

(Skeleton: the value types are fixed; ``run`` and ``isolation`` are being implemented.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

IsolationKind = Literal["bwrap", "unshare", "none"]


class SandboxPolicy(BaseModel):
    """What an untrusted command is granted.

    Attributes:
        network: allow network access (default off).
        timeout_s: wall-clock budget in seconds; the whole process group is killed past it.
        output_cap_bytes: bytes kept of stdout and of stderr each; the rest is dropped, counted.
        env: extra environment variables granted (the rest of the caller's environment is scrubbed).
        home: a private HOME to use; None makes a fresh temporary one.
    """

    model_config = ConfigDict(frozen=True)

    network: bool = False
    timeout_s: float = Field(default=600.0, gt=0)
    output_cap_bytes: int = Field(default=4 * 1024 * 1024, gt=0)
    env: Mapping[str, str] = Field(default_factory=dict)
    home: Path | None = None


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


def run(argv: Sequence[str], cwd: Path, policy: SandboxPolicy) -> ExecResult:
    """Run ``argv`` in ``cwd`` under ``policy`` (skeleton)."""
    raise NotImplementedError


def isolation(network: bool) -> Isolation:
    """Return the isolation this machine can give a command (skeleton)."""
    raise NotImplementedError
