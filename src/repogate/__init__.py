"""repogate: decide whether a coding agent's change became an accepted repository state transition.

The public surface is small: load a :class:`TransitionContract`, compute a :class:`CandidateState`,
collect :class:`Receipt` values from gates, and :func:`decide`.
"""

from repogate._version import __version__
from repogate.contract import Profile, TransitionContract, load_contract
from repogate.decision import Decision, Evidence, decide
from repogate.receipt import Check, Receipt
from repogate.state import CandidateState, patch_digest

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
