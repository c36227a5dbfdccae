"""The model seam's implementations: endpoints, replays, budgets and the trajectory record.

:mod:`~repogate.models.openai_compat` calls any OpenAI-compatible endpoint,
:mod:`~repogate.models.replay` answers from a recorded trajectory, :mod:`~repogate.models.meter`
holds a model-driven agent's budgets and :mod:`~repogate.models.trajectory` its record. The Protocol
they implement is :class:`repogate.protocols.ChatModel`.
"""

__all__ = [
    "meter",
    "openai_compat",
    "replay",
    "trajectory",
]
