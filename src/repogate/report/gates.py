"""Gate informativeness: does failing a hard gate go with more post-merge (sentinel) trouble?

For each hard gate but the sentinel, per cohort, for each agent and for every agent pooled:

- population: scored attempts that passed every hermetic check other than the gate and whose
  sentinel ran (a check missing from an older evaluator's decision counts as passed); those whose
  sentinel was not run (``repogate run --skip-sentinel-when-rejected``, on every attempt a hard
  check rejected) are left out and counted, and a gate whose failures were all left out so is no
  claim for that reason: the option empties the "failed" arm by construction;
- clustered by task and agent: each task-agent unit contributes one value per arm, its sentinel
  failure rate over its epochs that failed (or passed) the gate, so epochs never count as
  independent attempts and a deterministic agent run twice gives the answer of one run;
- the risk difference (failure rate when the gate failed minus when it passed) with its one-sided
  95% lower bound, and a one-sided p-value in the direction that matters (the sentinel fails more
  often when the gate failed): a gate whose failures go with fewer sentinel failures adds nothing;
- no claim under the policy's minimum of failed units; Holm's correction over the gates tested
  for the same cohort and agent; informative when Holm's adjusted p is below the policy's alpha.

The statistics are :mod:`.differences`'s.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from repogate._counted import counted
from repogate.decision import HERMETIC_CHECKS, LIFECYCLE_CHECKS
from repogate.report.classify import SENTINEL_CHECK, Fact
from repogate.report.differences import greater, holm, risk_difference
from repogate.report.model import GateInformation
from repogate.report.policy import GatePolicy
from repogate.report.stats import over_tasks
from repogate.vocabulary import SKIP_SENTINEL_FLAG

POOLED = "all agents"
Unit = tuple[str, str]


def rule_text(policy: GatePolicy) -> str:
    """How the gate table is computed and judged, with ``policy``'s thresholds."""
    return (
        "for each hard gate, per cohort, per agent and pooled: among scored attempts that passed "
        "every hermetic check other than that gate and whose sentinel ran (those whose sentinel "
        "was not run, being already rejected, are left out and counted in the note), the "
        "sentinel failure rate when the gate failed minus when it passed, one value per task and agent (epochs "
        "averaged), with its one-sided 95% lower bound; one-sided p (Fisher's exact test, or a "
        "permutation test for epoch means) that failures go with more sentinel failures; no "
        f"claim under {policy.min_failures} failed units; informative when Holm's adjusted p "
        f"(over the gates tested for the cohort and agent) < {policy.alpha:g}"
    )


class _Arms(NamedTuple):
    """One gate's attempts: the population, its units by arm, and those left out unrun."""

    population: int
    failed: dict[Unit, list[int]]
    passed: dict[Unit, list[int]]
    not_run: int
    """Attempts otherwise in the population whose sentinel was not run (:data:`SKIP_SENTINEL_FLAG`)."""
    not_run_failed: int
    """Of them, those that failed the gate."""


def _arms(gate: str, facts: Sequence[Fact]) -> _Arms:
    others = [c for c in HERMETIC_CHECKS if c != gate]
    failed: dict[Unit, list[int]] = defaultdict(list)
    passed: dict[Unit, list[int]] = defaultdict(list)
    population = not_run = not_run_failed = 0
    for f in facts:
        status = f.checks.get(gate)
        if status not in ("passed", "failed"):
            continue
        if not all(f.checks.get(c, "passed") == "passed" for c in others):
            continue
        if f.sentinel_not_run:
            not_run += 1
            not_run_failed += status == "failed"
            continue
        if f.sentinel not in ("passed", "failed"):
            continue
        population += 1
        arm = failed if status == "failed" else passed
        arm[f.attempt.contract, f.attempt.agent].append(f.sentinel == "failed")
    return _Arms(population, failed, passed, not_run, not_run_failed)


def _left_out(arms: _Arms) -> str:
    """The note's clause on attempts left out as their sentinel was not run ("" for none)."""
    if not arms.not_run:
        return ""
    return f"{counted(arms.not_run, 'attempt')} left out, their sentinel not run ({SKIP_SENTINEL_FLAG})"


