"""One attempt, end to end: the order of the phases, written once.

=============  ======================================================  ==========================
phase          reads -> writes                                         stops the attempt when
=============  ======================================================  ==========================
prepare        contract, source -> workspace at the base (no future)   base missing (user error)
environment    recipe, base -> environment; E receipt (base-state)     install fails, task invalid
propose        task view -> the agent's edits; candidate commit,       never (a crash is recorded)
               patch, digests, merge tree: the candidate state
integrity      changed paths -> I receipt                              never
verification   candidate + hidden tests -> V receipts (tests,          never
               commands, dependency policy)
lifecycle      candidate -> generated, authority, release receipts     never
requirements   criteria + receipts so far -> R receipt                 never
merge          merged tree -> merge receipt; V again when it differs   never
sentinel       merged state + real later history -> S receipt          never
decide         every receipt -> the decision (stored)                  -
=============  ======================================================  ==========================

Receipts observed before the candidate exists (E) are bound to the candidate state once it does:
the environment digest is part of the state id, so the binding is exact. A phase stops the attempt
by raising :class:`StopAttempt`; every hard check not yet observed then becomes ``error`` (the
evaluator's or environment's fault), never a failure of the agent.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from repogate import clock, git
from repogate._files import read_bytes_nofollow
from repogate.contract import TransitionContract
from repogate.decision import Decision, Evidence, SoftMetrics, decide, hard_checks
from repogate.environment import BuiltEnvironment, activate
from repogate.oracles.embedded import EmbeddedOracle
from repogate.patches import load_patch
from repogate.protocols import Agent, EvidenceSink, Proposal, TaskView
from repogate.receipt import Check, Observation, Receipt, observe
from repogate.sandbox import SandboxPolicy
from repogate.state import CandidateState, oracle_digest, patch_digest
from repogate.vocabulary import GateId


class StopAttempt(Exception):
    """Raised by a phase to stop the attempt; caught in :func:`run_attempt` only.

    Args:
        phase: the phase that stopped.
        reason: why, in one sentence.
        progress: what the phase had observed before stopping (kept as evidence).
    """

    def __init__(self, phase: str, reason: str, progress: AttemptProgress | None = None) -> None:
        super().__init__(f"{phase}: {reason}")
        self.phase = phase
        self.reason = reason
        self.progress = progress


@dataclass(frozen=True)
class AttemptConfig:
    """Everything one attempt needs, fixed before it starts.

    Attributes:
        contract: the task.
        agent: the agent under evaluation.
        agent_name: a short name (for ``{agent}`` in review-file paths).
        source: the harness's full-history repository.
        work: a scratch folder for checkouts (emptied first).
        evidence: the attempt's evidence folder in the run store.
        env_cache: the shared environment cache.
        history_cache: the sentinel's cache of real-history test results.
        store: where the receipts go as they are made: the run store, or a worker's channel
            to the head that writes them there.
        attempt_id: the attempt's id in the store.
        test_timeout_s: budget of one install or generator command, in seconds.
        isolation: the isolation untrusted code runs under, recorded in the decision.
    """

    contract: TransitionContract
    agent: Agent
    agent_name: str
    source: Path
    work: Path
    evidence: Path
    env_cache: Path
    history_cache: Path
    store: EvidenceSink
    attempt_id: str
    test_timeout_s: float = 1800.0
    isolation: str = ""


@dataclass(frozen=True)
class AttemptProgress:
    """What the phases have produced so far; each phase returns a new one."""

    started: float = field(default_factory=clock.monotonic)
    base: str = ""
    hidden: bytes = b""
    hidden_paths: tuple[str, ...] = ()
    embedded: tuple[EmbeddedOracle, ...] = ()
    env: BuiltEnvironment | None = None
    pending: tuple[Receipt, ...] = ()
    proposal: Proposal | None = None
    state: CandidateState | None = None
    changed: tuple[git.ChangedPath, ...] = ()
    patch: bytes = b""
    receipts: tuple[Receipt, ...] = ()

    @property
    def workspace_env(self) -> BuiltEnvironment:
        """The built environment (phases after ``environment`` may rely on it)."""
        assert self.env is not None
        return self.env

    @property
    def candidate(self) -> CandidateState:
        """The candidate state (phases after ``propose`` may rely on it)."""
        assert self.state is not None
        return self.state


def workspace(cfg: AttemptConfig) -> Path:
    """The agent's workspace for this attempt."""
    return cfg.work / "workspace"


