"""The report as typed data (schema_version 1): what ``repogate report --json`` prints.

Every section is computed from the store and the evidence files only (:mod:`.load`), by
:mod:`.aggregate` and :mod:`.compare`; the terminal, JSON, HTML and SWE-bench renderings read this
model and nothing else, so the numbers agree across them.
"""

from __future__ import annotations

from typing import Literal

from repogate._model import FrozenModel
from repogate.report.differs import DiffersFromReference
from repogate.report.stats import Interval, PairedDifference

ErrorKind = Literal[
    "environment build", "invalid task", "timeout", "harness crash", "other evaluator error"
]
ERROR_KINDS: tuple[ErrorKind, ...] = (
    "environment build",
    "invalid task",
    "timeout",
    "harness crash",
    "other evaluator error",
)
Verdict = Literal["widen", "keep", "insufficient evidence"]


class RunBrief(FrozenModel):
    """One run directory in brief, from its manifest and store.

    Attributes:
        path: the run directory as given.
        evaluator: the repogate version that wrote it.
        created_at: when the run was started (UTC, ISO 8601).
        python: the harness's Python version; ``platform`` its platform.
        isolation: the isolation in force for agents and for tests (kind, network off or not).
        warnings: isolation warnings the run printed.
        network: how many contracts granted the agent network.
        budgets: time budgets (seconds) and token budgets the contracts set.
        selection: the rule that selected the contracts.
        epochs: epochs per attempt.
        agents: agent count; ``contracts`` contract count.
        planned: attempts the run planned (None when its manifest predates the count).
        done: finished attempts (decided or crashed); ``running`` attempts begun, not finished.
        status: ``complete``; ``partial (in progress)`` while a run holds the folder;
            ``partial (interrupted)`` otherwise.
    """

    path: str
    evaluator: str
    created_at: str
    python: str
    platform: str
    isolation: str
    warnings: tuple[str, ...]
    network: str
    budgets: str
    selection: str
    epochs: int
    agents: int
    contracts: int
    planned: int | None
    done: int
    running: int
    status: str

    @property
    def what_ran(self) -> str:
        """``selection; 2 agents, 1 contract, 1 epoch``: counts in the singular for one."""
        counts = ((self.agents, "agent"), (self.contracts, "contract"), (self.epochs, "epoch"))
        said = ", ".join(f"{n} {noun}{'' if n == 1 else 's'}" for n, noun in counts)
        return f"{self.selection}; {said}"


class AttemptRow(FrozenModel):
    """One attempt, for the per-attempt table.

    Attributes:
        run: the run directory; ``evidence`` the attempt's folder relative to it.
        outcome: ``accepted``, ``rejected``, ``error`` (evaluator/environment), ``crashed``, or
            ``running`` (not finished).
        resolved: SWE-bench's resolved (FAIL_TO_PASS and PASS_TO_PASS passed); None when the tests
            did not decide.
        error_kind: for ``error`` and ``crashed``, the kind of fault.
        sentinel: the sentinel stage's status (``skipped`` when it did not run).
    """

    run: str
    attempt_id: str
    evidence: str
    contract: str
    agent: str
    epoch: int
    cohort: str
    outcome: str
    resolved: bool | None
    failed: tuple[str, ...]
    errored: tuple[str, ...]
    error_kind: ErrorKind | None
    sentinel: str


class Acceptance(FrozenModel):
    """Hard-gate acceptance of one agent on one cohort (``all`` for every task).

    Attributes:
        accepted: accepted attempts; ``scored`` accepted plus rejected (the interval's n).
        errors: attempts that ended in an evaluator or environment error, kept out of ``scored``.
        attempts: every finished attempt (scored + errors), the printed denominator.
        tasks: distinct tasks scored.
        interval: acceptance with its 95% interval and method.
    """

    agent: str
    cohort: str
    accepted: int
    scored: int
    errors: int
    attempts: int
    tasks: int
    interval: Interval


class PassK(FrozenModel):
    """pass@k and pass^k of one agent, averaged over tasks with at least k scored attempts."""

    agent: str
    k: int
    tasks: int
    pass_at_k: float
    pass_hat_k: float


