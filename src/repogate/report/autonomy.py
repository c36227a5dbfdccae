"""Agents against the baseline: the paired comparison, and the autonomy rule by cohort.

Both pair by task: the tasks of the cohort that both the agent and the baseline scored (epochs
averaged within a task, :mod:`.stats`). Tasks one side scored and the other did not are dropped
from the pairing and counted by why (:class:`~repogate.report.model.Dropped`): an agent that errs on
the hard tasks must not buy a better rate, so the rule counts the baseline's tasks it lost and
refuses to widen past the policy's share.

The rule (:func:`rule_text`), with the thresholds of :class:`~repogate.report.policy.AutonomyPolicy`:

- (a) non-inferior: the paired difference's 95% lower bound >= -margin;
- (b) floor: the agent's own acceptance lower bound on the paired tasks >= the floor (a baseline at
  0 proves nothing);
- (c) sentinel: the sentinel failure rate's upper bound < the ceiling;
- (d) integrity: no attempt of the agent in the cohort failed an integrity check;
- (e) evidence: at least ``min_paired_tasks`` paired tasks and at most ``max_lost_share`` of the
  baseline's scored tasks lost (no scored attempt of the agent).

Verdicts, in this order: ``narrow`` when the agent is shown inferior (the difference's upper bound
< -margin) or its sentinel failures shown above the ceiling (lower bound > ceiling); ``keep`` when
(d) fails; ``insufficient evidence`` when (e) fails, or (c) cannot be judged (no sentinel ran and
the policy requires one); ``widen`` when (a) to (e) all hold; ``keep`` otherwise. Cost and time
are printed beside the verdict and never enter it. The two-sided 95% interval's lower bound makes
(a) a one-sided test at 2.5%.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from repogate._counted import counted
from repogate.report.classify import Fact, counts, finished_tasks, per_task
from repogate.report.differences import PairedDifference, paired
from repogate.report.model import Autonomy, Clause, ClauseId, Dropped, Paired, Verdict
from repogate.report.policy import AutonomyPolicy, Policy
from repogate.report.stats import Interval, over_tasks


def rule_text(policy: AutonomyPolicy) -> str:
    """The autonomy rule in words, with ``policy``'s thresholds."""
    return (
        "on the cohort's tasks both agents scored (epochs averaged within a task), widen only if "
        f"(a) the paired difference's 95% lower bound is >= -{policy.margin:g} (non-inferior), "
        f"(b) the agent's acceptance lower bound is >= {policy.acceptance_floor:g}, "
        f"(c) its sentinel failure rate's upper bound is < {policy.sentinel_ceiling:g}, "
        "(d) no attempt failed an integrity check, "
        f"(e) at least {counted(policy.min_paired_tasks, 'paired task')} and at most "
        f"{policy.max_lost_share:.0%} of the baseline's scored tasks lost to the agent's errors "
        "or not run; narrow when shown inferior beyond the margin or the sentinel's lower bound "
        "is above the ceiling; keep on an integrity failure; insufficient evidence when (e) "
        "fails or no sentinel ran (if required); cost and time beside, never inside"
    )


def _pp(value: float) -> str:
    return f"{100 * value:+.1f} pp"


def _range(interval: Interval, points: bool = False) -> str:
    if points:
        return f"{_pp(interval.estimate)} [{_pp(interval.low)}, {_pp(interval.high)}]"
    return f"{interval.estimate:.1%} [{interval.low:.1%}, {interval.high:.1%}]"


def pairing(mine: Sequence[Fact], theirs: Sequence[Fact]) -> tuple[list[str], Dropped]:
    """The tasks both sides scored, sorted, and the tasks dropped by why (:class:`Dropped`)."""
    a, b = per_task(mine), per_task(theirs)
    a_done, b_done = finished_tasks(mine), finished_tasks(theirs)
    only_b, only_a = set(b) - set(a), set(a) - set(b)
    dropped = Dropped(
        agent_errors=len(only_b & a_done),
        agent_not_run=len(only_b - a_done),
        baseline_errors=len(only_a & b_done),
        baseline_not_run=len(only_a - b_done),
    )
    return sorted(set(a) & set(b)), dropped


