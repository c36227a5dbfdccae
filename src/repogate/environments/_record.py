"""What every environment backend's record shares: the toolchain it was made with, its conditions.

Private to :mod:`repogate.environments`; import these names from the package.
"""

from __future__ import annotations

from repogate._model import FrozenModel


class Toolchain(FrozenModel):
    """The tools that made an environment.

    Attributes:
        python: the interpreter's full version, e.g. ``3.11.7``.
        implementation: e.g. ``CPython``.
        platform: the interpreter's platform tag, e.g. ``linux-x86_64``.
        uv: ``uv --version`` as printed, e.g. ``uv 0.4.30`` (the uv that installed the packages;
            a backend that used none records what made its package set instead).
    """

    python: str
    implementation: str
    platform: str
    uv: str


def conditions_env(timezone: str, locale: str) -> dict[str, str]:
    """Return ``TZ``, ``LANG`` and ``LC_ALL`` for a timezone and a locale.

    Every backend gives these to every command run in its environment (the recipe's
    ``timezone`` and ``locale``, never the caller's).
    """
    return {"TZ": timezone, "LANG": locale, "LC_ALL": locale}
