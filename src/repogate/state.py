"""The identity of a candidate state and the digests that make it up.

A candidate state is S1 = T(S0, patch). Its **state id** is sha256 over every identity that a piece of
evidence must share to count for it: base commit, candidate commit and tree, merge-result tree (when
the harness merged), patch digest, environment digest, oracle-suite digest and policy digest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from repogate._model import FrozenModel


def sha256_hex(data: bytes) -> str:
    """Return the lowercase hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def patch_digest(diff: bytes) -> str:
    """Return the patch digest: sha256 of the exact bytes of ``git diff --binary --full-index``.

    Not ``git patch-id --stable``: that id ignores whitespace, so two Python programs that differ
    only in indentation would share it.

    Args:
        diff: the diff bytes exactly as git printed them (no decoding, no normalising).
    """
    return sha256_hex(diff)


def oracle_digest(test_ids: Iterable[str], hidden_patch: bytes) -> str:
    """Return the oracle-suite digest: sha256 over the sorted test ids and the hidden test patch."""
    payload = json.dumps(sorted(set(test_ids))).encode() + b"\0" + hidden_patch
    return sha256_hex(payload)


class CandidateState(FrozenModel):
    """Every identity that binds evidence to one candidate state.

    Attributes:
        base_commit: the authorised base commit S0 (40 hex digits in a real run).
        candidate_commit: the commit the harness made from the agent's workspace.
        candidate_tree: the tree id of ``candidate_commit``.
        merge_tree: the tree the harness's merge produced, once merged (None before).
        patch_digest: see :func:`patch_digest`.
        environment_digest: see :mod:`repogate.environments`.
        oracle_digest: see :func:`oracle_digest`.
        policy_digest: see :meth:`repogate.contract.TransitionContract.policy_digest`.
    """

    base_commit: str
    candidate_commit: str
    candidate_tree: str = ""
    merge_tree: str | None = None
    patch_digest: str
    environment_digest: str = ""
    oracle_digest: str = ""
    policy_digest: str = ""

    @property
    def state_id(self) -> str:
        """Return sha256 (hex) over the canonical JSON of every identity above."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return sha256_hex(canonical.encode())