def compare(
    mine: Sequence[Fact], theirs: Sequence[Fact], shared: Sequence[str]
) -> PairedDifference:
    """The agent's per-task acceptance minus the baseline's over the ``shared`` tasks."""
    a, b = per_task(mine), per_task(theirs)
    return paired([a[t][0] / a[t][1] for t in shared], [b[t][0] / b[t][1] for t in shared])


def paired_rows(grouped: Mapping[str, Sequence[Fact]], baseline: str) -> tuple[Paired, ...]:
    """Compare every other agent with ``baseline`` over every task (see the module)."""
    theirs = grouped[baseline]
    rows = []
    for agent, mine in grouped.items():
        if agent != baseline:
            shared, dropped = pairing(mine, theirs)
            rows.append(
                Paired(
                    agent=agent,
                    baseline=baseline,
                    tasks=len(shared),
                    dropped=dropped,
                    comparison=compare(mine, theirs, shared),
                )
            )
    return tuple(rows)


def _sentinel(facts: Sequence[Fact], shared: Iterable[str]) -> Interval:
    """Sentinel failure rate over the shared tasks' scored attempts whose sentinel ran."""
    keep = set(shared)
    ran = counts(
        facts,
        lambda f: f.sentinel == "failed",
        lambda f: f.scored and f.attempt.contract in keep and f.sentinel in ("passed", "failed"),
    )
    return over_tasks(list(ran.values()))


def _left_out(facts: Sequence[Fact], shared: Iterable[str]) -> int:
    """Scored attempts of the shared tasks whose sentinel was not run, as already rejected.

    ``repogate run --skip-sentinel-when-rejected`` reports gate S's check ``skipped`` on them;
    a profile without a sentinel reports no such check.
    """
    keep = set(shared)
    return sum(1 for f in facts if f.scored and f.attempt.contract in keep and f.sentinel_not_run)


def _beside(mine: Sequence[Fact], theirs: Sequence[Fact], shared: Iterable[str]) -> str:
    keep = set(shared)

    def total(facts: Sequence[Fact], name: str) -> float:
        return sum(
            float(getattr(f.attempt.decision.soft, name))
            for f in facts
            if f.attempt.decision is not None and f.attempt.contract in keep
        )

    return (
        f"cost {total(mine, 'agent_cost_usd'):.4g} USD vs baseline "
        f"{total(theirs, 'agent_cost_usd'):.4g}; wall time {total(mine, 'wall_time_s'):.4g} s "
        f"vs {total(theirs, 'wall_time_s'):.4g} (totals on the paired tasks)"
    )