def _row(
    cohort: str, agent: str, gate: str, facts: Sequence[Fact], policy: GatePolicy
) -> GateInformation:
    arms = _arms(gate, facts)
    population, failed, passed = arms.population, arms.failed, arms.passed
    when_failed = over_tasks([(sum(v), len(v)) for v in failed.values()])
    when_passed = over_tasks([(sum(v), len(v)) for v in passed.values()])
    f_rates = [sum(v) / len(v) for v in failed.values()]
    p_rates = [sum(v) / len(v) for v in passed.values()]
    note, difference, p, test = "", None, None, "not tested"
    unanswerable = not failed and arms.not_run_failed > 0  # the option emptied the failed arm
    if unanswerable:
        note = (
            f"no claim: the {counted(arms.not_run_failed, 'attempt')} that failed it are left "
            f"out, their sentinel not run ({SKIP_SENTINEL_FLAG}): the run's option makes this "
            "unanswerable; run without it to ask"
        )
    elif not population:
        note = "no attempt passed the other hermetic checks with a sentinel run"
    elif not failed:
        note = "never failed among them"
    elif not passed:
        note = "never passed among them"
    else:
        difference = risk_difference(f_rates, p_rates)
        if len(failed) < policy.min_failures:
            note = f"{len(failed)} failed units, fewer than {policy.min_failures}"
        else:
            p, test = greater(f_rates, p_rates)
    if not unanswerable:  # that note already counts them
        note = "; ".join(part for part in (note, _left_out(arms)) if part)
    return GateInformation(
        cohort=cohort,
        agent=agent,
        gate=gate,
        population=population,
        failed_units=len(failed),
        passed_units=len(passed),
        when_failed=when_failed,
        when_passed=when_passed,
        difference=difference,
        p_value=p,
        p_holm=None,
        test=test,
        informative=False,
        note=note,
        sentinel_not_run=arms.not_run,
        sentinel_not_run_failed=arms.not_run_failed,
    )


def _judged(rows: list[GateInformation], policy: GatePolicy) -> list[GateInformation]:
    """Holm over the rows tested; informative when the adjusted p is below alpha."""
    tested = [r for r in rows if r.p_value is not None]
    adjusted = dict(zip(map(id, tested), holm([r.p_value or 0.0 for r in tested]), strict=True))
    out = []
    for r in rows:
        if r.p_value is None:
            out.append(r)
            continue
        p_holm = adjusted[id(r)]
        d = r.difference
        if d is not None and d.estimate < 0:
            why = "wrong direction: fewer sentinel failures when it failed"
        elif p_holm >= policy.alpha:
            why = f"not shown (Holm over {counted(len(tested), 'gate')})"
        else:
            why = ""
        note = "; ".join(part for part in (why, r.note) if part)  # r.note: those left out
        out.append(r.model_copy(update={"p_holm": p_holm, "informative": not why, "note": note}))
    return out


def gate_information(facts: Sequence[Fact], policy: GatePolicy) -> tuple[GateInformation, ...]:
    """One row per cohort, agent (each, then pooled) and hard gate but the sentinel.

    A cohort and agent has rows when a scored attempt of it ran its sentinel or had it left out
    (:attr:`Fact.sentinel_not_run`), so an agent every attempt of which was rejected under
    ``--skip-sentinel-when-rejected`` is said, not dropped.
    """
    ran = [
        f for f in facts if f.scored and (f.sentinel in ("passed", "failed") or f.sentinel_not_run)
    ]
    groups: dict[tuple[str, str], list[Fact]] = defaultdict(list)
    for f in ran:
        groups[f.cohort, f.attempt.agent].append(f)
        groups[f.cohort, POOLED].append(f)
    gates = [g for g in LIFECYCLE_CHECKS if g != SENTINEL_CHECK]
    rows: list[GateInformation] = []
    for cohort, agent in sorted(groups, key=lambda k: (k[0], k[1] == POOLED, k[1])):
        found = [_row(cohort, agent, g, groups[cohort, agent], policy) for g in gates]
        rows += _judged(found, policy)
    return tuple(rows)
