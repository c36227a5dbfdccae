"""One attempt, end to end: the order of the phases, written once.

===============  ======================================================  ==========================
phase            reads -> writes                                         stops the attempt when
===============  ======================================================  ==========================
prepare          contract, source -> workspace at the base (no future)   base missing (user error)
environment      recipe, base -> environment; E receipt (base-state)     install fails, task invalid
propose          task view -> the agent's edits; candidate commit,       never (a crash is recorded)
                 patch, digests, merge tree: the candidate state
reconstruction   the agent's recipe -> E-reconstruction receipt (only    never
                 with supplied_by = "agent"): built, imports, collects,
                 reproduces
integrity        changed paths -> I receipt                              never
verification     candidate + hidden tests -> V receipts (tests,          never
                 commands, dependency policy)
differential     changed functions, candidate and reference trees ->    never
                 V-differential receipt (behaviour_matches_reference)
lifecycle        candidate -> generated, authority, release receipts     never
injection        derivation + receipts so far -> V-injection receipt     never
requirements     criteria + receipts so far -> R receipt                 never
merge            merged tree -> merge receipt; V again when it differs   never
sentinel         merged state + real later history -> S receipt          never
decide           every receipt -> the decision (stored)                  -
===============  ======================================================  ==========================

Receipts observed before the candidate exists (E) are bound to the candidate state once it does:
the environment digest is part of the state id, so the binding is exact. A phase stops the attempt
by raising :class:`StopAttempt`; every hard check not yet observed then becomes ``error`` (the
evaluator's or environment's fault), never a failure of the agent.
"""

from __future__ import annotations

import shutil

from repogate import clock
from repogate.attempt import (
    AttemptConfig,
    AttemptProgress,
    Phase,
    StopAttempt,
    also_hard,
    assurance,
    evidence_so_far,
)
from repogate.decision import Decision, Evidence, SoftMetrics, decide, hard_checks
from repogate.phases import (
    differential,
    environment,
    injection,
    integrity,
    lifecycle,
    merge,
    prepare,
    propose,
    reconstruction,
    requirements,
    sentinel,
    verification,
)
from repogate.receipt import Check, Observation, observe
from repogate.state import CandidateState
from repogate.vocabulary import PhaseName

PHASES: tuple[tuple[PhaseName, Phase], ...] = (
    ("prepare", prepare),
    ("environment", environment),
    ("propose", propose),
    ("reconstruction", reconstruction),
    ("integrity", integrity),
    ("verification", verification),
    ("differential", differential),
    ("lifecycle", lifecycle),
    ("injection", injection),
    ("requirements", requirements),
    ("merge", merge),
    ("sentinel", sentinel),
)
"""The order of one attempt (the table above); :func:`run_attempt` runs it."""


def run_attempt(
    cfg: AttemptConfig, phases: tuple[tuple[PhaseName, Phase], ...] = PHASES
) -> Decision:
    """Run ``phases`` in order for one attempt and return the stored decision.

    Args:
        cfg: the attempt's configuration.
        phases: the phases in order, :data:`PHASES` unless a test runs fewer.

    Returns:
        The decision, also written to the store. A :class:`StopAttempt` ends the attempt with the
        unobserved checks errored; any other exception propagates to the runner, which records
        the attempt as crashed and goes on.
    """
    if cfg.work.exists():
        shutil.rmtree(cfg.work)
    cfg.work.mkdir(parents=True)
    progress = AttemptProgress()
    try:
        for _name, phase in phases:
            progress = phase(cfg, progress)
    except StopAttempt as stop:
        progress = stop.progress or progress
        evidence = _stopped_evidence(cfg, progress, stop)
        for receipt in evidence.receipts[len(progress.receipts) :]:
            cfg.store.add_receipt(cfg.attempt_id, receipt, evidence.state)
        decision = decide(evidence)
        cfg.store.finish_attempt(cfg.attempt_id, decision)
        return decision
    decision = progress_decision(cfg, progress)
    cfg.store.finish_attempt(cfg.attempt_id, decision)
    return decision


def progress_decision(cfg: AttemptConfig, progress: AttemptProgress) -> Decision:
    """Decide from the receipts; the submitted digest is checked against the candidate's."""
    return decide(evidence_so_far(cfg, progress))


def _stopped_evidence(cfg: AttemptConfig, progress: AttemptProgress, stop: StopAttempt) -> Evidence:
    state = progress.state or CandidateState(
        base_commit=progress.base or cfg.contract.base_commit, candidate_commit="", patch_digest=""
    )
    seen = {c.name for r in (*progress.receipts, *progress.pending) for c in r.checks}
    unobserved = tuple(  # the phase only: its reason is said once, by the check that stopped it
        Check.error(
            n, f"not observed: the attempt stopped at {stop.phase}", "other evaluator error"
        )
        for n in hard_checks(cfg.contract.profile, also_hard(cfg))
        if n not in seen
    )
    stop_receipt = observe(
        "stop",
        state.state_id,
        lambda: Observation(
            checks=unobserved, details={"phase": stop.phase, "reason": stop.reason}
        ),
    )
    receipts = (
        tuple(r.model_copy(update={"state_id": state.state_id}) for r in progress.pending)
        + progress.receipts
        + (stop_receipt,)
    )
    return Evidence(
        task_id=cfg.contract.id,
        profile=cfg.contract.profile,
        state=state,
        submitted_patch_digest=state.patch_digest,
        receipts=receipts,
        soft=SoftMetrics(wall_time_s=clock.monotonic() - progress.started),
        stopped_at=stop.phase,
        isolation=cfg.isolation,
        assurance=assurance(cfg),
        also_hard=also_hard(cfg),
    )
