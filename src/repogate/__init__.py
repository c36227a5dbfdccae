"""repogate: decide whether a coding agent's change became an accepted repository state transition.

The public surface is small: load a :class:`TransitionContract`, compute a :class:`CandidateState`,
collect :class:`Receipt` values from gates, and :func:`decide`.
"""

from __future__ import annotations

from repogate._version import __version__

TYPE_CHECKING = False  # typing is not imported: the console script's guard is not up yet

if TYPE_CHECKING:
    from repogate.contract import Profile, TransitionContract, load_contract
    from repogate.decision import Decision, Evidence, decide
    from repogate.receipt import Check, Receipt
    from repogate.state import CandidateState, patch_digest

_HOME = {
    "Profile": "repogate.contract",
    "TransitionContract": "repogate.contract",
    "load_contract": "repogate.contract",
    "Decision": "repogate.decision",
    "Evidence": "repogate.decision",
    "decide": "repogate.decision",
    "Check": "repogate.receipt",
    "Receipt": "repogate.receipt",
    "CandidateState": "repogate.state",
    "patch_digest": "repogate.state",
}
"""Where each public name lives: loaded on first use (PEP 562), so the console script's entry
point (:mod:`repogate._entry`) is running before the heavy modules load."""


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'repogate' has no attribute {name!r}")
    import importlib  # only once a public name is first used

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "CandidateState",
    "Check",
    "Decision",
    "Evidence",
    "Profile",
    "Receipt",
    "TransitionContract",
    "__version__",
    "decide",
    "load_contract",
    "patch_digest",
]
