"""The one base of repogate's records: frozen, and strict about keys."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    """A pydantic model that cannot be changed after validation and refuses unknown keys.

    Every record repogate reads or writes (contracts, receipts, decisions, agent files) derives
    from it, so a misspelt key is an error wherever it is read, never silently dropped.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
