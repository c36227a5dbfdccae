"""What a backend is asked to build: one record, so the build contract has one signature.

Private to :mod:`repogate.environments`; import :class:`BuildRequest` from the package.
"""

from __future__ import annotations

from pathlib import Path

from repogate._model import FrozenModel
from repogate.contract import EnvironmentRecipe
from repogate.sandbox import SandboxPolicy


class BuildRequest(FrozenModel):
    """The inputs of one environment build (:meth:`repogate.environments.Environment.build`).

    Attributes:
        recipe: the contract's ``[environment]`` (or the agent's, laid over it); its
            ``backend`` names the class that builds it.
        base_checkout: a harness-owned checkout of the base commit (install commands run there
            and may write into it; never the agent's workspace).
        cache_dir: the environment cache, shared between attempts (created when absent).
        policy: the sandbox for install commands (timeout, output cap, extra variables); its
            ``network`` is replaced by the recipe's.
        exclude_newer: an RFC 3339 bound on package uploads (the base commit's date), or None;
            part of the cache key and the digest of backends that resolve packages with uv.
    """

    recipe: EnvironmentRecipe
    base_checkout: Path
    cache_dir: Path
    policy: SandboxPolicy
    exclude_newer: str | None = None
