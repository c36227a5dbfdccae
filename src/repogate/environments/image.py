"""The image backend: the recipe and every later command run in a container image's root, no daemon.

A contract selects it with ``[environment] backend = "image"`` and ``image = "<archive>"``: an
image saved by ``docker save`` or ``podman save`` (Docker archive or OCI layout) or a root file
system tarball (``mmdebstrap``, ``docker export``), relative to the task set or absolute. The
archive is unpacked once into the environment cache by its digest (:mod:`._oci`), and every
command runs under bubblewrap with that root as ``/``, read-only
(:class:`repogate.sandbox.RootFilesystem`): the same sandbox, grants and isolation record as the uv
backend's, the record naming the image. Docker and podman are not used: no daemon is needed.

**Build.** In the image, a virtual environment is made at ``cache_dir/<key>/venv`` (the same path
inside the sandbox and on this machine) with ``--system-site-packages``, so what the image
already installed (its distribution's ``python3-pytest``, a conda environment's packages) is
there; it is made ``--without-pip`` unless an install command calls pip. The interpreter is the
image's ``python3`` (its version must match the recipe's ``python``), or the recipe's ``python``
when that is an absolute path in the image (``/opt/miniconda3/envs/testbed/bin/python``). The
install commands then run in the image at the base checkout with the venv activated and the
recipe's network grant, and editable installs are redirected as the uv backend does
(:func:`~repogate.environments._editable.detach`). The package set is every distribution the
venv's interpreter sees (``importlib.metadata``), the image's included.

**Digests.** The cache key and the environment digest both hold the image digest (sha256 of the
image's config, or of the tarball), so the receipts and every cache keyed by the environment name
the image. ``resolve_as_of`` binds uv commands only; images have none, so ``exclude_newer`` is
recorded as None.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Any, Literal

from repogate import clock, sandbox
from repogate._version import __version__
from repogate.contract import EnvironmentRecipe
from repogate.environments import _venv
from repogate.environments._editable import detach
from repogate.environments._oci import ImageKind, UnpackedImage, unpack_image
from repogate.environments._record import Toolchain, conditions_env
from repogate.environments._request import BuildRequest
from repogate.errors import EnvironmentBuildError

__all__ = ["IMAGE_PATH", "ImageEnvironment"]

_LAYOUT = 1  # bump when the cache layout or the build steps change
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The image's own ``PATH`` after the venv's ``bin`` (Debian's default; the image's programs)."""

_FACTS = (
    "import json, platform, sys, sysconfig\n"
    "from importlib import metadata\n"
    "names = {}\n"
    "for dist in metadata.distributions():\n"
    "    name = dist.metadata['Name']\n"
    "    if name: names.setdefault(name, dist.version)\n"
    "print(json.dumps({'python': platform.python_version(),\n"
    "    'implementation': platform.python_implementation(),\n"
    "    'platform': sysconfig.get_platform(),\n"
    "    'packages': sorted(f'{n}=={v}' for n, v in names.items()),\n"
    "    'pip': names.get('pip')}))\n"
)
"""Run by the venv's interpreter in the image: its version, platform and every distribution."""


