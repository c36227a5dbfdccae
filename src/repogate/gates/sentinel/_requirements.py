"""Why a follow-up's tests cannot be collected: requirements the base's environment does not meet.

The sentinel runs every follow-up's tests in the environment built for the base. When a
follow-up raised a requirement (SWE-bench Lite pytest-dev__pytest-11143: the isort merge
``de161f87914e``, 454 commits after the fix, needs ``pluggy>=1.4.0``; the base's environment has
pluggy 1.3.0, so none of its 94 selected test files could be collected), the step is an
``error`` and its detail says which requirement and what is installed, so a reader sees the
environment's limit instead of guessing.

Read from the follow-up's tree without running any of its code: ``[project] dependencies`` of
``pyproject.toml`` (PEP 621) and ``[options] install_requires`` of ``setup.cfg`` (setuptools'
declarative configuration). A ``setup.py``'s requirements are code and are not read. Markers
(PEP 508) are evaluated for the environment's Python version on this machine's platform.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from packaging.markers import UndefinedComparison, UndefinedEnvironmentName, default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from repogate import git
from repogate._declared import pyproject_dependencies, setup_cfg_list


def declared(repo: Path, sha: str) -> tuple[str, ...]:
    """Return the install requirements commit ``sha`` of ``repo`` declares, as written.

    ``[project] dependencies`` of ``pyproject.toml``, then ``[options] install_requires`` of
    ``setup.cfg``; a file that is missing or cannot be parsed gives nothing (this is a diagnosis,
    never a verdict).

    Raises:
        GitError: ``sha`` is unknown (the sentinel only asks of commits it replays).
    """
    return pyproject_dependencies(git.show_text(repo, sha, "pyproject.toml")) + setup_cfg_list(
        git.show_text(repo, sha, "setup.cfg"), "install_requires"
    )


def unmet(requirements: Sequence[str], packages: Sequence[str], python: str) -> tuple[str, ...]:
    """Return each requirement the environment does not meet, with what it has.

    Args:
        requirements: PEP 508 strings (:func:`declared`); one that cannot be parsed is skipped.
        packages: the environment's ``name==version`` lines (``uv pip freeze``'s form); other
            lines (an editable ``-e``, a URL) are not versions and satisfy nothing.
        python: the environment's Python version (``3.9.18``), for markers.

    Returns:
        ``pluggy>=1.4.0,<2.0 (has pluggy 1.3.0)`` or ``tomli>=1 (not installed)`` per unmet
        requirement whose marker applies, in the order given. The project itself (an editable
        install) is never listed, since it is not a ``name==version`` line.
    """
    installed: dict[str, str] = {}
    for line in packages:
        name, sep, version = line.partition("==")
        if sep and name.strip():
            installed[canonicalize_name(name.strip())] = version.strip()
    env: dict[str, str] = {
        **{k: str(v) for k, v in default_environment().items()},
        "python_version": ".".join(python.split(".")[:2]),
        "python_full_version": python,
    }
    found: list[str] = []
    for text in requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        try:
            applies = req.marker is None or req.marker.evaluate(env)
        except (UndefinedComparison, UndefinedEnvironmentName):  # ``python_version ~= '3'``
            continue
        if not applies:
            continue
        has = installed.get(canonicalize_name(req.name))
        if has is None:
            found.append(f"{_spec(req)} (not installed)")
            continue
        try:
            ok = req.specifier.contains(Version(has), prereleases=True)
        except InvalidVersion:
            ok = False
        if not ok:
            found.append(f"{_spec(req)} (has {req.name} {has})")
    return tuple(found)


def _spec(req: Requirement) -> str:
    return f"{req.name}{req.specifier}"