def install_tree(cfg: AttemptConfig) -> Path:
    """Return the base checkout the install commands run in.

    They may leave files there, so nothing else reads it as the base.
    """
    return cfg.work / "install"


def landed_commit(cfg: AttemptConfig, state: CandidateState) -> str:
    """Return the commit that lands: the candidate, or the harness's merge of it into the target.

    The merge commit has a fixed identity and date, so asking twice gives the same commit.
    """
    if state.merge_tree is None or state.merge_tree == state.candidate_tree:
        return state.candidate_commit
    target = cfg.contract.target_commit or state.base_commit
    return git.commit_tree(
        workspace(cfg), state.merge_tree, [target, state.candidate_commit], "harness merge"
    )


def oracle_policy(cfg: AttemptConfig) -> SandboxPolicy:
    """Return the sandbox for the target repository's own code, which includes the patch.

    No network, the test budget, writes only in the tree the command runs in (never the scratch
    folder around it, where the harness builds other trees afterwards), and the harness's
    full-history repository hidden. The evidence folder is not writable: the report comes
    through a FIFO there (:mod:`repogate.oracles._channel`), which writing does not need.
    """
    return SandboxPolicy(
        network=False,
        timeout_s=cfg.contract.oracles.timeout_s,
        writable=(),
        writable_cwd=True,
        hidden=(cfg.source,),
    )


def emit(cfg: AttemptConfig, progress: AttemptProgress, receipt: Receipt) -> AttemptProgress:
    """Store ``receipt`` now (so a killed run keeps it) and add it to the progress."""
    cfg.store.add_receipt(cfg.attempt_id, receipt, progress.candidate)
    return replace(progress, receipts=(*progress.receipts, receipt))


def gate(
    cfg: AttemptConfig, progress: AttemptProgress, name: GateId, call: Callable[[], Observation]
) -> AttemptProgress:
    """Observe one gate on the candidate state and store its receipt."""
    return emit(cfg, progress, observe(name, progress.candidate.state_id, call))


def task_view(contract: TransitionContract) -> TaskView:
    """What the agent is told: the statement, stated criteria and permissions; never the oracles."""
    return TaskView(
        id=contract.id,
        statement=contract.requirement.statement,
        criteria=tuple(
            {"id": c.id, "claim": c.claim}
            for c in contract.requirement.criteria
            if c.kind == "stated"
        ),
        editable=contract.permissions.editable,
        forbidden=contract.permissions.forbidden,
        commands=contract.permissions.commands,
        time_budget_s=contract.permissions.time_budget_s,
        token_budget=contract.permissions.token_budget,
        network=contract.permissions.network,
    )


def _stopped_evidence(cfg: AttemptConfig, progress: AttemptProgress, stop: StopAttempt) -> Evidence:
    state = progress.state or CandidateState(
        base_commit=progress.base or cfg.contract.base_commit, candidate_commit="", patch_digest=""
    )
    seen = {c.name for r in (*progress.receipts, *progress.pending) for c in r.checks}
    unobserved = tuple(  # the phase only: its reason is said once, by the check that stopped it
        Check(name=n, status="error", detail=f"not observed: the attempt stopped at {stop.phase}")
        for n in hard_checks(cfg.contract.profile)
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
    )


Phase = Callable[[AttemptConfig, AttemptProgress], AttemptProgress]


def run_attempt(cfg: AttemptConfig, phases: tuple[tuple[str, Phase], ...]) -> Decision:
    """Run ``phases`` in order for one attempt and return the stored decision.

    Args:
        cfg: the attempt's configuration.
        phases: the phases in order, normally :data:`repogate.phases.PHASES`.

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


def submitted_digest(cfg: AttemptConfig, progress: AttemptProgress) -> str:
    """Return the digest of what was submitted for review.

    That is the agent's own claim when it made one, else the patch file in the attempt's evidence
    as it stands at decision time (read without following a link), so a patch rewritten after it
    was stored no longer matches the candidate's digest.
    """
    proposal = progress.proposal or Proposal()
    if proposal.claimed_patch_digest:
        return proposal.claimed_patch_digest
    try:
        stored = read_bytes_nofollow(cfg.evidence, "patch.diff")
    except OSError:  # a link or no regular file: nothing trustworthy was submitted
        return ""
    return "" if stored is None else patch_digest(stored)


def progress_decision(cfg: AttemptConfig, progress: AttemptProgress) -> Decision:
    """Decide from the receipts; the submitted digest is checked against the candidate's."""
    evidence = Evidence(
        task_id=cfg.contract.id,
        profile=cfg.contract.profile,
        state=progress.candidate,
        submitted_patch_digest=submitted_digest(cfg, progress),
        receipts=progress.receipts,
        soft=soft_metrics(progress),
        isolation=cfg.isolation,
    )
    return decide(evidence)


