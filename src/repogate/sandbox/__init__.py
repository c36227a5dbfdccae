"""The sandbox: how every untrusted command (agent, install, test) runs.

Public face of the package; the modules behind it are private:

- ``_run``: :func:`run`, the one way to start an untrusted command (timeout, output caps, a
  scrubbed environment, no network unless granted), :func:`launcher` (a file that starts one
  for a tool of the harness), and :class:`SandboxPolicy` / :class:`ExecResult`;
- ``_isolation``: whether bubblewrap isolates here, and the :class:`Isolation` record written into
  the manifest and every decision;
- ``_mounts``: the file system allowlist bubblewrap mounts (this machine's system folders, or an
  image's root file system: :class:`RootFilesystem`);
- ``_session``: :class:`Session`, a sandboxed command talked to line by line.
"""

from repogate.errors import IsolationError
from repogate.sandbox._isolation import (
    INSTALL_HINT,
    SANDBOX_ENV,
    WEAK_ENV,
    WEAK_FLAG,
    Isolation,
    allowing_weak_isolation,
    isolation,
    require_isolation,
    weak_isolation_reason,
    weakest,
)
from repogate.sandbox._mounts import SECRET_PATHS
from repogate.sandbox._run import (
    ExecResult,
    RootFilesystem,
    SandboxPolicy,
    command_line,
    launcher,
    run,
)
from repogate.sandbox._session import Session

__all__ = [
    "INSTALL_HINT",
    "SANDBOX_ENV",
    "SECRET_PATHS",
    "WEAK_ENV",
    "WEAK_FLAG",
    "ExecResult",
    "Isolation",
    "IsolationError",
    "RootFilesystem",
    "SandboxPolicy",
    "Session",
    "allowing_weak_isolation",
    "command_line",
    "isolation",
    "launcher",
    "require_isolation",
    "run",
    "weak_isolation_reason",
    "weakest",
]
