"""The uv backend: a uv virtual environment built from the contract's recipe, cached.

A build is a uv virtual environment made from an interpreter already on this machine (pyenv or
uv-managed pythons, found with ``uv python find``; no interpreter is downloaded:
``UV_PYTHON_DOWNLOADS=never``), then the recipe's install commands run in the sandbox with the
environment activated, in the base checkout, so they read the base commit's own lockfile or
requirements, never today's.

**Cache.** The venv lives at ``cache_dir/<key>/venv``, where ``key`` is sha256 over the recipe, the
interpreter's full version and platform, and the bytes of each ``lock_inputs`` file at the base. A
venv is not relocatable, so it is built where it stays and reused in place; a warm build does not
reinstall. The uv package cache (``cache_dir/uv-cache``) is shared so a cold build reuses downloads,
and uv copies files from it (``UV_LINK_MODE=copy``) so a change to a venv never reaches the cache.
Builds of one key are serialised with a file lock. A finished build writes ``record.json`` last,
holding a fingerprint of every file in the venv (path, size, mtime, mode); a warm build whose venv
no longer matches (tests that wrote into it) is thrown away and rebuilt.

**Editable installs.** ``pip install -e .`` or ``uv sync`` make the venv import the project from the
checkout it was built in. The cached venv must instead import each candidate's own checkout, so
after the install commands the hooks that point into the build checkout are removed (path lines
in ``.pth`` files, setuptools' ``__editable___*_finder`` modules, and the copy a non-editable
install of the checkout left in site-packages) and the folders they named are kept as
``import_roots``, relative to the checkout; :meth:`UvEnvironment.variables` puts
``<checkout>/<root>`` on ``PYTHONPATH`` for every run. A hook that still names the build checkout afterwards is an
:class:`~repogate.errors.EnvironmentBuildError`, never a silent run of the base code.

**Generated files.** A Python module the install commands write below an import root of the
build checkout (setuptools-scm's ``src/_pytest/_version.py``), or an extension module an
in-place build compiles there (astropy's ``.so`` files), is kept in the cache entry and
recorded (``generated``); every command run in the environment on a checkout lacking it gets
it first (:meth:`UvEnvironment.run`), so a graded tree imports what the install made.

The install commands may write into the checkout they run in (``*.egg-info``, ``build/``): give a
harness-owned checkout of the base, not the agent's workspace.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from repogate import clock, sandbox
from repogate._files import read_bytes_nofollow
from repogate._toolchain import (
    OLDEST_PYTHON,
    SYSTEM_PATH,
    find_python,
    interpreter_facts,
    tool,
    trust,
    uv_bin,
    uv_version,
)
from repogate._version import __version__
from repogate.contract import EnvironmentRecipe
from repogate.environments import _venv
from repogate.environments._editable import detach
from repogate.environments._record import Toolchain, conditions_env
from repogate.environments._request import BuildRequest
from repogate.environments._venv import environment_digest
from repogate.errors import EnvironmentBuildError

__all__ = ["UvEnvironment", "build_environment", "cache_key", "environment_digest"]

_LAYOUT = 3  # bump when the cache layout or the build steps change (3: generated files kept)
_CHECKOUT = "<checkout>"


class UvEnvironment(_venv.VenvRecord):
    """A built (or reused) uv environment: the ``uv`` backend's record and its :class:`Environment`.

    This is the record stored in receipts, the manifest and the cache's ``record.json``; records
    written before the backends existed read as uv's. Only this module reads ``python``,
    ``bin_dir``, ``venv`` and ``import_roots``; everyone else uses the methods of
    :class:`repogate.environments.Environment`.

    Attributes:
        bin_dir: the venv's ``bin`` folder (first on PATH for every command run in it).

    The others are :class:`~repogate.environments._venv.VenvRecord`'s; here ``digest`` is
    sha256 over the toolchain (python, uv, platform) and the resolved packages, and
    ``packages`` are ``uv pip freeze`` lines, the build checkout's path written ``<checkout>``.
    """

    backend: ClassVar[Literal["uv"]] = "uv"
    """The backend's name (not a field: uv records are stored without it)."""

    bin_dir: Path

    @classmethod
    def build(cls, request: BuildRequest) -> UvEnvironment:
        """Build the request's venv, or reuse the cached one (:func:`build_environment`)."""
        return build_environment(
            request.recipe,
            request.base_checkout,
            request.cache_dir,
            request.policy,
            request.exclude_newer,
        )

    def variables(self, checkout: Path) -> dict[str, str]:
        """Return the variables that run a command in this venv against ``checkout``.

        ``VIRTUAL_ENV``, ``PATH`` (the venv's bin, then :data:`SYSTEM_PATH`), ``PYTHONPATH``
        (the checkout's import roots), ``PYTHONDONTWRITEBYTECODE=1`` (nothing written into the
        venv or the checkout), and the recorded ``TZ``, ``LANG`` and ``LC_ALL``.
        """
        return self.activated(checkout, self.bin_dir, SYSTEM_PATH)

    def grant(self, checkout: Path, policy: sandbox.SandboxPolicy) -> sandbox.SandboxPolicy:
        """Return ``policy`` with :meth:`variables` under its own ``env`` (its own win)."""
        return policy.model_copy(update={"env": {**self.variables(checkout), **policy.env}})


