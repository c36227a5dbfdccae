"""The phases of one attempt; :mod:`repogate.pipeline` holds their order (``PHASES``) and table.

Each phase takes the attempt's configuration and progress and returns new progress; gates are
called through :func:`repogate.attempt.gate`, which times them, binds them to the candidate
state and stores their receipts as they finish.

Private modules by concern: ``_workspace`` (prepare, propose), ``_environment`` (gate E), ``_reconstruction`` (gate E on the
environment the agent supplied),
``_checks`` (gates I, V and R, and the harness's merge), ``_differential`` (the differential
oracle, ``V-differential``), ``_lifecycle`` (generated artifacts, authority, release receipt),
``_injection`` (an injected task's findings), ``_regression`` (gate V's regression step),
``_sentinel`` (gate S)
and ``_shared`` (the attempt's folders, sandboxes and candidate identities). Import the names below from
:mod:`repogate.phases` itself: the phases, and the base-state cache task validation shares
(``base_state_key``, ``probe_files``, ``remember_base_state``).
"""

from __future__ import annotations

from repogate.phases._checks import integrity, merge, requirements, verification
from repogate.phases._differential import differential
from repogate.phases._environment import (
    base_state_key,
    environment,
    probe_files,
    remember_base_state,
)
from repogate.phases._injection import injection
from repogate.phases._lifecycle import lifecycle
from repogate.phases._reconstruction import reconstruction_phase as reconstruction
from repogate.phases._sentinel import sentinel
from repogate.phases._workspace import prepare, propose

__all__ = [
    "base_state_key",
    "differential",
    "environment",
    "injection",
    "integrity",
    "lifecycle",
    "merge",
    "prepare",
    "probe_files",
    "propose",
    "reconstruction",
    "remember_base_state",
    "requirements",
    "sentinel",
    "verification",
]
