"""What one attempt is given and what its phases have produced, and how a phase stores a receipt.

:class:`AttemptConfig` is fixed before the attempt starts; :class:`AttemptProgress` is the typed
data the phases hand each other (each phase returns a new one). A later phase reads an earlier
one's results from these fields, never from a receipt's ``details``, which are the human and JSON
record only. :func:`evidence_so_far` is what a decision reads of them, at the end of the attempt
or (gate S's ``--skip-sentinel-when-rejected``) before a phase. The order of the phases and :func:`repogate.pipeline.run_attempt` are in
:mod:`repogate.pipeline`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from repogate import clock, git
from repogate._files import read_bytes_nofollow
from repogate.contract import TransitionContract
from repogate.decision import Evidence, SoftMetrics
from repogate.environments import Environment
from repogate.oracles.embedded import EmbeddedOracle
from repogate.oracles.graded_reads import TracedReads
from repogate.oracles.junit import TestOutcome
from repogate.protocols import Agent, EvidenceSink, Proposal
from repogate.receipt import Observation, Receipt, Seen, Status, observed
from repogate.state import CandidateState, patch_digest
from repogate.vocabulary import RUNNER_UNDER_TEST_ASSURANCE, CheckName, GateId, PhaseName


class StopAttempt(Exception):
    """Raised by a phase to stop the attempt; caught in :func:`repogate.pipeline.run_attempt` only.

    Args:
        phase: the phase that stopped.
        reason: why, in one sentence.
        progress: what the phase had observed before stopping (kept as evidence).
    """

    def __init__(
        self, phase: PhaseName, reason: str, progress: AttemptProgress | None = None
    ) -> None:
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
        git_cache: copies of base histories (:func:`repogate.git.cached_history`).
        store: where the receipts go as they are made: the run store, or a worker's channel
            to the head that writes them there.
        attempt_id: the attempt's id in the store.
        test_timeout_s: budget of one install or generator command, in seconds.
        isolation: the isolation untrusted code runs under, recorded in the decision.
        skip_sentinel_when_rejected: ``repogate run --skip-sentinel-when-rejected``: gate S is
            not run when a hard check has already failed (its check is then ``skipped``).
    """

    contract: TransitionContract
    agent: Agent
    agent_name: str
    source: Path
    work: Path
    evidence: Path
    env_cache: Path
    history_cache: Path
    git_cache: Path
    store: EvidenceSink
    attempt_id: str
    test_timeout_s: float = 1800.0
    isolation: str = ""
    skip_sentinel_when_rejected: bool = False


@dataclass(frozen=True)
class AttemptProgress:
    """What the phases have produced so far; each phase returns a new one.

    Attributes:
        started: monotonic time the attempt started, in seconds.
        base: the base commit's full SHA (prepare).
        hidden: the hidden test patch's bytes (prepare).
        hidden_paths: the paths the hidden test patch touches (prepare).
        embedded: graded text inside editable files, the hidden tests' version (prepare).
        env: the environment built at the base (gate E).
        base_flaky: tests whose outcome flipped during the base-state check (gate E): left out
            of every later grading.
        base_xfailed: PASS_TO_PASS tests that XFAILed at the base (gate E): an XFAIL on the
            candidate leaves them as they were.
        base_xpassed: PASS_TO_PASS tests ``xpassed`` at the base (gate E): the same outcome on
            the candidate leaves them as they were.
        graded_reads: what the graded tests and the product code read from the repository
            (gate E's trace); gate I refuses edits of what only the graded tests read.
        pending: receipts observed before the candidate existed (E), bound once it does.
        proposal: what the agent returned (propose).
        state: the candidate state (propose).
        changed: the paths the candidate changes against the base (propose).
        patch: the candidate's diff against the base (propose).
        outcomes: each graded test's outcome in the candidate's last trustworthy run (gate V).
        command_statuses: each extra oracle command's status on the candidate, by name
            (``V-commands``).
        review_minutes: minutes reviewers spent, a soft metric (gate A).
        review_rounds: distinct patch versions reviewed, a soft metric (gate A).
        extra_repair_effort: lines of the real follow-ups that conflict semantically with the
            candidate, a soft metric (gate S).
        receipts: the receipts stored so far, in order.
    """

    started: float = field(default_factory=clock.monotonic)
    base: str = ""
    hidden: bytes = b""
    hidden_paths: tuple[str, ...] = ()
    embedded: tuple[EmbeddedOracle, ...] = ()
    env: Environment | None = None
    base_flaky: frozenset[str] = frozenset()
    base_xfailed: frozenset[str] = frozenset()
    base_xpassed: frozenset[str] = frozenset()
    graded_reads: TracedReads | None = None
    pending: tuple[Receipt, ...] = ()
    proposal: Proposal | None = None
    state: CandidateState | None = None
    changed: tuple[git.ChangedPath, ...] = ()
    patch: bytes = b""
    outcomes: Mapping[str, TestOutcome] = field(default_factory=dict)
    command_statuses: Mapping[str, Status] = field(default_factory=dict)
    review_minutes: float = 0.0
    review_rounds: int = 0
    extra_repair_effort: int = 0
    receipts: tuple[Receipt, ...] = ()

    @property
    def workspace_env(self) -> Environment:
        """The built environment (phases after ``environment`` may rely on it)."""
        assert self.env is not None
        return self.env

    @property
    def candidate(self) -> CandidateState:
        """The candidate state (phases after ``propose`` may rely on it)."""
        assert self.state is not None
        return self.state