class ImageEnvironment(_venv.VenvRecord):
    """A built (or reused) environment in an image: the ``image`` backend's record.

    Attributes:
        backend: ``image``.
        image: the image digest, ``sha256:<hex>`` (its config's, or the tarball's).
        image_kind: the archive's form: ``docker-archive``, ``oci-layout`` or ``rootfs``.
        rootfs: the unpacked root on this machine, ``cache_dir/images/<hex>/rootfs``.
        unpack_seconds: wall seconds this call spent unpacking the image (0 when it was there).

    The others are :class:`~repogate.environments._venv.VenvRecord`'s; here ``python`` is a
    path inside the image's sandbox (never run outside it), the same path as on this machine for
    ``venv``; ``cache_key`` holds the image digest; ``digest`` is over the image digest,
    toolchain, packages and conditions; ``toolchain`` names the image's interpreter and
    ``pip <version>`` (or ``none``) for what installed; ``packages`` is every distribution the
    venv's interpreter sees; ``build_seconds`` counts unpacking too; ``exclude_newer`` is always
    None (the bound applies to uv commands, which images lack).
    """

    backend: Literal["image"] = "image"
    image: str
    image_kind: ImageKind
    rootfs: Path
    unpack_seconds: float = 0.0

    @classmethod
    def build(cls, request: BuildRequest) -> ImageEnvironment:
        """Unpack the recipe's image and build its venv in it, or reuse the cached one.

        As :meth:`repogate.environments.Environment.build`; here the recipe names an ``image``,
        which is unpacked in the cache's ``images`` folder, and the request's ``exclude_newer``
        is ignored (uv commands only) and recorded as None.

        Raises:
            EnvironmentBuildError: no ``image`` in the recipe, or it cannot be read; the archive
                is refused (:func:`~repogate.environments._oci.unpack_image`); the image's
                interpreter is missing or not the recipe's version; an install command failed.
            IsolationError: bubblewrap is not usable here (an image root needs it).
        """
        recipe, base_checkout, policy = request.recipe, request.base_checkout, request.policy
        start = clock.monotonic()
        archive = recipe.image_archive()
        if archive is None:
            raise EnvironmentBuildError(
                'backend "image" needs [environment] image = "<saved image or root tarball>"'
            )
        if not archive.is_file():
            raise EnvironmentBuildError(
                f"image archive {archive} is not a file; give [environment] image as the path of "
                "a saved image or a root tarball, relative to the task set or absolute"
            )
        cache_dir = request.cache_dir.resolve()
        unpacked = unpack_image(archive, cache_dir)
        unpack_seconds = clock.monotonic() - start
        key = cache_key(recipe, unpacked.digest, _venv.lock_digests(recipe, base_checkout))

        def build(entry: Path) -> ImageEnvironment:
            return _build(recipe, unpacked, entry, base_checkout, policy)

        def stamp() -> dict[str, object]:
            took = clock.monotonic() - start
            return {"build_seconds": took, "unpack_seconds": unpack_seconds}

        return _venv.cached(cache_dir, key, _Record, build, stamp)

    def root(self) -> sandbox.RootFilesystem:
        """Return the image's root file system, as the sandbox shows it (``/``, read-only)."""
        return sandbox.RootFilesystem(path=self.rootfs, image=self.image)

    def variables(self, checkout: Path) -> dict[str, str]:
        """Return the variables that run a command in this environment against ``checkout``.

        ``VIRTUAL_ENV``, ``PATH`` (the venv's bin, then :data:`IMAGE_PATH`), ``PYTHONPATH`` (the
        checkout's import roots), ``PYTHONDONTWRITEBYTECODE=1`` and the recorded ``TZ``,
        ``LANG`` and ``LC_ALL``.
        """
        return self.activated(checkout, self.venv / "bin", IMAGE_PATH)

    def grant(self, checkout: Path, policy: sandbox.SandboxPolicy) -> sandbox.SandboxPolicy:
        """Return ``policy`` made to run commands in the image on ``checkout``.

        :meth:`variables` under its ``env`` (its own win), the image as the root, the venv
        readable (at its path).
        """
        return policy.model_copy(
            update={
                "env": {**self.variables(checkout), **policy.env},
                "root": self.root(),
                "readable": (*policy.readable, self.venv),
            }
        )


class _Record(_venv.CacheRecord[ImageEnvironment]):
    pass


