"""Provenance: signed verdicts (DSSE envelopes over in-toto Statements) and their verifier.

:mod:`~repogate.provenance.keys` makes and reads ed25519 keys, :mod:`~repogate.provenance.sign`
signs each decision and the run summary, :mod:`~repogate.provenance.verify` checks them.
"""

from __future__ import annotations

from repogate.provenance.keys import generate, load_public_key, load_signer
from repogate.provenance.sign import sign_attempt, sign_run
from repogate.provenance.verify import NOT_SIGNED, Problem, Verified, verify_target

__all__ = [
    "NOT_SIGNED",
    "Problem",
    "Verified",
    "generate",
    "load_public_key",
    "load_signer",
    "sign_attempt",
    "sign_run",
    "verify_target",
]
