"""What the venv-making backends (uv, image) share: build steps, the cache entry, the run methods.

Private to :mod:`repogate.environments`. A backend whose environment is a venv at
``cache_dir/<key>/venv`` builds it through :func:`cached` (one build per key at a time, reused
while its files are as the build left them), splits and checks its recipe's install commands with
:func:`words` and :func:`needs_pip`, keys its cache with :func:`lock_digests`, digests what it
built with :func:`environment_digest`, and gets the fields and the Protocol methods that are the
same for every venv record from :class:`VenvRecord`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import Field, ValidationError

from repogate import sandbox
from repogate._files import PlantedLinkError, read_bytes_nofollow, write_bytes_nofollow
from repogate._locks import locked
from repogate._logs import cause_line
from repogate._model import FrozenModel, SchemaVersion
from repogate.contract import Service
from repogate.environments._envcache import fingerprint
from repogate.environments._record import Toolchain, conditions_env
from repogate.errors import EnvironmentBuildError

if TYPE_CHECKING:
    from repogate.contract import EnvironmentRecipe

E = TypeVar("E", bound=FrozenModel)


class CacheRecord(FrozenModel, Generic[E]):
    """A finished build's ``record.json``: the environment and its venv's fingerprint.

    Attributes:
        environment: the backend's record, as :meth:`cached` returned it when it was built.
        fingerprint: :func:`~repogate.environments._envcache.fingerprint` of the venv then.
    """

    environment: E
    fingerprint: str


def cached(
    cache_dir: Path,
    key: str,
    record: type[CacheRecord[E]],
    build: Callable[[Path], E],
    stamp: Callable[[], Mapping[str, object]],
) -> E:
    """Return the environment cached at ``cache_dir/<key>``, or build it there.

    Under the key's file lock: a ``record.json`` whose fingerprint still matches the venv
    (``cache_dir/<key>/venv``) is reused, ``cold`` False; otherwise the entry is emptied and
    ``build(entry)`` makes the environment, the record being written last (a failed build leaves
    no entry). ``stamp()`` gives the timing fields laid over the environment either way
    (``build_seconds``, and a backend's own).

    Raises:
        EnvironmentBuildError: whatever ``build`` raised.
    """
    entry = cache_dir / key
    with locked(cache_dir / f"{key}.lock"):
        try:
            text = (entry / "record.json").read_text(encoding="utf-8")
            kept: CacheRecord[E] | None = record.model_validate_json(text)
        except (OSError, ValidationError):
            kept = None
        if kept is not None and kept.fingerprint == fingerprint(entry / "venv"):
            return kept.environment.model_copy(update={"cold": False, **stamp()})
        shutil.rmtree(entry, ignore_errors=True)
        entry.mkdir(parents=True)
        try:
            built = build(entry)
        except BaseException:
            shutil.rmtree(entry, ignore_errors=True)
            raise
        built = built.model_copy(update=dict(stamp()))
        kept = record(environment=built, fingerprint=fingerprint(entry / "venv"))
        tmp = entry / "record.json.tmp"
        tmp.write_text(kept.model_dump_json(indent=2), encoding="utf-8")
        tmp.replace(entry / "record.json")
    return built


def environment_digest(
    toolchain: Toolchain,
    packages: tuple[str, ...],
    conditions: Mapping[str, str | None],
    services: tuple[Service, ...] = (),
) -> str:
    """Return sha256 (hex) over the toolchain, the resolved package set and the run conditions.

    ``conditions`` are the timezone, locale and resolution bound: a test's result can depend on
    each, so every cache keyed by this digest (base-state results, real-history results) is too.
    ``services`` (the recipe's) join it when there are any, for the same reason; an environment
    without services keeps the digest it had before services existed.
    """
    payload: dict[str, object] = {
        "toolchain": toolchain.model_dump(mode="json"),
        "packages": sorted(packages),
        "conditions": dict(conditions),
    }
    if services:
        payload["services"] = [s.model_dump(mode="json") for s in services]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def lock_digests(recipe: EnvironmentRecipe, workdir: Path) -> dict[str, str]:
    """Return each of the recipe's ``lock_inputs`` to its sha256 (hex) at ``workdir``.

    A file that is not there is ``absent``.

    Raises:
        EnvironmentBuildError: a lock input's path leads outside ``workdir``.
    """
    base = workdir.resolve()
    digests: dict[str, str] = {}
    for name in recipe.lock_inputs:
        path = (base / name).resolve()
        if not path.is_relative_to(base):
            raise EnvironmentBuildError(f"lock input {name!r} lies outside the checkout")
        digests[name] = (
            hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "absent"
        )
    return digests


def words(command: str) -> list[str]:
    """Return an install command split as a POSIX shell would (:func:`shlex.split`).

    Raises:
        EnvironmentBuildError: the command cannot be split (an open quote), or it is empty.
    """
    try:
        split = shlex.split(command)
    except ValueError as exc:
        raise EnvironmentBuildError(
            f"install command `{command}` cannot be split ({exc})"
        ) from None
    if not split:
        raise EnvironmentBuildError("an install command is empty")
    return split


def needs_pip(commands: tuple[str, ...]) -> bool:
    """True when an install command calls pip itself (the venv is then made with pip in it)."""
    for command in commands:
        split = words(command)
        if split[:1] in (["pip"], ["pip3"]) or split[1:3] == ["-m", "pip"]:
            return True
    return False


def failed(
    what: str, result: sandbox.ExecResult, *, where: str = "", shown: str | None = None
) -> EnvironmentBuildError:
    """Return the error for a build command that failed: ``<what> failed<where> (<why>): <cause>``.

    ``why`` is ``timed out`` or ``exit N``; the error's ``log`` is ``$ <shown>`` (``what`` when
    None), the reason and the command's output.
    """
    why = "timed out" if result.timed_out else f"exit {result.returncode}"
    output = f"{result.stdout}\n{result.stderr}"
    return EnvironmentBuildError(
        f"{what} failed{where} ({why}): {cause_line(output)}",
        log=f"$ {shown or what}\n# {why}\n## stdout\n{result.stdout}\n## stderr\n{result.stderr}",
    )


def built_fields(
    recipe: EnvironmentRecipe,
    venv: Path,
    toolchain: Toolchain,
    packages: tuple[str, ...],
    import_roots: tuple[str, ...],
) -> dict[str, Any]:
    """Return the fields every venv record built at ``venv`` (``cache_dir/<key>/venv``) shares.

    ``python``, ``venv``, ``cache_key`` (the entry's name), ``toolchain``, ``packages``, the
    recipe's ``commands``, ``timezone``, ``locale`` and ``services``, ``import_roots``, ``cold``
    True and ``build_seconds`` 0 (:func:`cached` stamps the time); a backend adds its own.
    """
    return {
        "python": venv / "bin" / "python",
        "venv": venv,
        "cache_key": venv.parent.name,
        "toolchain": toolchain,
        "packages": packages,
        "commands": recipe.install,
        "import_roots": import_roots,
        "cold": True,
        "build_seconds": 0.0,
        "timezone": recipe.timezone,
        "locale": recipe.locale,
        "services": recipe.services,
    }


GENERATED_FOLDER = "generated"
"""Where a cache entry keeps the build's generated files (:class:`GeneratedFile`), beside ``venv``."""
_MAX_GENERATED = 20
_MAX_GENERATED_BYTES = 256 * 1024
_EXTENSION_SUFFIXES = (".so", ".pyd")
"""Compiled extension modules (``_parse_times.cpython-39-x86_64-linux-gnu.so``, ``x.abi3.so``)."""
_MAX_EXTENSIONS = 500
_MAX_EXTENSION_BYTES = 64 * 1024 * 1024


class GeneratedFile(FrozenModel):
    """A file the install commands wrote into the build checkout that its code imports.

    setuptools-scm's ``write_to`` (pytest's ``src/_pytest/_version.py``) writes the version into
    the tree it builds; a graded tree, written afresh from git, lacks it, and ``import _pytest``
    then reports the version ``unknown``. Likewise the extension modules an editable install
    compiles in place (astropy's C and Cython modules): a graded tree holds their sources only.
    The build keeps a copy (``<entry>/generated/<path>``) and :meth:`VenvRecord.run` writes it
    into a checkout that lacks it. A candidate that changes an extension's source is still given
    the base's build of it (the environment is built once, at the base).

    Attributes:
        path: relative to the checkout (``src/_pytest/_version.py``).
        sha256: its bytes' digest (hex).
    """

    path: str
    sha256: str


def checkout_files(checkout: Path) -> frozenset[str]:
    """Every file below ``checkout`` (relative, ``/``-joined), ``.git`` left out; links not followed."""
    found: set[str] = set()
    for folder, dirs, names in os.walk(checkout):
        dirs[:] = [d for d in dirs if d != ".git"]
        here = Path(folder).relative_to(checkout)
        found.update((here / name).as_posix() for name in names)
    return frozenset(found)


def keep_generated(
    checkout: Path, before: frozenset[str], roots: Sequence[str], entry: Path
) -> tuple[GeneratedFile, ...]:
    """Keep the modules the install commands wrote below ``checkout``'s import ``roots``.

    A file counts when it was not there before the install (``before``), lies below one of
    ``roots`` (``src``, ``.``), outside ``__pycache__``, ``*.egg-info``, ``build`` and ``.eggs``,
    is a regular file (a link is skipped), and is either a ``.py`` file of at most 256 KiB (at
    most 20 kept) or a compiled extension module (``.so``, ``.pyd``: an in-place build's, at
    most 64 MiB each, at most 500 kept), in path order. Each is copied to
    ``entry/generated/<path>``.

    Returns:
        The kept files, to be recorded in the environment.
    """
    kept: list[GeneratedFile] = []
    counts = {False: 0, True: 0}  # by kind: Python module, extension module
    skipped = ("__pycache__", "build", ".eggs")
    for path in sorted(checkout_files(checkout) - before):
        parts = path.split("/")
        under = any(r in ("", ".") or path.startswith(f"{r.rstrip('/')}/") for r in roots)
        extension = path.endswith(_EXTENSION_SUFFIXES)
        if (
            not (path.endswith(".py") or extension)
            or not under
            or any(p in skipped or p.endswith(".egg-info") for p in parts[:-1])
        ):
            continue
        cap = _MAX_EXTENSION_BYTES if extension else _MAX_GENERATED_BYTES
        try:
            data = read_bytes_nofollow(checkout, path, cap)
        except (OSError, PlantedLinkError):
            continue
        if data is None or counts[extension] >= (_MAX_EXTENSIONS if extension else _MAX_GENERATED):
            continue
        counts[extension] += 1
        (entry / GENERATED_FOLDER).mkdir(exist_ok=True)
        write_bytes_nofollow(entry / GENERATED_FOLDER, path, data, make_parents=True)
        kept.append(GeneratedFile(path=path, sha256=hashlib.sha256(data).hexdigest()))
    return tuple(kept)


def _folder_exists(checkout: Path, relative: str) -> bool:
    """True when the folder holding ``relative`` is in ``checkout`` (no link on the way).

    Each component is looked at without following a link (``lstat``); the caller has already
    read the path itself without following one.
    """
    here = checkout
    for part in Path(relative).parts[:-1]:
        here = here / part
        try:
            if not stat.S_ISDIR(here.lstat().st_mode):
                return False
        except OSError:
            return False
    return True


class VenvRecord(FrozenModel):
    """The fields and :class:`~repogate.environments.Environment` methods every venv record shares.

    A backend's record derives from it, adds its own fields (after these in the stored JSON:
    every digest is over sorted keys, so the order is not part of any) and its own ``grant``.

    Attributes:
        python: the venv's interpreter.
        venv: the venv folder, ``cache_dir/<cache_key>/venv``.
        cache_key: the cache digest (recipe, interpreter, lock inputs; the backend's own too).
        digest: the environment digest (:func:`environment_digest`).
        toolchain: what made it (:class:`~repogate.environments.Toolchain`).
        packages: ``name==version`` lines of what it holds.
        commands: the install commands run, as the recipe gives them.
        import_roots: folders of a checkout (relative, ``.`` for its top) put on PYTHONPATH.
        cold: True when this call built it, False when it was reused.
        build_seconds: wall seconds this call took (building, or checking the cached one).
        timezone: ``TZ`` for every command run in it (the recipe's, default ``UTC``).
        locale: ``LANG`` and ``LC_ALL`` for every command run in it (default ``C.UTF-8``).
        exclude_newer: the ``UV_EXCLUDE_NEWER`` bound its install commands resolved under
            (RFC 3339, the base commit's date), or None when they resolved as of the build.
        services: the services every test run in it starts on loopback (the recipe's); part of
            ``digest`` when there are any.
        generated: files the install commands wrote into the build checkout that its code
            imports (:class:`GeneratedFile`), written by :meth:`run` into each checkout lacking
            them; empty for builds made before they were kept, and then left out of the
            record's JSON (an environment without any keeps the digest it had before).
    """

    schema_version: SchemaVersion = 1
    python: Path
    venv: Path
    cache_key: str
    digest: str
    toolchain: Toolchain
    packages: tuple[str, ...]
    commands: tuple[str, ...]
    import_roots: tuple[str, ...] = ()
    cold: bool
    build_seconds: float
    timezone: str = "UTC"
    locale: str = "C.UTF-8"
    exclude_newer: str | None = None
    services: tuple[Service, ...] = ()
    generated: tuple[GeneratedFile, ...] = Field(default=(), exclude_if=lambda value: not value)

    if TYPE_CHECKING:  # each backend's own

        def grant(self, checkout: Path, policy: sandbox.SandboxPolicy) -> sandbox.SandboxPolicy: ...

    def describe(self) -> dict[str, Any]:
        """Return the record as JSON data (``model_dump(mode="json")``)."""
        return self.model_dump(mode="json")

    def activated(self, checkout: Path, bin_dir: Path, path: str) -> dict[str, str]:
        """Return the variables of the venv activated on ``checkout``, ``path`` after its ``bin``.

        ``VIRTUAL_ENV``, ``PATH``, ``PYTHONDONTWRITEBYTECODE=1`` (nothing written into the venv
        or the checkout), the recorded ``TZ``, ``LANG`` and ``LC_ALL``, and ``PYTHONPATH`` (the
        checkout's import roots) when there are any.
        """
        variables = {
            "VIRTUAL_ENV": str(self.venv),
            "PATH": f"{bin_dir}{os.pathsep}{path}",
            "PYTHONDONTWRITEBYTECODE": "1",
            **conditions_env(self.timezone, self.locale),
        }
        roots = [str((checkout / root).resolve()) for root in self.import_roots]
        if roots:
            variables["PYTHONPATH"] = os.pathsep.join(roots)
        return variables

    def run(
        self,
        argv: Sequence[str],
        checkout: Path,
        policy: sandbox.SandboxPolicy,
        *,
        pass_fds: Sequence[int] = (),
    ) -> sandbox.ExecResult:
        """Run ``argv`` in ``checkout`` under the record's ``grant`` (:func:`repogate.sandbox.run`).

        The build's generated files (:attr:`generated`) the checkout lacks are written into it
        first (one the checkout holds, the candidate's or a link, is left as it is).
        """
        self.place_generated(checkout)
        return sandbox.run(argv, checkout, self.grant(checkout, policy), pass_fds=pass_fds)

    def place_generated(self, checkout: Path) -> tuple[str, ...]:
        """Write the kept generated files ``checkout`` lacks into it; return their paths.

        Each comes from ``<entry>/generated`` and must still hold its recorded digest; one whose
        folder the checkout lacks (a scratch folder, not the project's checkout) is not written,
        nor one with a link on the way: the tree is looked at and written without following a
        link, and a linked folder is left as it is, never replaced (red team rt31).

        Raises:
            EnvironmentBuildError: a kept copy is missing or no longer holds its digest.
        """
        placed = []
        for item in self.generated:
            try:  # a link at the name or on the way, a FIFO or a folder there: left as it is
                held = read_bytes_nofollow(checkout, item.path, 0, head=True)
            except (OSError, PlantedLinkError):
                continue
            if held is not None or not _folder_exists(checkout, item.path):
                continue  # the candidate's own, or no checkout of the project (a scratch folder)
            try:
                data = read_bytes_nofollow(self.venv.parent / GENERATED_FOLDER, item.path)
            except (OSError, PlantedLinkError):
                data = None
            if data is None or hashlib.sha256(data).hexdigest() != item.sha256:
                raise EnvironmentBuildError(
                    f"the build's generated file {item.path} is missing from the environment "
                    "cache or changed since the build; remove the cache entry to rebuild it"
                )
            write_bytes_nofollow(checkout, item.path, data)
            placed.append(item.path)
        return tuple(placed)

    def python_argv(self) -> tuple[str, ...]:
        """Return ``(<venv>/bin/python,)`` (for the image backend, a path in the image's sandbox)."""
        return (str(self.python),)

    def checkout_roots(self) -> tuple[str, ...]:
        """Return the import roots the build's editable installs named (``.``, ``src``)."""
        return self.import_roots

    def prebuilt_extensions(self) -> tuple[str, ...]:
        """Return the kept generated files that are compiled extension modules, sorted."""
        return tuple(sorted(g.path for g in self.generated if g.path.endswith(_EXTENSION_SUFFIXES)))