Phase = Callable[[AttemptConfig, AttemptProgress], AttemptProgress]
"""One phase: the attempt's configuration and progress in, new progress out."""


def emit(cfg: AttemptConfig, progress: AttemptProgress, receipt: Receipt) -> AttemptProgress:
    """Store ``receipt`` now (so a killed run keeps it) and add it to the progress."""
    cfg.store.add_receipt(cfg.attempt_id, receipt, progress.candidate)
    return replace(progress, receipts=(*progress.receipts, receipt))


def gate_seen(
    cfg: AttemptConfig, progress: AttemptProgress, name: GateId, call: Callable[[], Seen]
) -> tuple[AttemptProgress, Seen | None]:
    """Observe one gate on the candidate state, store its receipt, and return what it saw.

    Returns:
        The progress with the receipt added, and the gate's typed observation (None when the
        gate crashed), from which the phase takes the fields later phases read.
    """
    receipt, seen = observed(name, progress.candidate.state_id, call)
    return emit(cfg, progress, receipt), seen


def gate(
    cfg: AttemptConfig, progress: AttemptProgress, name: GateId, call: Callable[[], Observation]
) -> AttemptProgress:
    """Observe one gate on the candidate state and store its receipt."""
    return gate_seen(cfg, progress, name, call)[0]


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


def evidence_so_far(cfg: AttemptConfig, progress: AttemptProgress) -> Evidence:
    """What a decision reads of the attempt as it stands.

    The candidate state, the submitted digest (:func:`submitted_digest`), the receipts stored so
    far, the soft metrics, the isolation, the assurance and the advisory checks made hard. Phases
    after ``propose`` may call it (it needs the candidate state).
    """
    return Evidence(
        task_id=cfg.contract.id,
        profile=cfg.contract.profile,
        state=progress.candidate,
        submitted_patch_digest=submitted_digest(cfg, progress),
        receipts=progress.receipts,
        soft=soft_metrics(progress),
        isolation=cfg.isolation,
        assurance=assurance(cfg),
        also_hard=also_hard(cfg),
    )


def assurance(cfg: AttemptConfig) -> str:
    """The weaker assurance the contract's verdicts carry (the runner under test), or ``""``."""
    return RUNNER_UNDER_TEST_ASSURANCE if cfg.contract.oracles.runner_under_test else ""


def also_hard(cfg: AttemptConfig) -> tuple[CheckName, ...]:
    """The advisory checks the contract makes hard (``oracles.differential = "hard"``)."""
    return ("behaviour_matches_reference",) if cfg.contract.oracles.differential == "hard" else ()


def soft_metrics(progress: AttemptProgress) -> SoftMetrics:
    """Collect the soft metrics of an attempt from its proposal and receipts."""
    proposal = progress.proposal or Proposal()
    changed = sum(
        1
        for line in progress.patch.split(b"\n")
        if line[:1] in (b"+", b"-") and not line.startswith((b"+++", b"---"))
    )
    return SoftMetrics(
        review_minutes=progress.review_minutes,
        review_rounds=progress.review_rounds,
        agent_cost_usd=proposal.usage.cost_usd,
        tokens=proposal.usage.tokens,
        wall_time_s=clock.monotonic() - progress.started,
        changed_lines=changed,
        extra_repair_effort=progress.extra_repair_effort,
    )
