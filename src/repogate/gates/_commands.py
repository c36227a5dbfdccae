"""Helpers shared by the lifecycle gates that run commands: environment grants, network failures.

Private to :mod:`repogate.gates`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from repogate.sandbox import ExecResult, SandboxPolicy

# What package managers and Python print when an index or host cannot be reached (uv, pip,
# poetry, urllib, requests). A match turns a failure into "unverified", never "failed".
_NETWORK = re.compile(
    r"network was disabled|offline mode|failed to fetch|error sending request|tcp connect error"
    r"|dns error|name or service not known|temporary failure in name resolution"
    r"|connection refused|network is unreachable|could not resolve host|connecterror"
    r"|max retries exceeded|urlopen error|failed to establish a new connection"
    r"|request failed after \d+ retr",
    re.IGNORECASE,
)


# Where TLS trust is configured on machines with their own certificate authority: forwarded to a
# command granted the network, so its HTTPS requests are verified as the caller's would be.
_TLS_TRUST = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "PIP_CERT")


def looks_like_network_failure(text: str) -> bool:
    """Return True when ``text`` (a command's stderr) says a host or index could not be reached."""
    return _NETWORK.search(text) is not None


def system_path(env: Mapping[str, str]) -> str:
    """Return the ``PATH`` a command gets: the policy's grant, else the caller's, else a default."""
    return env.get("PATH") or os.environ.get("PATH") or os.defpath


def granted(
    policy: SandboxPolicy,
    *,
    network: bool,
    python_bin: Path | None = None,
    extra: Mapping[str, str] | None = None,
) -> SandboxPolicy:
    """Return ``policy`` with ``network`` and more environment granted.

    Args:
        policy: the caller's policy (timeout, caps, environment already granted).
        network: the network grant for this command.
        python_bin: the environment's interpreter; its folder goes first on ``PATH`` so ``python``
            resolves to it. A folder is accepted too.
        extra: further variables; the policy's own grants win over them.

    With ``network``, the caller's TLS trust settings (``SSL_CERT_FILE``, ``SSL_CERT_DIR``, ...)
    are forwarded too.
    """
    trust = {k: os.environ[k] for k in _TLS_TRUST if network and k in os.environ}
    env = {**trust, **(extra or {}), **policy.env}
    if python_bin is not None:
        folder = python_bin if python_bin.is_dir() else python_bin.parent
        env["PATH"] = f"{folder}{os.pathsep}{system_path(policy.env)}"
    return policy.model_copy(update={"network": network, "env": env})


def tail(text: str, lines: int = 8) -> str:
    """Return the last ``lines`` non-blank lines of ``text``, joined with `` | ``."""
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(kept[-lines:])


def describe_failure(what: str, result: ExecResult) -> str:
    """Say how a command failed: timeout or exit code, and the tail of its stderr (or stdout)."""
    if result.timed_out:
        return f"{what} timed out after {result.duration_s:.0f} s"
    output = tail(result.stderr) or tail(result.stdout)
    return f"{what} exited {result.returncode}" + (f": {output}" if output else "")
