"""The injection phase: an injected task's findings (:mod:`repogate.gates.injection`)."""

from __future__ import annotations

from repogate.attempt import AttemptConfig, AttemptProgress, gate
from repogate.gates.injection import injection_findings


def injection(cfg: AttemptConfig, progress: AttemptProgress) -> AttemptProgress:
    """Receipt ``V-injection`` for a contract ``tasks vary --inject`` derived; else nothing."""
    derivation = cfg.contract.derivation
    if derivation is None or derivation.kind == "ablate":
        return progress
    return gate(
        cfg,
        progress,
        "V-injection",
        lambda: injection_findings(derivation, progress.changed, progress.receipts),
    )