class _Record(_venv.CacheRecord[UvEnvironment]):
    pass


def cache_key(
    recipe: EnvironmentRecipe,
    interpreter: tuple[str, str, str],
    locks: Mapping[str, str],
    exclude_newer: str | None = None,
) -> str:
    """Return the cache digest of an environment (hex sha256).

    Args:
        recipe: the contract's recipe (timezone and locale included).
        interpreter: (full version, implementation, platform) of the interpreter it is built from.
        locks: each lock input's sha256 at the base (``absent`` for a file that is not there).
        exclude_newer: the resolution bound in force (the base commit's date), or None.

    The evaluator version is part of it: how a build is done (and its venv redirected) is
    repogate's code. The recipe's ``backend`` (always ``uv`` here) is left out of its dump, so
    keys made before recipes named a backend are unchanged.
    """
    payload = {
        "layout": _LAYOUT,
        "evaluator": __version__,
        "recipe": recipe.model_dump(mode="json"),
        "python": interpreter,
        "locks": dict(locks),
        "exclude_newer": exclude_newer,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _install_env(
    venv: Path, cache_dir: Path, granted: Mapping[str, str], job: _Job
) -> dict[str, str]:
    tools = cache_dir / ".bin"
    tools.mkdir(parents=True, exist_ok=True)
    link = tools / "uv"
    if not link.exists() or link.resolve() != Path(uv_bin()).resolve():
        fresh = tools / f"uv.{os.getpid()}"  # replaced atomically: builds may run side by side
        fresh.unlink(missing_ok=True)
        fresh.symlink_to(uv_bin())
        fresh.replace(link)
    python = venv / "bin" / "python"
    return {
        **trust(),
        **granted,
        "VIRTUAL_ENV": str(venv),
        "PATH": os.pathsep.join([str(venv / "bin"), str(tools), SYSTEM_PATH]),
        "UV_CACHE_DIR": str(cache_dir / "uv-cache"),
        "UV_PROJECT_ENVIRONMENT": str(venv),
        "UV_PYTHON": str(python),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_LINK_MODE": "copy",
        "UV_NO_PROGRESS": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        **conditions_env(job.recipe.timezone, job.recipe.locale),
        **({"UV_EXCLUDE_NEWER": job.exclude_newer} if job.exclude_newer else {}),
    }


def _runtime_files(venv: Path) -> dict[str, str]:
    """What the sandbox reads to show a command its interpreter: ``pyvenv.cfg`` and the links.

    ``home`` in ``pyvenv.cfg`` and the target of ``bin/python*`` decide which folders every later
    command in the venv is shown (:func:`repogate.sandbox.runtime_folders`), and install commands
    write the venv: read here without following a link, to be compared after each command.
    """
    found: dict[str, str] = {}
    for path in sorted([venv / "pyvenv.cfg", *venv.glob("bin/python*")]):
        try:
            found[path.name] = (
                "-> " + str(path.readlink())
                if path.is_symlink()
                else (read_bytes_nofollow(venv, str(path.relative_to(venv))) or b"").hex()
            )
        except OSError as exc:
            found[path.name] = f"unreadable: {exc.strerror}"
    return found


def _run_install(job: _Job, venv: Path) -> None:
    env = _install_env(venv, job.cache_dir, job.policy.env, job)
    runtime = _runtime_files(venv)  # as ``uv venv`` made them
    # uv is on PATH as a link to the harness's own (_install_env); its target is readable, so a
    # command reaching it through a launcher (``env VAR=1 uv ...``, ``sh -c``) finds it too: the
    # sandbox mounts the runtime of the program named first only
    readable = (*job.policy.readable, Path(uv_bin()).resolve())
    update = {"network": job.recipe.network, "env": env, "readable": readable}
    granted = job.policy.model_copy(update=update)
    for command in job.recipe.install:
        result = sandbox.run(_venv.words(command), job.workdir, granted)
        if not result.ok:
            raise _venv.failed(f"install command `{command}`", result, shown=command)
        now = _runtime_files(venv)
        if now != runtime:  # the next command (and every test run) would be shown what it names
            changed = ", ".join(sorted(n for n in {*now, *runtime} if now.get(n) != runtime.get(n)))
            raise EnvironmentBuildError(
                f"install command `{command}` changed the venv's {changed}, which decide what "
                "the sandbox shows later commands; leave the interpreter and pyvenv.cfg as uv "
                "venv made them"
            )


def _freeze(job: _Job, venv: Path) -> tuple[str, ...]:
    """List the venv's packages (``uv pip freeze``), in the sandbox, with no network.

    uv runs the venv's interpreter to find its packages, with ``site``: a ``.pth`` line, a
    ``sitecustomize`` or a replaced ``bin/python`` an install command left there runs with it,
    so the listing is untrusted code like the install commands (red team 2026-12-02: run on
    this machine it had the user's files and the network). It sees the venv read-only.

    Raises:
        EnvironmentBuildError: the listing failed or timed out.
    """
    env = {
        **trust(),
        "PATH": os.pathsep.join([str(venv / "bin"), SYSTEM_PATH]),
        "UV_NO_CACHE": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_PROGRESS": "1",
    }
    readable = (venv, Path(uv_bin()).resolve())
    update = {"network": False, "env": env, "readable": readable, "writable": ()}
    argv = [uv_bin(), "pip", "freeze", "--python", str(venv / "bin" / "python")]
    result = sandbox.run(argv, job.entry, job.policy.model_copy(update=update))
    if not result.ok:
        raise _venv.failed("list packages", result)
    workdir = job.workdir.resolve()
    url = workdir.as_uri()
    return tuple(
        line.replace(url, _CHECKOUT).replace(str(workdir), _CHECKOUT)
        for line in result.stdout.splitlines()
        if line.strip()
    )


def build_environment(
    recipe: EnvironmentRecipe,
    workdir: Path,
    cache_dir: Path,
    policy: sandbox.SandboxPolicy,
    exclude_newer: str | None = None,
) -> UvEnvironment:
    """Build the recipe's environment at the base checkout ``workdir``, or reuse the cached one.

    Args:
        recipe: the contract's environment recipe (python version, install commands, network).
        workdir: a harness-owned checkout of the base commit; install commands run there.
        cache_dir: the environment cache (shared between attempts; created when absent).
        policy: the sandbox policy for install commands (timeout, output cap, extra env); its
            ``network`` is replaced by the recipe's.
        exclude_newer: an RFC 3339 time given to the install commands as ``UV_EXCLUDE_NEWER``
            (uv resolves only releases uploaded before it), or None; part of the cache key.

    Returns:
        The environment, ``cold`` True when this call built it.

    Raises:
        EnvironmentBuildError: no interpreter for the version; ``uv venv`` failed; an install
            command failed or timed out; an editable install this module cannot redirect. The
            environment's fault, reported as an ``error``, never the agent's failure.
    """
    start = clock.monotonic()
    cache_dir = cache_dir.resolve()
    cache_dir.mkdir(parents=True, exist_ok=True)
    python = find_python(recipe.python, cache_dir)
    facts = interpreter_facts(python, cache_dir)
    _check_guard_runs(facts[0], recipe.python)
    key = cache_key(recipe, facts, _venv.lock_digests(recipe, workdir), exclude_newer)

    def build(entry: Path) -> UvEnvironment:
        job = _Job(recipe, python, facts, entry, workdir, cache_dir, policy, exclude_newer)
        return _build(job)

    def stamp() -> dict[str, object]:
        return {"build_seconds": clock.monotonic() - start}

    return _venv.cached(cache_dir, key, _Record, build, stamp)


def _check_guard_runs(version: str, asked: str) -> None:
    """Refuse an interpreter older than :data:`OLDEST_PYTHON`, before anything is built.

    Raises:
        EnvironmentBuildError: ``version`` (the interpreter's full version) is older.
    """
    parts = version.split(".")
    known = len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit()
    if known and (int(parts[0]), int(parts[1])) < OLDEST_PYTHON:
        oldest = ".".join(map(str, OLDEST_PYTHON))
        raise EnvironmentBuildError(
            f"the recipe's python {asked!r} is Python {version}: repogate's test sessions "
            f"need Python {oldest} or later (the guard's audit hook, PEP 578, is added "
            "before the checkout is imported); give the recipe a newer python"
        )


@dataclass(frozen=True)
class _Job:
    """One cold build: what to build, from which interpreter, where."""

    recipe: EnvironmentRecipe
    python: Path
    facts: tuple[str, str, str]
    entry: Path
    workdir: Path
    cache_dir: Path
    policy: sandbox.SandboxPolicy
    exclude_newer: str | None = None


def _build(job: _Job) -> UvEnvironment:
    recipe, entry, workdir, cache_dir = job.recipe, job.entry, job.workdir, job.cache_dir
    venv = entry / "venv"
    argv = [uv_bin(), "venv", "--python", str(job.python), "--no-config", "--quiet"]
    argv += ["--seed"] if _venv.needs_pip(recipe.install) else []
    env = {
        **trust(),
        "PATH": SYSTEM_PATH,
        "UV_CACHE_DIR": str(cache_dir / "uv-cache"),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_LINK_MODE": "copy",
    }
    tool([*argv, str(venv)], env, entry, "create venv")
    before = _venv.checkout_files(workdir)
    _run_install(job, venv)
    roots = detach(venv, workdir)
    generated = _venv.keep_generated(workdir, before, roots, entry)
    version, implementation, plat = job.facts
    toolchain = Toolchain(
        python=version, implementation=implementation, platform=plat, uv=uv_version(entry)
    )
    packages = _freeze(job, venv)
    return UvEnvironment(
        **_venv.built_fields(recipe, venv, toolchain, packages, roots),
        bin_dir=venv / "bin",
        digest=environment_digest(
            toolchain,
            packages,
            {"tz": recipe.timezone, "locale": recipe.locale, "exclude_newer": job.exclude_newer},
            recipe.services,
        ),
        exclude_newer=job.exclude_newer,
        generated=generated,
    )
