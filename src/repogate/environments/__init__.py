"""Environments: where a checkout's commands run (gate E builds one from the contract's recipe).

This package is the one seam between repogate and how an environment is made. The rest of
repogate sees an environment only through :class:`Environment`: it builds one from the recipe
(:func:`build`), runs a command in it on a checkout under a sandbox grant
(:meth:`Environment.run`, or :meth:`Environment.grant` for a process the harness drives itself),
asks for the argv that starts its interpreter (:meth:`Environment.python_argv`, only ever under
:meth:`Environment.run` or a grant: the harness never starts an environment's interpreter on this
machine, not even for its own queries), and stores its
description (the record's own fields, :meth:`Environment.describe`) in receipts, the manifest and
the digests that key caches.
Nothing outside this package reads a backend's own fields (a venv's folders, its import roots).

When the agent supplies the environment (``[environment] supplied_by = "agent"``), its recipe
(``environment.toml`` in its output folder) is read and laid over the contract's here
(:mod:`repogate.environments.agent_recipe`: :func:`read_agent_recipe`,
:func:`agent_environment_recipe`) and built by :func:`build` like any other.

Backends, by the name a recipe gives in ``[environment] backend`` (:data:`BACKENDS`):

- ``uv`` (:mod:`repogate.environments.uv`): a uv virtual environment made from an interpreter
  already on this machine, with the recipe's install commands run in the sandbox at the base.
- ``image`` (:mod:`repogate.environments.image`): every command in a container image's root file
  system (a saved image or a root tarball, unpacked once by digest) under bubblewrap, no daemon.

**Adding a backend** touches three files: a module here holding its record class (a
:class:`~repogate._model.FrozenModel` with a ``backend`` field of its name, implementing
:class:`Environment` and a ``build`` classmethod); this file (its entry in :data:`BACKENDS` and in
:data:`EnvironmentRecord`, the stored union, tagged by :func:`backend_of`); and
:class:`repogate.contract.EnvironmentRecipe`'s ``backend`` Literal (with the schema docs).

Models for the shape: mini-swe-agent's ``Environment`` Protocol (``src/minisweagent/__init__.py``)
and its name-to-class map (``src/minisweagent/environments/__init__.py``); inspect_ai's sandbox
environment (``util/_sandbox/environment.py``: ``exec``, ``read_file``, ``write_file``) and its
registry.

Method names here are the contract other backends are built against: do not rename them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeAlias

from pydantic import Discriminator, Tag, TypeAdapter, ValidationError

from repogate.environments._record import Toolchain, conditions_env
from repogate.environments._request import BuildRequest
from repogate.environments.agent_recipe import (
    AGENT_RECIPE_FILE,
    AgentRecipe,
    AgentRecipeError,
    agent_environment_recipe,
    read_agent_recipe,
    recipe_text,
)
from repogate.environments.image import ImageEnvironment
from repogate.environments.uv import UvEnvironment
from repogate.errors import ContractError

if TYPE_CHECKING:
    from repogate.contract import Service
    from repogate.sandbox import ExecResult, SandboxPolicy

__all__ = [
    "AGENT_RECIPE_FILE",
    "BACKENDS",
    "AgentRecipe",
    "AgentRecipeError",
    "BuildRequest",
    "Environment",
    "EnvironmentRecord",
    "Toolchain",
    "agent_environment_recipe",
    "as_record",
    "backend",
    "backend_of",
    "build",
    "conditions_env",
    "read_agent_recipe",
    "recipe_text",
]


class Environment(Protocol):
    """A built (or reused) environment: its description, and how commands run in it.

    The description is the record itself (a :class:`~repogate._model.FrozenModel`, so it is
    what receipts, the manifest and caches store); the methods are how the harness uses it.
    Every backend's record carries the fields below; it may carry more of its own, which only
    its own module reads.

    A backend is the record class: ``build`` (a classmethod) makes or reuses one from a recipe.
    """

    @property
    def backend(self) -> str:
        """The backend's name, a key of :data:`BACKENDS` (``uv``)."""
        ...

    @property
    def digest(self) -> str:
        """The environment digest (hex sha256) over what a test's result can depend on.

        The toolchain, the resolved package set, the run conditions (timezone, locale,
        resolution bound) and the services; for a backend with an image, the image's digest.
        Caches of test results (base state, real history) are keyed by it.
        """
        ...

    @property
    def cache_key(self) -> str:
        """The build cache's key (hex sha256): what the build was made from (recipe, inputs)."""
        ...

    @property
    def toolchain(self) -> Toolchain:
        """The interpreter (version, implementation, platform) and the tool that installed."""
        ...

    @property
    def packages(self) -> tuple[str, ...]:
        """The resolved packages, one ``name==version`` line (``uv pip freeze``'s form) each."""
        ...

    @property
    def commands(self) -> tuple[str, ...]:
        """The recipe's install commands that made it, as the recipe gives them."""
        ...

    @property
    def cold(self) -> bool:
        """True when this call built it, False when a cached build was reused."""
        ...

    @property
    def build_seconds(self) -> float:
        """Wall seconds the build call took (building, or checking the cached one)."""
        ...

    @property
    def timezone(self) -> str:
        """``TZ`` for every command run in it (the recipe's)."""
        ...

    @property
    def locale(self) -> str:
        """``LANG`` and ``LC_ALL`` for every command run in it (the recipe's)."""
        ...

    @property
    def exclude_newer(self) -> str | None:
        """The resolution bound its installs ran under (RFC 3339), or None."""
        ...

    @property
    def services(self) -> tuple[Service, ...]:
        """The services every test run in it starts on loopback (the recipe's)."""
        ...

    @classmethod
    def build(cls, request: BuildRequest) -> Environment:
        """Build the request's environment at its base checkout, or reuse the cached one.

        Args:
            request: the recipe (its ``backend`` names this class), the base checkout, the
                cache, the install sandbox and the resolution bound (:class:`BuildRequest`).

        Returns:
            The environment; ``cold`` says whether this call built it.

        Raises:
            EnvironmentBuildError: the environment cannot be built (the environment's fault,
                reported as an ``error``, never the agent's failure).
        """
        ...

    def describe(self) -> dict[str, Any]:
        """Return the record as JSON data, as receipts and the manifest store it."""
        ...

    def variables(self, checkout: Path) -> dict[str, str]:
        """Return the variables a command run in this environment on ``checkout`` gets.

        ``PATH`` (the environment's tools first), ``TZ``, ``LANG``, ``LC_ALL`` and whatever
        makes ``checkout``'s own code importable; merged into a sandbox grant by :meth:`grant`.
        A caller that extends one (``PYTHONPATH`` with the harness's tool folders) reads it here
        and passes the extended value in the policy's ``env``.
        """
        ...

    def grant(self, checkout: Path, policy: SandboxPolicy) -> SandboxPolicy:
        """Return ``policy`` made to run commands in this environment on ``checkout``.

        The policy's ``env`` is laid over :meth:`variables` (a variable the caller grants
        wins); whatever else the backend needs (a root file system, a read-only tool) is added.
        Nothing the caller granted is widened or narrowed. Use it for a process the harness
        drives itself (an interactive session, an agent); a one-shot command goes through
        :meth:`run`. The grant alone must put a command in this environment: the agent's
        sandbox and the generators' (:mod:`repogate.gates.generated`) are given to
        :func:`repogate.sandbox.run` as they are.
        """
        ...

    def run(
        self,
        argv: Sequence[str],
        checkout: Path,
        policy: SandboxPolicy,
        *,
        pass_fds: Sequence[int] = (),
    ) -> ExecResult:
        """Run ``argv`` in this environment with ``checkout`` as its working folder.

        Args:
            argv: the command and its arguments (no shell); ``python`` resolves to the
                environment's interpreter.
            checkout: the tree the command runs on (its working folder).
            policy: the sandbox grant (network, timeout, output cap, writable and readable
                folders, variables); made into this environment's by :meth:`grant`.
            pass_fds: descriptors the command inherits (:func:`repogate.sandbox.run`'s).

        Returns:
            What happened, as :func:`repogate.sandbox.run` reports it (isolation included).
        """
        ...

    def python_argv(self) -> tuple[str, ...]:
        """Return the argv prefix that starts the environment's interpreter under :meth:`run`.

        For example ``("/cache/envs/<key>/venv/bin/python",)``; append ``-c CODE`` or a script.
        """
        ...

    def checkout_roots(self) -> tuple[str, ...]:
        """Return the folders of a checkout (relative, ``.`` for its top) its code imports from.

        A module's importable name is its path below one of them (``src`` for a src layout).
        """
        ...

    def prebuilt_extensions(self) -> tuple[str, ...]:
        """Return the extension modules built once, at the base, placed into every checkout.

        Paths relative to a checkout (``pkg/_speed.cpython-311-x86_64-linux-gnu.so``), sorted;
        empty when the build compiled none in place. A candidate's edit of their sources is
        not what its tests run (:mod:`repogate.gates.prebuilt`).
        """
        ...


