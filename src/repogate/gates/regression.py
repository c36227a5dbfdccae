"""Gate V's regression step: every test that passed at the base must still pass.

SWE-bench's PASS_TO_PASS lists only tests of the test files the fix's test patch touches, so a
patch that breaks a neighbouring file's tests passes its grading. Here the regression set is, by
default, every test that passed in the base's whole-suite run (:mod:`repogate.oracles.base_suite`),
minus tests known to flip; the tests a change can affect are selected from per-test coverage
(:mod:`repogate.oracles.selection`), or all of them when selection cannot be trusted. A contract
may narrow the set to the declared ids (``oracles.regression = "declared"``, SWE-bench's rule);
the narrowing is recorded in this receipt and shown in the check's detail.

A selected test that does not pass on the candidate is run twice more; one pass in those reruns
marks it flaky, excluded from the verdict with a record. A failure that reproduces fails
``regression_tests_passed``. Every run is on a fresh tree of the candidate, never one that earlier
test code wrote (:func:`repogate.gates.graded_trees.fresh_tree`), so a failure kept away by a file
an earlier run left in the checkout is not called flaky.

What only the base's passing tests read is their oracle too: a patch changing a data file that
only test code opened in the base's whole-suite run (the guard's read trace) fails
``regression_tests_passed`` (a broken test hidden by rewriting its table), unless gate I already
refused it as the graded tests' (:mod:`repogate.gates.graded_oracle`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Literal

from repogate.gates.graded_oracle import GradedOracle, graded_edits
from repogate.gates.verification import untampered_check
from repogate.git import ChangedPath
from repogate.oracles.base_suite import BaseSuite
from repogate.oracles.junit import TestOutcome, match_ids
from repogate.oracles.pytest_runner import TestRun
from repogate.oracles.selection import Selection
from repogate.receipt import Check, Observation
from repogate.vocabulary import CheckName, ErrorKind

RegressionScope = Literal["base-passing", "declared"]
RunIds = Callable[[Sequence[str], str, bool], TestRun]
"""Runs ids on the tested tree: (ids, label for its report folder, filter to the ids) -> run."""

CHECK: CheckName = "regression_tests_passed"
RERUNS = 2
NARROWED = 'regression set narrowed by the contract to the declared PASS_TO_PASS (oracles.regression = "declared")'


def narrowed() -> Observation:
    """The record of a contract that narrows the regression set to the declared ids."""
    return Observation(
        checks=(Check(name=CHECK, status="passed", detail=NARROWED),),
        details={"scope": "declared", "narrowed_by": "contract"},
    )


def _listing(ids: Sequence[str]) -> str:
    return ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")


def _observe(ids: Sequence[str], outcomes: Mapping[str, TestOutcome]) -> dict[str, str]:
    matched = match_ids(ids, outcomes)
    return {t: "missing" if matched[t] is None else outcomes[str(matched[t])] for t in ids}


def suite_oracle_edits(
    suite: BaseSuite, changed: Sequence[ChangedPath], graded: GradedOracle
) -> tuple[str, ...]:
    """Return the changed data files only the base suite's tests read, each with why, sorted.

    Args:
        suite: the base's whole-suite record (its read trace; none traced: nothing found).
        changed: the candidate's changed paths.
        graded: what gate I holds as the graded tests' (refused there, not counted again).
    """
    if suite.reads is None:
        return ()
    already = graded_edits(changed, graded).refused
    found = graded_edits(changed, GradedOracle(reads=suite.reads)).refused
    return tuple(
        f"{path} (traced in the base's whole-suite run: rule '{rule}')"
        for path, rule in sorted(found.items())
        if path not in already
    )


def check_regressions(
    suite: BaseSuite,
    selection: Selection,
    already: Mapping[str, TestOutcome],
    exclude: Collection[str],
    run: RunIds,
    edited: Sequence[str] = (),
    run_base: RunIds | None = None,
) -> Observation:
    """Run the selected base-passing tests on the candidate and grade them.

    Args:
        suite: the base's whole-suite record.
        selection: the base-passing tests the change can affect (or all of them).
        already: outcomes the graded run already observed on this tree (not run again).
        exclude: ids left out of the regression set: the graded FAIL_TO_PASS / PASS_TO_PASS
            ids (graded apart) and tests that flipped at the base.
        run: runs ids on the candidate's test tree.
        edited: data files only the base suite's tests read that the candidate changed
            (:func:`suite_oracle_edits`): each fails the check.
        run_base: runs ids on a fresh tree of the base, as ``run`` does on the candidate's. A
            failure that reproduces on the candidate is run the same way at the base; one that
            fails there too (an order-dependent test: it passed in the base's whole-suite run,
            not alone) is left out and recorded as ``failing_alone_at_base``, as gate V's reruns
            charge a PASS_TO_PASS failure only when the base passes it.

    Returns:
        ``regression_tests_passed``: ``error`` when the base's whole suite gave no trustworthy
        report (the base behaviour is unknown); ``failed`` naming every selected test that
        no longer passes, reproducibly; ``passed`` otherwise. Details record the scope, the
        selection and its fallback reasons, what ran, and the flaky tests excluded.
    """
    details: dict[str, Any] = {"scope": "base-passing", "base_suite_status": suite.status}
    if suite.status != "ok":
        why = (
            f"the base's whole suite gave no usable report ({suite.reason}); fix the environment "
            'or narrow the contract with oracles.regression = "declared"'
        )
        kind: ErrorKind = "timeout" if suite.timed_out else "other evaluator error"
        return Observation(checks=(Check.error(CHECK, why, kind),), details=details)
    skip = set(exclude)
    chosen = [t for t in selection.tests if t not in skip]
    to_run = [t for t in chosen if t not in already]
    observed = dict(already)
    runs: list[TestRun] = []
    if to_run:
        runs.append(run(to_run, "selected", True))
        observed.update(runs[-1].outcomes)
        lost = [t for t, o in _observe(to_run, observed).items() if o == "missing"]
        if lost and runs[-1].status == "ok":  # ids spelled differently: run their files whole
            runs.append(run(lost, "unfiltered", False))
            observed.update(runs[-1].outcomes)
    broken = [r for r in runs if r.status != "ok" and not r.outcomes]
    seen = _observe(chosen, observed)
    failing = [t for t in chosen if seen[t] != "passed"]
    flaky: list[str] = []
    for n in range(RERUNS if failing and not broken else 0):
        again = run(failing, f"rerun{n}", True)
        runs.append(again)
        flaky += [t for t, o in _observe(failing, again.outcomes).items() if o == "passed"]
    failing = [t for t in failing if t not in flaky]
    alone_at_base: list[str] = []
    if failing and not broken and run_base is not None:
        at_base = run_base(failing, "base-alone", True)
        runs.append(at_base)
        if at_base.status == "ok":
            alone_at_base = [
                t for t, o in _observe(failing, at_base.outcomes).items() if o != "passed"
            ]
        failing = [t for t in failing if t not in alone_at_base]
    details.update(
        base_passing=len(suite.passing),
        selection=selection.model_dump(exclude={"tests"}),
        selected=len(chosen),
        ran=len(to_run),
        run_seconds=round(sum(r.execution.duration_s for r in runs), 3),
        runs=[{"status": r.status, "reason": r.reason, "collected": r.collected} for r in runs],
        failing={t: seen[t] for t in failing},
        flaky_excluded=sorted(flaky),
        failing_alone_at_base=sorted(alone_at_base),
        coverage=suite.coverage is not None,
        coverage_reason=suite.coverage_reason,
    )
    scope = (
        f"{len(chosen)} of {len(suite.passing)} base-passing tests selected beyond the graded ids"
        if not selection.whole
        else f"all {len(chosen)} base-passing tests beyond the graded ids ({'; '.join(selection.reasons)})"
    )
    if broken:
        why = f"the regression run broke on the candidate: {broken[0].reason}"
        tampered = [untampered_check(runs)] if any(r.tampering for r in runs) else []
        return Observation(
            checks=(Check(name=CHECK, status="failed", detail=why), *tampered), details=details
        )
    problems = [f"edits what only tests passing at the base read: {'; '.join(edited)}"] * bool(
        edited
    )
    if failing:
        bad = [f"{t} ({seen[t]})" for t in failing]
        problems.append(f"passed at the base, not on the candidate: {_listing(bad)}")
    if problems:
        details["oracle_edits"] = list(edited)
        detail = f"{'; '.join(problems)} [{scope}]"
        return Observation(
            checks=(Check(name=CHECK, status="failed", detail=detail),), details=details
        )
    return Observation(checks=(Check(name=CHECK, status="passed", detail=scope),), details=details)
