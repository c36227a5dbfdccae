"""The phases of one attempt, in order (:data:`PHASES`); see :mod:`repogate.pipeline` for the table.

Each phase takes the attempt's configuration and progress and returns new progress; gates are
called through :func:`repogate.pipeline.gate`, which times them, binds them to the candidate
state and stores their receipts as they finish.

Private modules by concern: ``_workspace`` (prepare, propose), ``_environment`` (gate E),
``_checks`` (gates I, V and R, and the harness's merge), ``_lifecycle`` (generated artifacts,
authority, release receipt) and ``_sentinel`` (gate S). Import the names below from
:mod:`repogate.phases` itself.
"""

from __future__ import annotations

from repogate.phases._checks import integrity, merge, requirements, verification
from repogate.phases._environment import (
    base_state_key,
    environment,
    remember_base_state,
)
from repogate.phases._lifecycle import lifecycle
from repogate.phases._sentinel import sentinel
from repogate.phases._workspace import prepare, propose
from repogate.pipeline import Phase

__all__ = [
    "PHASES",
    "base_state_key",
    "environment",
    "integrity",
    "lifecycle",
    "merge",
    "prepare",
    "propose",
    "remember_base_state",
    "requirements",
    "sentinel",
    "verification",
]

PHASES: tuple[tuple[str, Phase], ...] = (
    ("prepare", prepare),
    ("environment", environment),
    ("propose", propose),
    ("integrity", integrity),
    ("verification", verification),
    ("lifecycle", lifecycle),
    ("requirements", requirements),
    ("merge", merge),
    ("sentinel", sentinel),
)
"""The order of one attempt."""
