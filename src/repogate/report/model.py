"""The report as typed data (schema_version 2): what ``repogate report --json`` prints.

Every section is computed from the store and the evidence files only (:mod:`.load`), by
:mod:`.aggregate`, :mod:`.autonomy` and :mod:`.gates`; the terminal, JSON, HTML and SWE-bench
renderings read this model and nothing else, so the numbers agree across them. Every rate follows
one estimand and one population, stated in :data:`ESTIMAND`.
"""

from __future__ import annotations

from typing import Literal

from repogate._model import FrozenModel
from repogate.report.differences import PairedDifference
from repogate.report.differs import DiffersFromReference
from repogate.report.injections import InjectionPair
from repogate.report.policy import Policy
from repogate.report.stats import Interval
from repogate.vocabulary import ERROR_KINDS as _ERROR_KINDS
from repogate.vocabulary import SKIPPED_STAGES_LEGEND, ErrorKind

ERROR_KINDS: tuple[ErrorKind, ...] = tuple(_ERROR_KINDS)
"""The error kinds in the order the report's tables list them (:data:`repogate.vocabulary.ERROR_KINDS`)."""
Verdict = Literal["widen", "keep", "narrow", "insufficient evidence"]
ClauseId = Literal["a", "b", "c", "d", "e"]
ESTIMAND = (
    "every rate is over scored attempts (accepted or rejected; evaluator and environment errors "
    "kept apart and counted), as the mean over tasks of each task's rate, epochs averaged within a "
    "task; its interval is over tasks (n = tasks) and names its method, with the clustered "
    "standard error (SE) beside it"
)


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
        skip_sentinel_when_rejected: the run used ``--skip-sentinel-when-rejected`` (its
            manifest says so): gate S was not run on an attempt a hard gate had rejected.
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
    skip_sentinel_when_rejected: bool = False

    @property
    def sentinel_note(self) -> str | None:
        """What the Runs section says of ``--skip-sentinel-when-rejected``; None without it."""
        if not self.skip_sentinel_when_rejected:
            return None
        return "sentinel skipped on attempts already rejected (--skip-sentinel-when-rejected)"

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
        outcome: ``accepted``, ``rejected``, ``error`` (evaluator/environment), else the
            attempt's state: ``crashed``, ``not started``, ``running`` or ``interrupted``
            (:data:`repogate.vocabulary.ATTEMPT_STATES`, the words ``show`` uses).
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
    """pass@k (Chen et al. 2021) and pass^k (Yao et al. 2024) of one agent, averaged over tasks.

    Every k is over the same tasks: k runs up to the fewest scored attempts of any task, so
    ``tasks`` is the agent's scored tasks for every k; pass@1 is its acceptance estimate.
    """

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
        own: the stage's own pass rate, passed / (passed + failed), among attempts it applied to
            (per-task mean over the tasks it applied to).
        cumulative: the share of scored attempts that passed (or were not subject to) this and
            every earlier stage (per-task mean over the scored tasks).
    """

    stage: str
    passed: int
    failed: int
    errored: int
    skipped: int
    own: Interval
    cumulative: Interval

    @property
    def counts(self) -> str:
        """``passed/failed/errored``, then ``(N skipped)`` when the stage did not apply to N."""
        said = f"{self.passed}/{self.failed}/{self.errored}"
        return f"{said} ({self.skipped} skipped)" if self.skipped else said


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
    """SWE-bench's resolved beside repogate's accepted, over one agent's scored attempts.

    Attributes:
        scored: accepted or rejected attempts, the population of both rates (as in acceptance).
        errors: evaluator or environment errors and crashes, kept apart (never a gap).
        resolved_not_accepted: scored attempts resolved yet rejected.
        resolved_rate: resolved, per-task mean with its interval; ``accepted_rate`` likewise.
    """

    agent: str
    scored: int
    errors: int
    resolved: int
    accepted: int
    resolved_not_accepted: int
    resolved_rate: Interval
    accepted_rate: Interval


class Dropped(FrozenModel):
    """Tasks one side scored and the other did not, left out of a paired comparison, by why.

    Attributes:
        agent_errors: tasks the baseline scored where every attempt of the agent was an error.
        agent_not_run: tasks the baseline scored that the agent has no finished attempt on.
        baseline_errors: tasks the agent scored where every attempt of the baseline was an error.
        baseline_not_run: tasks the agent scored that the baseline has no finished attempt on.
    """

    agent_errors: int
    agent_not_run: int
    baseline_errors: int
    baseline_not_run: int

    @property
    def total(self) -> int:
        """Every task left out."""
        return self.agent_errors + self.agent_not_run + self.baseline_errors + self.baseline_not_run

    @property
    def text(self) -> str:
        """``3 (2 agent errors, 1 baseline not run)``, or ``0``."""
        parts = [
            f"{n} {what}"
            for n, what in (
                (self.agent_errors, "agent errors"),
                (self.agent_not_run, "agent not run"),
                (self.baseline_errors, "baseline errors"),
                (self.baseline_not_run, "baseline not run"),
            )
            if n
        ]
        return f"{self.total} ({', '.join(parts)})" if parts else "0"


class Paired(FrozenModel):
    """Agent ``agent`` against the baseline on the tasks both scored (``tasks``), and the rest.

    Attributes:
        tasks: tasks both scored; the comparison's n.
        dropped: tasks one side scored and the other did not, by why.
        comparison: the per-task mean difference (agent minus baseline), interval, sign test.
    """

    agent: str
    baseline: str
    tasks: int
    dropped: Dropped
    comparison: PairedDifference


class Clause(FrozenModel):
    """One clause of the autonomy rule as it applied to one agent and cohort.

    Attributes:
        clause: its letter in the rule (a non-inferior, b floor, c sentinel, d integrity,
            e evidence).
        holds: the clause holds (None: it could not be judged, e.g. no sentinel ran).
        says: what was measured, with the threshold, e.g. ``paired difference -2.0 pp
            [-14.1, +9.8] >= -5.0 pp: no``.
    """

    clause: ClauseId
    holds: bool | None
    says: str


class Autonomy(FrozenModel):
    """What the autonomy rule says of ``agent``'s scope on one cohort, and which clauses decided.

    Attributes:
        verdict: ``widen``, ``keep``, ``narrow`` or ``insufficient evidence``.
        decided_by: the letters of the clauses that decided the verdict.
        clauses: every clause, measured.
        beside: cost and time of both agents on the paired tasks: printed beside, never inside.
        policy: the policy that decided (version, source, digest).
    """

    cohort: str
    agent: str
    baseline: str
    verdict: Verdict
    decided_by: tuple[ClauseId, ...]
    clauses: tuple[Clause, ...]
    beside: str
    policy: str


class GateInformation(FrozenModel):
    """Sentinel failure rate when one hard gate failed vs when it passed, for one cohort and agent.

    Attributes:
        agent: the agent, or ``all agents`` for every agent pooled.
        population: attempts that passed every hermetic check other than ``gate`` and whose
            sentinel ran.
        failed_units: task-agent units with an attempt of the population that failed ``gate``.
        passed_units: units with an attempt of the population that passed it.
        when_failed: sentinel failure rate over ``failed_units`` (each its epochs' mean).
        when_passed: the same over ``passed_units``.
        difference: ``when_failed`` minus ``when_passed``, with its one-sided 95% lower bound.
        p_value: one-sided p-value that the sentinel fails more often when the gate failed (None
            when not tested); ``p_holm`` Holm's adjustment over the gates tested for this cohort
            and agent.
        test: the test used.
        informative: tested and ``p_holm`` below the policy's alpha.
        note: why not, when not informative; and how many attempts were left out as their
            sentinel was not run (``repogate run --skip-sentinel-when-rejected``), said
            whether or not informative.
        sentinel_not_run: attempts that passed every hermetic check other than ``gate`` and
            whose sentinel was not run (``--skip-sentinel-when-rejected``): in neither arm.
        sentinel_not_run_failed: of them, those that failed ``gate``; when they are all its
            failures, the question is unanswerable for this run (said in ``note``).
    """

    cohort: str
    agent: str
    gate: str
    population: int
    failed_units: int
    passed_units: int
    when_failed: Interval
    when_passed: Interval
    difference: Interval | None
    p_value: float | None
    p_holm: float | None
    test: str
    informative: bool
    note: str
    sentinel_not_run: int = 0
    sentinel_not_run_failed: int = 0

    @property
    def verdict(self) -> str:
        """The table's cell: ``yes``, ``yes: <note>`` (what was left out), or ``no: <note>``."""
        if not self.informative:
            return f"no: {self.note}"
        return f"yes: {self.note}" if self.note else "yes"


class Report(FrozenModel):
    """The whole report (schema_version 2).

    Attributes:
        by: the cohort key grouped by, or None for every task together.
        baseline: the baseline agent of the paired comparison and the autonomy rule.
        partial: some run is not complete; ``partial_note`` says how many attempts are done.
        profile_note: which profiles' attempts were decided under different profile versions
            (different check lists), with their counts; "" when none was.
        estimand: the population and estimand of every rate (:data:`ESTIMAND`).
        policy: the decision policy in force; ``policy_line`` names it (version, source, digest)
            and its thresholds.
        autonomy_rule: the rule, stated, that :attr:`autonomy` applies.
        informativeness_rule: how :attr:`gates` is computed and judged.
    """

    schema_version: Literal[2] = 2
    by: str | None
    baseline: str
    agents: tuple[str, ...]
    partial: bool
    partial_note: str
    profile_note: str = ""
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
    estimand: str
    policy: Policy
    policy_line: str
    autonomy_rule: str
    autonomy: tuple[Autonomy, ...]
    informativeness_rule: str
    gates: tuple[GateInformation, ...]
    attempts: tuple[AttemptRow, ...]
    injections: tuple[InjectionPair, ...] = ()
    """Acceptance with and without each injection, paired by task (:mod:`.injections`)."""

    @property
    def funnel_legend(self) -> str | None:
        """What ``(N skipped)`` in the funnel means, when a stage was skipped; else None."""
        skipped = any(stage.skipped for funnel in self.funnels for stage in funnel.stages)
        return SKIPPED_STAGES_LEGEND if skipped else None