class Stage(FrozenModel):
    """One stage of the funnel.

    Attributes:
        stage: the stage's name (see :data:`repogate.decision.STAGES`).
        passed, failed, errored: attempts with that stage status; ``skipped`` did not apply.
        own: the stage's own pass rate, passed / (passed + failed), among attempts it applied to.
        cumulative: attempts that passed (or were not subject to) this and every earlier stage,
            over every scored attempt.
    """

    stage: str
    passed: int
    failed: int
    errored: int
    skipped: int
    own: Interval
    cumulative: Interval


class Funnel(FrozenModel):
    """The stage funnel of one agent over its scored attempts."""

    agent: str
    scored: int
    stages: tuple[Stage, ...]


class Errors(FrozenModel):
    """Evaluator and environment errors of one agent, by kind, with the denominator.

    Attributes:
        attempts: every attempt of the agent, finished or not (the denominator).
        unfinished: attempts begun and not finished (a run in progress or interrupted).
        kinds: count per kind; every kind listed, zeros included.
    """

    agent: str
    attempts: int
    unfinished: int
    kinds: dict[str, int]


class Measure(FrozenModel):
    """Median and total of one soft measure over an agent's decided attempts."""

    median: float
    total: float


class Soft(FrozenModel):
    """Soft measures of one agent, beside the verdict and never folded into it (units in names)."""

    agent: str
    n: int
    measures: dict[str, Measure]


class Gap(FrozenModel):
    """An attempt resolved (SWE-bench) but not accepted, with the checks that stopped it."""

    run: str
    attempt_id: str
    contract: str
    agent: str
    epoch: int
    stopped_by: tuple[str, ...]


class ResolvedVsAccepted(FrozenModel):
    """SWE-bench's resolved beside repogate's accepted, for one agent's decided attempts."""

    agent: str
    decided: int
    resolved: int
    accepted: int
    resolved_not_accepted: int
    resolved_rate: Interval
    accepted_rate: Interval


class Paired(FrozenModel):
    """Agent ``agent`` against the baseline on the tasks both have scored attempts on."""

    agent: str
    baseline: str
    tasks: int
    comparison: PairedDifference


class Autonomy(FrozenModel):
    """Whether the rule lets ``agent``'s scope widen on one cohort, and why."""

    cohort: str
    agent: str
    baseline: str
    verdict: Verdict
    reasons: tuple[str, ...]


class GateInformation(FrozenModel):
    """Sentinel failure rate of attempts that failed vs passed one hard gate, on one cohort.

    Attributes:
        population: attempts that passed every hermetic check other than ``gate`` and whose
            sentinel ran.
        when_failed: sentinel failure rate among those that failed ``gate``.
        when_passed: sentinel failure rate among those that passed it.
        p_value: Fisher's exact test of the two rates.
        informative: both groups non-empty and p < 0.05.
        note: why not, when not informative.
    """

    cohort: str
    gate: str
    population: int
    when_failed: Interval
    when_passed: Interval
    p_value: float
    informative: bool
    note: str


class Report(FrozenModel):
    """The whole report (schema_version 1).

    Attributes:
        by: the cohort key grouped by, or None for every task together.
        baseline: the baseline agent of the paired comparison and the autonomy rule.
        partial: some run is not complete; ``partial_note`` says how many attempts are done.
        autonomy_rule: the rule, stated, that :attr:`autonomy` applies.
        informativeness_rule: how :attr:`gates` is computed and judged.
    """

    schema_version: Literal[1] = 1
    by: str | None
    baseline: str
    agents: tuple[str, ...]
    partial: bool
    partial_note: str
    runs: tuple[RunBrief, ...]
    acceptance: tuple[Acceptance, ...]
    pass_k: tuple[PassK, ...]
    funnels: tuple[Funnel, ...]
    errors: tuple[Errors, ...]
    soft: tuple[Soft, ...]
    resolved: tuple[ResolvedVsAccepted, ...]
    gaps: tuple[Gap, ...]
    differs: tuple[DiffersFromReference, ...] = ()
    paired: tuple[Paired, ...]
    autonomy_rule: str
    autonomy: tuple[Autonomy, ...]
    informativeness_rule: str
    gates: tuple[GateInformation, ...]
    attempts: tuple[AttemptRow, ...]