BACKENDS: Mapping[str, type[Environment]] = {"uv": UvEnvironment, "image": ImageEnvironment}
"""Each backend's record class by the name a recipe gives (``[environment] backend``); uv first."""

EnvironmentRecord: TypeAlias = Annotated[
    Annotated[UvEnvironment, Tag("uv")] | Annotated[ImageEnvironment, Tag("image")],
    Discriminator(lambda value: backend_of(value)),  # defined below
]
"""The stored form of an environment, as a pydantic field's type (base state, hand-over records).

The backends' records, tagged by :func:`backend_of`, so a record stored before the backend field
existed reads as uv.
"""


_RECORD: TypeAdapter[EnvironmentRecord] = TypeAdapter(EnvironmentRecord)


def as_record(env: Environment) -> EnvironmentRecord:
    """Return ``env`` typed as its stored form, for a record's field (the same object).

    Raises:
        TypeError: ``env`` is no backend's record (a stand-in that only has the methods).
    """
    try:
        return _RECORD.validate_python(env)
    except ValidationError:
        raise TypeError(f"{type(env).__name__} is no environment backend's record") from None


def backend_of(value: object) -> str:
    """Return the backend name of a stored environment (a record, or its JSON data).

    A record without a ``backend`` key is uv's (records written before other backends existed).
    """
    if isinstance(value, Mapping):
        name = value.get("backend", "uv")
    else:
        name = getattr(value, "backend", "uv")
    return str(name)


def backend(name: str) -> type[Environment]:
    """Return the backend class named ``name``.

    Raises:
        ContractError: no backend has that name; the message lists the names there are.
    """
    try:
        return BACKENDS[name]
    except KeyError:
        raise ContractError(
            f"unknown environment backend {name!r}", f"use one of {', '.join(BACKENDS)}"
        ) from None


def build(request: BuildRequest) -> Environment:
    """Build the request's environment with the backend its recipe names (see :meth:`Environment.build`).

    Raises:
        ContractError: the recipe names no known backend.
        EnvironmentBuildError: the backend could not build it.
    """
    return backend(request.recipe.backend).build(request)
