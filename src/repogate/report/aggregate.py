"""Aggregate attempts into the report: acceptance by agent and cohort, funnel, errors, soft measures.

Counting rules, stated once:

- What one attempt counts as (scored, an error of some kind, unfinished; resolved or not) is
  :mod:`.classify`'s; every count prints its denominator.
- One population and one estimand for every rate (:data:`repogate.report.model.ESTIMAND`):
  scored attempts, the mean over tasks of per-task rates, with :func:`.stats.over_tasks`'s
  interval; acceptance, resolved, pass@1, the funnel and the paired difference agree on it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from repogate._counted import counted
from repogate.decision import STAGES, SoftMetrics
from repogate.errors import UserInputError
from repogate.report import autonomy, gates
from repogate.report.classify import Fact, counts, fact, per_task
from repogate.report.differs import differs_rows
from repogate.report.injections import injection_pairs
from repogate.report.load import Run, check_cohort_key
from repogate.report.model import (
    ERROR_KINDS,
    ESTIMAND,
    Acceptance,
    AttemptRow,
    Errors,
    Funnel,
    Gap,
    Measure,
    PassK,
    Report,
    ResolvedVsAccepted,
    RunBrief,
    Soft,
    Stage,
)
from repogate.report.policy import Policy, describe
from repogate.report.stats import Interval, median, over_tasks, pass_at_k, pass_hat_k
from repogate.store import isolation_summary
from repogate.vocabulary import RECONSTRUCTION_FUNNEL, UNFINISHED


def _by_agent(facts: Iterable[Fact]) -> dict[str, list[Fact]]:
    grouped: dict[str, list[Fact]] = defaultdict(list)
    for f in facts:
        grouped[f.attempt.agent].append(f)
    return grouped


def acceptance_row(agent: str, cohort: str, facts: Sequence[Fact]) -> Acceptance:
    """Acceptance of ``agent`` over ``facts`` (all of one cohort), with its interval."""
    tasks = per_task(facts)
    finished = sum(f.finished for f in facts)
    accepted = sum(s for s, _ in tasks.values())
    scored = sum(t for _, t in tasks.values())
    return Acceptance(
        agent=agent,
        cohort=cohort,
        accepted=accepted,
        scored=scored,
        errors=finished - scored,
        attempts=finished,
        tasks=len(tasks),
        interval=over_tasks(list(tasks.values())),
    )


def _pass_k(agent: str, facts: Sequence[Fact]) -> list[PassK]:
    """pass@k and pass^k for k up to the fewest scored attempts of any task: one task set."""
    tasks = per_task(facts)
    fewest = min((n for _, n in tasks.values()), default=0)
    eligible = [(n, c) for c, n in tasks.values()]
    rows = []
    for k in range(1, fewest + 1):
        rows.append(
            PassK(
                agent=agent,
                k=k,
                tasks=len(eligible),
                pass_at_k=sum(pass_at_k(n, c, k) for n, c in eligible) / len(eligible),
                pass_hat_k=sum(pass_hat_k(n, c, k) for n, c in eligible) / len(eligible),
            )
        )
    return rows


def _share(scored: Sequence[Fact], hit: set[int], among: set[int]) -> Interval:
    """Per-task mean of the share of ``among`` (attempt ids) that ``hit``, over tasks it covers."""
    found = counts(scored, lambda f: id(f) in hit, lambda f: id(f) in among)
    return over_tasks(list(found.values()))


def funnel_stages(facts: Sequence[Fact]) -> tuple[str, ...]:
    """The funnel's rows, in order: :data:`~repogate.decision.STAGES` and maybe more.

    The reconstruction's stages (:data:`~repogate.vocabulary.RECONSTRUCTION_FUNNEL`) come
    before ``environment reconstructed`` when any of ``facts`` is an attempt whose agent
    supplied the environment.
    """
    names: list[str] = list(STAGES)
    extra = [n for n in RECONSTRUCTION_FUNNEL.values() if any(n in f.stages for f in facts)]
    if extra:
        at = names.index("environment reconstructed")
        names[at:at] = list(RECONSTRUCTION_FUNNEL.values())
    return tuple(names)


def _funnel(agent: str, facts: Sequence[Fact]) -> Funnel:
    """Stage counts over scored attempts; rates as per-task means (the report's estimand)."""
    scored = [f for f in facts if f.scored]
    everyone = set(map(id, scored))
    alive = set(everyone)
    stages = []
    for name in funnel_stages(scored):
        status = {id(f): f.stages.get(name, "skipped") for f in scored}
        alive = {k for k in alive if status[k] in ("passed", "skipped")}
        passed = {k for k, s in status.items() if s == "passed"}
        failed = {k for k, s in status.items() if s == "failed"}
        statuses = list(status.values())
        stages.append(
            Stage(
                stage=name,
                passed=len(passed),
                failed=len(failed),
                errored=statuses.count("error"),
                skipped=statuses.count("skipped"),
                own=_share(scored, passed, passed | failed),
                cumulative=_share(scored, alive, everyone),
            )
        )
    return Funnel(agent=agent, scored=len(scored), stages=tuple(stages))


def _errors(agent: str, facts: Sequence[Fact]) -> Errors:
    kinds = dict.fromkeys(ERROR_KINDS, 0)
    for f in facts:
        if f.error_kind is not None:
            kinds[f.error_kind] += 1
    unfinished = sum(not f.finished for f in facts)
    return Errors(agent=agent, attempts=len(facts), unfinished=unfinished, kinds=kinds)


def _soft(agent: str, facts: Sequence[Fact]) -> Soft:
    names = tuple(SoftMetrics.model_fields)
    rows = [
        [float(getattr(f.attempt.decision.soft, n)) for n in names]
        for f in facts
        if f.attempt.decision is not None
    ]
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    measures = {
        name: Measure(median=median(values), total=float(sum(values)))
        for name, values in zip(names, columns, strict=True)
    }
    return Soft(agent=agent, n=len(rows), measures=measures)


def _resolved(agent: str, facts: Sequence[Fact]) -> tuple[ResolvedVsAccepted, list[Gap]]:
    """Resolved beside accepted over the scored attempts; an error is never a gap."""
    scored = [f for f in facts if f.scored]
    gaps = []
    for f in scored:
        if f.resolved is True and not f.accepted:
            decision, attempt = f.attempt.decision, f.attempt
            assert decision is not None
            gaps.append(
                Gap(
                    run=str(attempt.run),
                    attempt_id=attempt.attempt_id,
                    contract=attempt.contract,
                    agent=agent,
                    epoch=attempt.epoch,
                    stopped_by=(*decision.failed, *decision.errored),
                )
            )
    row = ResolvedVsAccepted(
        agent=agent,
        scored=len(scored),
        errors=sum(f.outcome in ("error", "crashed") for f in facts),
        resolved=sum(f.resolved is True for f in scored),
        accepted=sum(f.accepted for f in scored),
        resolved_not_accepted=len(gaps),
        resolved_rate=over_tasks(list(counts(scored, lambda f: f.resolved is True, _all).values())),
        accepted_rate=over_tasks(list(per_task(scored).values())),
    )
    return row, gaps


def _all(f: Fact) -> bool:
    return True


def _attempt_row(f: Fact) -> AttemptRow:
    """One row of the per-attempt table; built without re-validation (every field is typed)."""
    attempt, decision = f.attempt, f.attempt.decision
    return AttemptRow.model_construct(
        run=str(attempt.run),
        attempt_id=attempt.attempt_id,
        evidence=attempt.evidence,
        contract=attempt.contract,
        agent=attempt.agent,
        epoch=attempt.epoch,
        cohort=f.cohort,
        outcome=f.outcome,
        resolved=f.resolved,
        failed=decision.failed if decision else (),
        errored=decision.errored if decision else (),
        error_kind=f.error_kind,
        sentinel=f.sentinel,
    )


def run_brief(run: Run) -> RunBrief:
    """The run's manifest in brief, with how many attempts are done."""
    m = run.manifest
    contracts = m.contracts if m is not None else ()
    isolation = isolation_summary(m)
    times = sorted({c.time_budget_s for c in contracts if c.time_budget_s})
    tokens = sorted({c.token_budget for c in contracts if c.token_budget})
    budgets = (
        f"time {'/'.join(f'{t:g}' for t in times) or 'none'} s; "
        f"tokens {'/'.join(map(str, tokens)) or 'unlimited'}"
    )
    granted = sum(c.agent_network for c in contracts)
    running = sum(a.status in UNFINISHED for a in run.attempts)
    status = "complete"
    if not run.complete:
        status = "partial (in progress)" if run.writing else "partial (interrupted)"
    return RunBrief(
        path=str(run.path),
        evaluator=m.evaluator if m else "unknown",
        created_at=m.created_at.isoformat() if m else "unknown",
        python=m.python if m else "unknown",
        platform=m.platform if m else "unknown",
        isolation=isolation,
        warnings=m.warnings if m else (),
        network=f"agent network granted by {granted} of {counted(len(contracts), 'contract')}",
        budgets=budgets,
        selection=m.selection if m else "unknown",
        epochs=m.epochs if m else 1,
        agents=len(m.agents) if m else 0,
        contracts=len(contracts),
        planned=run.planned,
        done=run.done,
        running=running,
        status=status,
        skip_sentinel_when_rejected=m.skip_sentinel_when_rejected if m else False,
    )


def _partial_note(briefs: Sequence[RunBrief]) -> str:
    notes = []
    for b in briefs:
        if b.status != "complete":
            done = (
                f"{b.done} of {counted(b.planned, 'attempt')}"
                if b.planned is not None
                else counted(b.done, "attempt")
            )
            notes.append(f"{b.path}: {b.status}, {done} done")
    return "; ".join(notes)


def profile_note(facts: Sequence[Fact]) -> str:
    """Say which profiles' decisions were made under different versions ("" when none was).

    A profile's version changes with its check list (:data:`repogate.vocabulary.PROFILE_VERSIONS`),
    so a rate over attempts of two versions mixes two meanings of "accepted". A decision stored
    before versions were recorded counts as its own version, ``not recorded``.
    """
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    for f in facts:
        decision = f.attempt.decision
        if decision is not None:
            version = decision.profile_version
            seen[decision.profile][f"v{version}" if version is not None else "not recorded"] += 1
    mixed = [
        f"{profile}: "
        + ", ".join(f"{v} in {n} attempt{'s' * (n != 1)}" for v, n in sorted(c.items()))
        for profile, c in sorted(seen.items())
        if len(c) > 1
    ]
    return "; ".join(mixed)


def build_report(
    runs: list[Run],
    by: str | None = None,
    baseline: str | None = None,
    policy: Policy | None = None,
    policy_source: str = "defaults",
) -> Report:
    """Compute the whole report from ``runs`` (read by :func:`repogate.report.load.load_runs`).

    Args:
        runs: the run directories' attempts and manifests.
        by: a cohort key to group acceptance, autonomy and gate informativeness by.
        baseline: the baseline agent's short name; default the first agent met.
        policy: the decision policy (:mod:`.policy`); default its defaults.
        policy_source: where the policy came from (a file path, or ``defaults``), printed with it.

    Raises:
        UserInputError: ``by`` is a key no contract carries, or ``baseline`` names no agent.
    """
    check_cohort_key(runs, by)
    facts = [fact(a, by) for run in runs for a in run.attempts]
    grouped = _by_agent(facts)
    agents = tuple(grouped)
    chosen = baseline or agents[0]
    if chosen not in grouped:
        raise UserInputError(
            f"unknown baseline agent {chosen!r}", f"choose one of: {', '.join(agents)}"
        )
    rows = []
    for agent, mine in grouped.items():
        rows.append(acceptance_row(agent, "all", mine))
        if by is not None:
            cohorts: dict[str, list[Fact]] = defaultdict(list)
            for f in mine:
                cohorts[f.cohort].append(f)
            rows += [acceptance_row(agent, c, cohorts[c]) for c in sorted(cohorts)]
    resolved_rows, gaps = [], []
    for agent, mine in grouped.items():
        row, found = _resolved(agent, mine)
        resolved_rows.append(row)
        gaps += found
    briefs = tuple(run_brief(run) for run in runs)
    attempt_rows = tuple(_attempt_row(f) for f in facts)
    policy = policy or Policy()
    policy_id = f"v{policy.version} {policy_source} sha256 {policy.digest}"
    return Report(
        by=by,
        baseline=chosen,
        agents=agents,
        partial=any(b.status != "complete" for b in briefs),
        partial_note=_partial_note(briefs),
        profile_note=profile_note(facts),
        runs=briefs,
        acceptance=tuple(rows),
        pass_k=tuple(r for agent, mine in grouped.items() for r in _pass_k(agent, mine)),
        funnels=tuple(_funnel(agent, mine) for agent, mine in grouped.items()),
        errors=tuple(_errors(agent, mine) for agent, mine in grouped.items()),
        soft=tuple(_soft(agent, mine) for agent, mine in grouped.items()),
        resolved=tuple(resolved_rows),
        gaps=tuple(gaps),
        differs=differs_rows(grouped),
        paired=autonomy.paired_rows(grouped, chosen),
        estimand=ESTIMAND,
        policy=policy,
        policy_line=describe(policy, policy_source),
        autonomy_rule=autonomy.rule_text(policy.autonomy),
        autonomy=autonomy.autonomy(grouped, chosen, policy, policy_id),
        informativeness_rule=gates.rule_text(policy.gates),
        gates=gates.gate_information(facts, policy.gates),
        attempts=attempt_rows,
        injections=injection_pairs((r.contract, r.agent, r.outcome) for r in attempt_rows),
    )
