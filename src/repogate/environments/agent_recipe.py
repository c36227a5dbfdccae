"""The recipe an agent leaves when it supplies the environment (``supplied_by = "agent"``).

With ``[environment] supplied_by = "agent"`` the agent gets the repository without a prepared
environment and must leave ``environment.toml`` (:data:`AGENT_RECIPE_FILE`) in its output folder
(``$REPOGATE_OUTPUT``)::

    python = "3.11"                       # the interpreter version (required; a version, no path)
    install = ["uv pip install -e .", "uv pip install pytest==8.3.3"]
    lock_inputs = ["requirements.txt"]    # optional: files whose content keys the build cache

Only these three keys are the agent's. The rest of the recipe stays the contract's: its
``backend`` (and image), ``network`` (an agent cannot grant its installs the network),
``timezone``, ``locale``, ``resolve_as_of`` and ``services``
(:func:`agent_environment_recipe`). Gate E builds the result through
:func:`repogate.environments.build` in a clean harness-owned checkout of the base and grades it
(:mod:`repogate.gates.reconstruction`); every test the verdict reads still runs in the
evaluator's environment built from the contract's own recipe.
"""

from __future__ import annotations

import tomllib
from pathlib import Path, PurePosixPath

import tomli_w
from pydantic import Field, ValidationError, field_validator

from repogate._files import PlantedLinkError, read_bytes_nofollow
from repogate._model import FrozenModel
from repogate._problems import every_problem
from repogate.contract import EnvironmentRecipe

__all__ = [
    "AGENT_RECIPE_FILE",
    "AgentRecipe",
    "AgentRecipeError",
    "agent_environment_recipe",
    "read_agent_recipe",
    "recipe_text",
]

AGENT_RECIPE_FILE = "environment.toml"
"""The recipe's file name in the agent's output folder."""

RECIPE_CAP_BYTES = 64 * 1024
"""Bytes read at most of the recipe file; a larger one is refused."""


class AgentRecipeError(ValueError):
    """The agent left no usable recipe; the message is one line (what, and where)."""


class AgentRecipe(FrozenModel):
    """``environment.toml`` as the agent writes it (unknown keys refused).

    Attributes:
        python: the interpreter version (``3.11``, ``3.12.4``): a version only, never a path
            (the harness queries the interpreter it names outside the sandbox).
        install: install commands run at the base, in order, as the contract's ``install``.
        lock_inputs: repository files whose content keys the build cache (relative, no ``..``).
    """

    python: str = Field(pattern=r"^[0-9]{1,2}(\.[0-9]{1,3}){0,2}$")
    install: tuple[str, ...] = Field(default=(), max_length=100)
    lock_inputs: tuple[str, ...] = Field(default=(), max_length=100)

    @field_validator("lock_inputs")
    @classmethod
    def _inside_the_checkout(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        for value in values:
            if (
                not value
                or PurePosixPath(value).is_absolute()
                or ".." in PurePosixPath(value).parts
            ):
                raise ValueError(f"{value!r} is not a path inside the repository")
        return values


def read_agent_recipe(output: Path) -> AgentRecipe:
    """Read the agent's ``environment.toml`` from ``output`` without following a link.

    Raises:
        AgentRecipeError: the file is absent, a link, unreadable, too large, not TOML, or does
            not fit :class:`AgentRecipe`; the message says which, in one line.
    """
    name = AGENT_RECIPE_FILE
    try:
        data = read_bytes_nofollow(output, name, RECIPE_CAP_BYTES)
    except PlantedLinkError:
        raise AgentRecipeError(f"{name} is a symbolic link (not followed)") from None
    except OSError as exc:
        raise AgentRecipeError(
            f"{name} cannot be read ({exc.strerror or type(exc).__name__})"
        ) from None
    if data is None:
        raise AgentRecipeError(f"no {name} in the agent's output folder ($REPOGATE_OUTPUT)")
    try:
        value = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AgentRecipeError(f"{name} is not TOML: {str(exc).splitlines()[0]}") from None
    try:
        return AgentRecipe.model_validate(value)
    except ValidationError as exc:
        raise AgentRecipeError(f"{name}: {every_problem(exc, AgentRecipe)}") from None


def agent_environment_recipe(contract: EnvironmentRecipe, given: AgentRecipe) -> EnvironmentRecipe:
    """Return the contract's recipe with the agent's interpreter, installs and lock inputs.

    Everything else (backend, image, network, timezone, locale, resolution bound, services)
    stays the contract's; ``supplied_by`` too, so the result is never mistaken for the
    evaluator's own.
    """
    return contract.model_copy(
        update={
            "python": given.python,
            "install": given.install,
            "lock_inputs": given.lock_inputs,
        }
    )


def recipe_text(recipe: EnvironmentRecipe) -> str:
    """Return ``recipe``'s interpreter, installs and lock inputs as ``environment.toml`` text.

    What the ``gold`` agent leaves for a task whose agent supplies the environment: the
    contract's own recipe, the reference reconstruction.
    """
    given = AgentRecipe(
        python=recipe.python, install=recipe.install, lock_inputs=recipe.lock_inputs
    )
    return tomli_w.dumps(given.model_dump(mode="json"))