def soft_metrics(progress: AttemptProgress) -> SoftMetrics:
    """Collect the soft metrics of an attempt from its proposal and receipts."""
    proposal = progress.proposal or Proposal()
    details = {r.gate: r.details for r in progress.receipts}
    authority = details.get("A", {}).get("soft_metrics", {})
    changed = sum(
        1
        for line in progress.patch.split(b"\n")
        if line[:1] in (b"+", b"-") and not line.startswith((b"+++", b"---"))
    )
    return SoftMetrics(
        review_minutes=float(authority.get("review_minutes", 0.0)),
        review_rounds=int(authority.get("review_rounds", 0)),
        agent_cost_usd=proposal.usage.cost_usd,
        tokens=proposal.usage.tokens,
        wall_time_s=clock.monotonic() - progress.started,
        changed_lines=changed,
        extra_repair_effort=int(details.get("S", {}).get("extra_repair_effort", 0)),
    )


def hidden_patch(cfg: AttemptConfig) -> bytes:
    """The contract's hidden test patch bytes (empty when it has none)."""
    source = cfg.contract.oracles.hidden_tests
    return b"" if source is None else load_patch(source, cfg.contract, cfg.source)


def generator_policy(
    cfg: AttemptConfig, env: BuiltEnvironment, checkout: Path, network: bool = False
) -> SandboxPolicy:
    """Return the sandbox for generators and interpreter probes.

    The environment is active on ``checkout``; writes only in ``checkout`` when it is one of the
    attempt's trees (never the scratch folder around it; nothing for a probe run beside an
    interpreter); the full-history repository hidden.
    """
    return SandboxPolicy(
        network=network,
        timeout_s=cfg.test_timeout_s,
        env=activate(env, checkout),
        writable=(),
        writable_cwd=checkout.resolve().is_relative_to(cfg.work.resolve()),
        hidden=(cfg.source,),
    )


def agent_policy(cfg: AttemptConfig, env: BuiltEnvironment) -> SandboxPolicy:
    """The sandbox for the agent: its time budget, its network grant, the environment on PATH.

    It writes only its workspace and its output folder; the run directory (other attempts,
    scenario sources, hidden tests at the base), the full-history repository, the contract and
    the caches of real history's results are hidden. Other run directories kept on the same
    disk are not known here and stay readable: keep them out of an agent's reach.
    """
    permissions = cfg.contract.permissions
    return SandboxPolicy(
        network=permissions.network,
        timeout_s=permissions.time_budget_s,
        env=activate(env, workspace(cfg)),
        writable=(workspace(cfg), cfg.evidence / "agent"),
        hidden=(
            cfg.source,
            cfg.store.run_dir.resolve(),
            cfg.history_cache,  # real later history's test results
            cfg.env_cache.parent / "base-state",
            *cfg.contract.private_files(),
        ),
    )


def candidate_state(
    cfg: AttemptConfig, progress: AttemptProgress, candidate: str, merge_tree: str | None
) -> CandidateState:
    """Compute the candidate state's identities from the harness-made candidate commit.

    ``progress.patch`` must already hold the candidate's diff against the base.
    """
    ws = workspace(cfg)
    oracles = cfg.contract.oracles
    return CandidateState(
        base_commit=progress.base,
        candidate_commit=candidate,
        candidate_tree=git.tree_of(ws, candidate),
        merge_tree=merge_tree,
        patch_digest=patch_digest(progress.patch),
        environment_digest=progress.workspace_env.digest,
        oracle_digest=oracle_digest(
            [*oracles.fail_to_pass, *oracles.pass_to_pass], progress.hidden
        ),
        policy_digest=cfg.contract.policy_digest(),
    )