def _clauses(
    mine: Sequence[Fact], theirs: Sequence[Fact], policy: AutonomyPolicy
) -> tuple[dict[ClauseId, Clause], PairedDifference, Interval, list[str]]:
    shared, dropped = pairing(mine, theirs)
    diff = compare(mine, theirs, shared)
    d = diff.difference
    mine_tasks = per_task(mine)
    own = over_tasks([mine_tasks[t] for t in shared])
    sentinel = _sentinel(mine, shared)
    broken = sum(f.integrity_failed for f in mine)
    base_scored = len(per_task(theirs))
    lost = dropped.agent_errors + dropped.agent_not_run
    share = lost / base_scored if base_scored else 0.0
    enough = len(shared) >= policy.min_paired_tasks and share <= policy.max_lost_share
    if sentinel.tasks:
        c_holds: bool | None = sentinel.high < policy.sentinel_ceiling
        c_says = f"sentinel failure rate {_range(sentinel)} over {counted(sentinel.tasks, 'task')}"
        c_says += f", upper bound {'<' if c_holds else '>='} {policy.sentinel_ceiling:g}"
        if sentinel.low > policy.sentinel_ceiling:
            c_says += f"; lower bound > {policy.sentinel_ceiling:g}: shown above the ceiling"
        if left_out := _left_out(mine, shared):
            c_says += (
                f"; {counted(left_out, 'sentinel')} not run on attempts already rejected "
                "(--skip-sentinel-when-rejected): the rate is over attempts no other check rejected"
            )
    else:
        c_holds = None if policy.require_sentinel else True
        c_says = "no sentinel ran on the paired tasks" + (
            " (the policy requires one)" if policy.require_sentinel else " (not required)"
        )
    a_holds = d.low >= -policy.margin if shared else None
    b_holds = own.low >= policy.acceptance_floor if shared else None
    clauses: dict[ClauseId, Clause] = {
        "a": Clause(
            clause="a",
            holds=a_holds,
            says=f"paired difference {_range(d, points=True)} ({d.method}; sign test "
            f"p={diff.p_value:.3g}), lower bound {'>=' if a_holds else '<'} "
            f"{_pp(-policy.margin)}"
            + (
                f"; upper bound < {_pp(-policy.margin)}: shown inferior"
                if shared and d.high < -policy.margin
                else ""
            ),
        ),
        "b": Clause(
            clause="b",
            holds=b_holds,
            says=f"acceptance {_range(own)} on {counted(own.tasks, 'paired task')}, lower bound "
            f"{'>=' if b_holds else '<'} {policy.acceptance_floor:g}",
        ),
        "c": Clause(clause="c", holds=c_holds, says=c_says),
        "d": Clause(
            clause="d",
            holds=broken == 0,
            says=f"{broken} of {counted(len(mine), 'attempt')} failed an integrity check",
        ),
        "e": Clause(
            clause="e",
            holds=enough,
            says=f"{counted(len(shared), 'paired task')} (at least {policy.min_paired_tasks}); "
            f"{lost} of the baseline's {counted(base_scored, 'scored task')} ({share:.0%}, at most "
            f"{policy.max_lost_share:.0%}) lost: {dropped.agent_errors} to the agent's errors, "
            f"{dropped.agent_not_run} not run",
        ),
    }
    return clauses, diff, sentinel, shared


def judge(
    mine: Sequence[Fact], theirs: Sequence[Fact], policy: AutonomyPolicy
) -> tuple[Verdict, tuple[ClauseId, ...], tuple[Clause, ...], str]:
    """Apply the rule (see the module) to one agent and the baseline on one cohort.

    Returns:
        The verdict, the letters of the clauses that decided it, every clause measured, and the
        cost and time beside it.
    """
    clauses, diff, sentinel, shared = _clauses(mine, theirs, policy)
    beside = _beside(mine, theirs, shared)
    every = tuple(clauses.values())
    narrow: list[ClauseId] = []
    if shared and diff.difference.high < -policy.margin:
        narrow.append("a")
    if sentinel.tasks and sentinel.low > policy.sentinel_ceiling:
        narrow.append("c")
    if narrow:
        return "narrow", tuple(narrow), every, beside
    if not clauses["d"].holds:
        return "keep", ("d",), every, beside
    short = tuple(
        c.clause
        for c in every
        if (c.clause == "c" and c.holds is None) or (c.clause == "e" and not c.holds)
    )
    if short:
        return "insufficient evidence", short, every, beside
    failing = tuple(c.clause for c in every if not c.holds)
    if not failing:
        return "widen", tuple(clauses), every, beside
    return "keep", failing, every, beside


def _by_cohort(facts: Iterable[Fact]) -> dict[str, list[Fact]]:
    found: dict[str, list[Fact]] = defaultdict(list)
    for f in facts:
        found[f.cohort].append(f)
    return found


def autonomy(
    grouped: Mapping[str, Sequence[Fact]], baseline: str, policy: Policy, policy_id: str
) -> tuple[Autonomy, ...]:
    """Apply the rule to every agent but ``baseline``, per cohort, sorted by cohort."""
    theirs = _by_cohort(grouped[baseline])
    rows = []
    for agent, facts in grouped.items():
        if agent == baseline:
            continue
        for cohort, mine in sorted(_by_cohort(facts).items()):
            verdict, decided, clauses, beside = judge(mine, theirs.get(cohort, []), policy.autonomy)
            rows.append(
                Autonomy(
                    cohort=cohort,
                    agent=agent,
                    baseline=baseline,
                    verdict=verdict,
                    decided_by=decided,
                    clauses=clauses,
                    beside=beside,
                    policy=policy_id,
                )
            )
    rows.sort(key=lambda r: r.cohort)
    return tuple(rows)
