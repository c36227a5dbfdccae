"""The evaluator's own toolchain calls for gate E: uv and the interpreters on this machine.

These are trusted commands (the evaluator's uv from PyPI, interpreters already installed), run
directly with a small fixed environment; the recipe's untrusted install commands go through
:mod:`repogate.sandbox` instead. A failure here is the environment's, raised as
:class:`~repogate.errors.EnvironmentBuildError`.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

import uv

from repogate._logs import cause_line
from repogate.errors import EnvironmentBuildError

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The PATH after an environment's bin folder: system tools, never the evaluator's own venv."""

TRUST_VARS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE")
"""Where this machine keeps its TLS trust roots (locations, not secrets): given to network uses."""

_VERSION_RE = re.compile(r"^[0-9]+(\.[0-9]+){0,2}$")
_TIMEOUT_S = 300.0


def tool(argv: list[str], env: Mapping[str, str], cwd: Path, what: str) -> str:
    """Run a trusted toolchain command and return its stdout.

    Raises:
        EnvironmentBuildError: it could not start, ran past 300 s, or exited non-zero; the
            message starts with ``what`` and ends with the line naming the cause; the whole
            output is its ``log``.
    """
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentBuildError(f"{what}: {' '.join(argv)} could not run ({exc})") from None
    if done.returncode != 0:
        raise EnvironmentBuildError(
            f"{what}: exit {done.returncode}: {cause_line(done.stdout + chr(10) + done.stderr)}",
            log=f"$ {' '.join(argv)}\n## stdout\n{done.stdout}\n## stderr\n{done.stderr}",
        )
    return done.stdout


def uv_bin() -> str:
    """Return the path of the uv executable installed with repogate (the ``uv`` PyPI package)."""
    return uv.find_uv_bin()


OLDEST_PYTHON = (3, 8)
"""The oldest Python a graded test session runs on: the guard's bootstrap adds an audit hook
(PEP 578, Python 3.8) before the checkout is imported (:mod:`repogate.oracles._guard_boot`)."""


def trust() -> dict[str, str]:
    """Return this process's TLS trust-root variables (:data:`TRUST_VARS`) that are set."""
    return {k: os.environ[k] for k in TRUST_VARS if k in os.environ}


def _version_key(name: str) -> list[int]:
    return [int(x) if x.isdigit() else -1 for x in name.split(".")]


def search_path(version: str) -> str:
    """Return a PATH for finding ``version`` (an ``os.pathsep``-joined string).

    Matching pyenv versions come first, newest first, then this process's PATH without pyenv's
    ``shims`` folders: a shim for a version that is not the pyenv default fails when run, and uv
    stops at the first interpreter that fails.
    """
    versions = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found: list[Path] = []
    if versions.is_dir():
        found = [
            p for p in versions.iterdir() if p.name == version or p.name.startswith(f"{version}.")
        ]
        found.sort(key=lambda p: _version_key(p.name), reverse=True)
    rest = os.environ.get("PATH", SYSTEM_PATH).split(os.pathsep)
    return os.pathsep.join(
        [*(str(p / "bin") for p in found), *(d for d in rest if Path(d).name != "shims")]
    )


def find_python(version: str, cwd: Path) -> Path:
    """Find an installed interpreter for ``version`` with ``uv python find`` (never downloads).

    Args:
        version: ``3``, ``3.11`` or ``3.11.7``.
        cwd: a folder to run uv in.

    Returns:
        The interpreter's path.

    Raises:
        EnvironmentBuildError: the version is malformed, or no interpreter for it is installed;
            the message names the version.
    """
    if not _VERSION_RE.match(version):
        raise EnvironmentBuildError(f"python version {version!r} is not a version like 3.11")
    keep = ("HOME", "XDG_DATA_HOME", "UV_PYTHON_INSTALL_DIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(PATH=search_path(version), UV_PYTHON_DOWNLOADS="never", UV_NO_CONFIG="1")
    try:
        out = tool([uv_bin(), "python", "find", "--system", version], env, cwd, "find python")
    except EnvironmentBuildError:
        raise EnvironmentBuildError(
            f"no Python {version} interpreter is installed on this machine "
            "(looked with `uv python find`, pyenv versions included); install it or change "
            "the recipe's python"
        ) from None
    return Path(out.strip())


def interpreter_facts(python: Path, cwd: Path) -> tuple[str, str, str]:
    """Return (full version, implementation, platform tag) of ``python``.

    For example ``("3.11.7", "CPython", "linux-x86_64")``.
    """
    code = "import platform,sysconfig;print(platform.python_version());"
    code += "print(platform.python_implementation());print(sysconfig.get_platform())"
    out = tool([str(python), "-I", "-c", code], {"PATH": SYSTEM_PATH}, cwd, "query python")
    version, implementation, plat = out.split()
    return version, implementation, plat


def uv_version(cwd: Path) -> str:
    """Return ``uv --version`` as printed, e.g. ``uv 0.4.30``."""
    return tool([uv_bin(), "--version"], {"PATH": SYSTEM_PATH}, cwd, "uv version").strip()