def cache_key(recipe: EnvironmentRecipe, image: str, locks: dict[str, str]) -> str:
    """Return the cache digest of an image environment (hex sha256).

    Over the layout, the evaluator version, the recipe (its ``image`` path left out: the image
    digest stands for the archive's content wherever it lies), the image digest and each lock
    input's sha256 at the base.
    """
    payload = {
        "layout": _LAYOUT,
        "evaluator": __version__,
        "recipe": recipe.model_dump(mode="json", exclude={"image"}),
        "image": image,
        "locks": locks,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _build(
    recipe: EnvironmentRecipe,
    unpacked: UnpackedImage,
    entry: Path,
    workdir: Path,
    policy: sandbox.SandboxPolicy,
) -> ImageEnvironment:
    venv = entry / "venv"
    root = sandbox.RootFilesystem(path=unpacked.rootfs, image=unpacked.digest)
    quiet = policy.model_copy(
        update={
            "network": False,
            "root": root,
            "writable": (entry,),
            "env": {"PATH": IMAGE_PATH, **conditions_env(recipe.timezone, recipe.locale)},
        }
    )
    python = recipe.python if recipe.python.startswith("/") else "python3"
    argv = [python, "-m", "venv", "--system-site-packages", str(venv)]
    argv[-1:-1] = [] if _venv.needs_pip(recipe.install) else ["--without-pip"]
    made = sandbox.run(argv, entry, quiet)
    if not made.ok:
        raise _venv.failed(shlex.join(argv), made, where=" in the image")
    installing = policy.model_copy(
        update={
            "network": recipe.network,
            "root": root,
            "writable": None,  # the checkout and the venv (VIRTUAL_ENV)
            "env": {
                **policy.env,
                "VIRTUAL_ENV": str(venv),
                "PATH": f"{venv / 'bin'}:{IMAGE_PATH}",
                "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                "PIP_NO_INPUT": "1",
                **conditions_env(recipe.timezone, recipe.locale),
            },
        }
    )
    for command in recipe.install:
        result = sandbox.run(_venv.words(command), workdir, installing)
        if not result.ok:
            raise _venv.failed(f"install command `{command}`", result, where=" in the image")
    roots = detach(venv, workdir)
    facts = _facts(venv, entry, quiet)
    if not recipe.python.startswith("/") and not _same_version(facts["python"], recipe.python):
        raise EnvironmentBuildError(
            f"the image's python3 is {facts['python']}, not {recipe.python} as the recipe says; "
            "set [environment] python to its version, or to the path of the image's interpreter"
        )
    toolchain = Toolchain(
        python=str(facts["python"]),
        implementation=str(facts["implementation"]),
        platform=str(facts["platform"]),
        uv=f"pip {facts['pip']}" if facts.get("pip") else "none",
    )
    packages = tuple(str(p) for p in facts["packages"])
    conditions = {"tz": recipe.timezone, "locale": recipe.locale, "exclude_newer": None}
    inner = _venv.environment_digest(toolchain, packages, conditions, recipe.services)
    digest = hashlib.sha256(f"image\0{unpacked.digest}\0{inner}".encode()).hexdigest()
    return ImageEnvironment(
        **_venv.built_fields(recipe, venv, toolchain, packages, roots),
        image=unpacked.digest,
        image_kind=unpacked.kind,
        rootfs=unpacked.rootfs,
        digest=digest,
    )


def _same_version(full: object, wanted: str) -> bool:
    return str(full) == wanted or str(full).startswith(f"{wanted}.")


def _facts(venv: Path, entry: Path, policy: sandbox.SandboxPolicy) -> dict[str, Any]:
    granted = policy.model_copy(update={"readable": (venv,), "writable": ()})
    argv = [str(venv / "bin" / "python"), "-I", "-c", _FACTS]
    result = sandbox.run(argv, entry, granted)
    if not result.ok:
        raise _venv.failed("reading the interpreter and packages", result, where=" in the image")
    try:
        facts = json.loads(result.stdout)
    except ValueError:
        facts = None
    if not isinstance(facts, dict):
        raise EnvironmentBuildError(f"the image's interpreter printed no facts: {result.stdout!r}")
    return facts
