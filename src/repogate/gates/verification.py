"""Gate V, verification: running and grading the graded tests of one state.

Tests run on a harness-made tree (:mod:`repogate.gates.graded_trees`): the candidate (or the merged
tree) with every file the hidden tests touch reset to the base and the hidden test patch applied, so
no edit of the agent's to those files survives into grading. Results come only from the JUnit report
the harness reads from a folder outside that tree. FAIL_TO_PASS and PASS_TO_PASS are graded as
SWE-bench grades them (:mod:`repogate.oracles.grading`). A failing PASS_TO_PASS test is run again on
the candidate and at the base before it is charged (:mod:`repogate.oracles.reruns`); a test whose
outcome flips between runs of one state, at the base or on the candidate, is flaky: excluded from
the verdict, with a record in the receipt and in the check's detail.

The path is one way: the tree is made (:mod:`repogate.gates.graded_trees`, from a
:class:`~repogate.gates.graded_trees.GradedState` record passed down), the tests run
(:func:`run_repeated`, :func:`rerun_state`, each a call down to
:func:`repogate.oracles.pytest_runner.run_tests`), and the runs are graded (:func:`check_tests`,
with :mod:`repogate.oracles.grading` and :mod:`repogate.oracles.reruns` deciding from data alone);
:func:`grade_tree` calls the steps in that order, and nothing is called back.

Every run after a state's first, repeat or rerun, runs on a fresh export of that state
(:func:`~repogate.gates.graded_trees.fresh_tree`), never on a tree earlier test code wrote: a
failure that test code makes reappear only in a clean checkout (a "cold start" kept in a file of the
tree) reproduces on every rerun and is charged, not excused as flaky. State outside the tree does
not carry over either: each sandboxed run gets a fresh private ``HOME``, ``TMPDIR`` and ``/tmp``,
and the environment is read-only (:mod:`repogate.sandbox`). The contract's extra oracle commands are
checked by :mod:`repogate.gates.oracle_commands`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from repogate._counted import listed
from repogate.contract import TransitionContract
from repogate.environments import Environment
from repogate.gates.graded_trees import GradedState, fresh_tree, hidden_test_files
from repogate.oracles.base_suite import graded_grant, selecting
from repogate.oracles.grading import (
    Grading,
    Kind,
    Observed,
    flaky,
    grade,
    label,
    named,
    observe_ids,
    passes,
)
from repogate.oracles.junit import TestOutcome
from repogate.oracles.pytest_runner import TestRun, run_tests
from repogate.oracles.reruns import (
    RERUNS,
    Rerun,
    describe,
    first_outcomes,
    flaky_ids,
    pending,
    pending_again,
    records,
    seen_again,
    seen_with_selection,
    selection,
)
from repogate.receipt import Check, Observation
from repogate.sandbox import SandboxPolicy


class GradedTests(Observation):
    """What grading one tree's tests observed, with the outcomes later phases read.

    Attributes:
        outcomes: each reported test's outcome in the last trustworthy run (empty when no run
            gave a report).
        timed_out: a run broke because it reached its time budget (both test checks then
            fail on a candidate; a task whose reference does is invalid for the budget's reason).
    """

    outcomes: dict[str, TestOutcome] = Field(default_factory=dict)
    timed_out: bool = False


def _graded_run(
    env: Environment,
    tree: Path,
    contract: TransitionContract,
    ids: Sequence[str],
    report_dir: Path,
    policy: SandboxPolicy,
    *,
    only: bool = False,
) -> TestRun:
    """Run ``ids`` with the harness's plugin, which tells a non-strict XPASS's mark apart.

    ``only`` runs those tests alone (a rerun: :func:`~repogate.oracles.reruns.selection`), not
    every test of their files.
    """
    hidden = hidden_test_files(contract, tree, ids)
    command, granted, tools = graded_grant(
        contract.oracles.test_command, hidden, report_dir, policy
    )
    if only:
        granted = selecting(granted, selection(ids), report_dir)
    return run_tests(env, tree, command, ids, report_dir, granted, tool_path=tools)


def run_repeated(
    env: Environment,
    state: GradedState,
    tree: Path,
    contract: TransitionContract,
    report_dir: Path,
    policy: SandboxPolicy,
) -> tuple[list[TestRun], set[str]]:
    """Run the graded tests ``contract.oracles.repeat`` times; return the runs and flaky ids.

    The first run is on ``tree`` (already written from ``state``), each later one on a fresh tree
    of ``state`` (:func:`~repogate.gates.graded_trees.fresh_tree`), reports in
    ``report_dir / "run<n>"``.
    """
    ids = [*contract.oracles.fail_to_pass, *contract.oracles.pass_to_pass]
    runs = [
        _graded_run(
            env,
            tree if n == 0 else fresh_tree(state, tree, f"run{n}"),
            contract,
            ids,
            report_dir / f"run{n}",
            policy,
        )
        for n in range(contract.oracles.repeat)
    ]
    ok = [r.outcomes for r in runs if r.status == "ok"]
    return runs, flaky(ok) if len(ok) > 1 else set()


def rerun_state(
    env: Environment,
    state: GradedState,
    tree: Path,
    contract: TransitionContract,
    first: Mapping[str, Observed],
    which: Literal["candidate", "base"],
    report_dir: Path,
    policy: SandboxPolicy,
) -> tuple[Rerun, ...]:
    """Run the ids of ``first`` again on ``state`` until each has flipped or the reruns are spent.

    The policy is :mod:`repogate.oracles.reruns`' (at most :data:`~repogate.oracles.reruns.RERUNS`
    more runs; one with no usable report ends them). Rerun ``n`` runs the ids still
    :func:`~repogate.oracles.reruns.pending` alone (not the rest of their files) on a fresh tree
    of ``state`` beside ``tree`` (:func:`~repogate.gates.graded_trees.fresh_tree`), its report
    in ``report_dir / "rerun<n>"``. An id that flipped alone is then confirmed under the first
    run's selection (every graded id, their files whole), up to as many more times, stopping at
    the first flip there (``rerun-same<n>``): only such a flip makes it flaky; one that never
    flips there is ``order_dependent`` and its first outcome stands. Nothing runs when ``first``
    is empty.

    Args:
        env: the environment built at the base.
        state: the state to run (the candidate's, or the base's with the hidden tests).
        tree: where that state's first tree is (or would be): fresh trees are written beside it.
        contract: the task (its test command and hidden tests).
        first: each id to rerun mapped to the outcome it had (the one in question).
        which: the state's name in the records.
        report_dir: folder for the reruns' reports.
        policy: the sandbox the tests run in.

    Returns:
        One record per id of ``first``, in its order (:func:`~repogate.oracles.reruns.records`).
    """
    seen = first_outcomes(first)
    for n in range(RERUNS):
        ids = pending(seen)
        if not ids:
            break
        fresh = fresh_tree(state, tree, f"rerun{n}")
        ran = _graded_run(env, fresh, contract, ids, report_dir / f"rerun{n}", policy, only=True)
        if ran.status != "ok":
            break
        seen = seen_again(seen, ran.outcomes)
    graded = [*contract.oracles.fail_to_pass, *contract.oracles.pass_to_pass]
    again: dict[str, tuple[Observed, ...]] = {}
    for n in range(RERUNS):
        if not pending_again(seen, again):
            break
        # the first run's selection: every graded id, their files whole (as run_repeated runs)
        fresh = fresh_tree(state, tree, f"rerun-same{n}")
        ran = _graded_run(env, fresh, contract, graded, report_dir / f"rerun-same{n}", policy)
        if ran.status != "ok":
            break
        again = seen_with_selection(seen, again, ran.outcomes)
    return records(seen, which, again)


def failures_to_confirm(
    runs: Sequence[TestRun],
    graded: tuple[Sequence[str], Sequence[str]],
    excluded: Collection[str],
    base_xfailed: Collection[str],
    base_xpassed: Collection[str] = (),
) -> dict[str, Observed]:
    """Return the failing PASS_TO_PASS ids of the last usable run, each with its outcome.

    These are rerun on the candidate, and the reproduced ones at the base
    (:func:`expected_at_base`), before one is charged; see :mod:`repogate.oracles.reruns`.
    None is returned when a FAIL_TO_PASS test failed (or none is left to grade):
    ``focused_tests_passed`` fails whatever the reruns find, so they would only cost time
    (issue 21: two wrong xarray patches spent 1,409 s there).

    Args:
        runs: the candidate's runs; the last usable one is graded.
        graded: the contract's FAIL_TO_PASS and PASS_TO_PASS ids.
        excluded: ids already left out (flaky at the base, or flipping between ``runs``).
        base_xfailed: PASS_TO_PASS ids that XFAILed at the base.
        base_xpassed: PASS_TO_PASS ids ``xpassed`` at the base.
    """
    usable = [r for r in runs if r.status == "ok"]
    fail_to_pass, pass_to_pass = graded
    if not usable or not focused_passed(usable[-1].outcomes, fail_to_pass, excluded):
        return {}
    ids = [t for t in pass_to_pass if t not in excluded]
    observed, _matched, _invalid = observe_ids(usable[-1].outcomes, ids)
    return {
        t: o
        for t, o in observed.items()
        if not passes(
            "pass_to_pass",
            o,
            xfailed_at_base=t in base_xfailed,
            xpassed_at_base=t in base_xpassed,
        )
    }


def expected_at_base(
    on_candidate: Sequence[Rerun], base_xfailed: Collection[str], base_xpassed: Collection[str] = ()
) -> dict[str, Observed]:
    """Return the failures that reproduced on the candidate, each with its outcome at the base.

    Args:
        on_candidate: the candidate's rerun records (:func:`rerun_state`).
        base_xfailed: PASS_TO_PASS ids that XFAILed at the base.
        base_xpassed: PASS_TO_PASS ids ``xpassed`` at the base.
    """
    return {
        r.test_id: "xfailed"
        if r.test_id in base_xfailed
        else "xpassed"
        if r.test_id in base_xpassed
        else "passed"
        for r in on_candidate
        if not r.flaky
    }


def focused_passed(
    outcomes: Mapping[str, TestOutcome], fail_to_pass: Sequence[str], excluded: Collection[str]
) -> bool:
    """Whether every FAIL_TO_PASS test left in grading passed (and at least one is left)."""
    ids = [t for t in fail_to_pass if t not in excluded]
    observed, _matched, _invalid = observe_ids(outcomes, ids)
    return bool(ids) and all(passes("fail_to_pass", observed[t]) for t in ids)


def grade_tree(
    env: Environment,
    tree: Path,
    contract: TransitionContract,
    reports: Path,
    policy: SandboxPolicy,
    *,
    states: tuple[GradedState, GradedState],
    base_flaky: frozenset[str],
    base_xfailed: frozenset[str],
    base_xpassed: frozenset[str] = frozenset(),
) -> GradedTests:
    """Grade the tests on ``tree`` as a candidate is graded: every graded run goes through here.

    One straight path, each step returning its data to the next: the graded tests run
    ``repeat`` times (:func:`run_repeated`); the failing PASS_TO_PASS tests
    (:func:`failures_to_confirm`) are rerun on the candidate (:func:`rerun_state`), and those that
    reproduce (:func:`expected_at_base`) at the base, on trees of ``states[1]`` beside
    ``base-for-<tree name>``; the last run is graded (:func:`check_tests`). Every repeat and
    rerun runs on a fresh tree (:func:`~repogate.gates.graded_trees.fresh_tree`), never one
    earlier test code wrote: state a test leaves in its tree cannot make a reproducible failure
    look flaky.

    Args:
        env: the environment built at the base.
        tree: the tree to grade, hidden tests applied, already written from ``states[0]``.
        contract: the task (its oracles).
        reports: folder for the JUnit reports and logs (``run<n>``, ``rerun<n>``, ``base/``).
        policy: the sandbox the tests run in.
        states: this state and the base's (hidden tests applied), whose trees are written afresh.
        base_flaky: tests that flipped at the base: left out.
        base_xfailed: PASS_TO_PASS tests that XFAILed at the base.
        base_xpassed: PASS_TO_PASS tests ``xpassed`` at the base.

    Returns:
        The two checks, the record, and the outcomes of the last trustworthy run.

    Raises:
        GitError, PatchApplyError: a fresh tree could not be written.
    """
    state, base_state = states
    oracles = contract.oracles
    graded = (oracles.fail_to_pass, oracles.pass_to_pass)
    runs, flips = run_repeated(env, state, tree, contract, reports, policy)
    failing = failures_to_confirm(runs, graded, set(base_flaky) | flips, base_xfailed, base_xpassed)
    on_candidate = rerun_state(env, state, tree, contract, failing, "candidate", reports, policy)
    expected = expected_at_base(on_candidate, base_xfailed, base_xpassed)
    base_tree = tree.with_name(f"base-for-{tree.name}")
    at_base = rerun_state(
        env, base_state, base_tree, contract, expected, "base", reports / "base", policy
    )
    return check_tests(
        runs,
        flips,
        oracles.fail_to_pass,
        oracles.pass_to_pass,
        base_flaky,
        base_xfailed=base_xfailed,
        base_xpassed=base_xpassed,
        reruns=on_candidate + at_base,
    )


def _test_details(
    runs: Sequence[TestRun], graded: Grading | None, flips: set[str], reruns: Sequence[Rerun] = ()
) -> dict[str, Any]:
    return {
        "runs": [
            {
                "status": r.status,
                "reason": r.reason,
                "collected": r.collected,
                "returncode": r.execution.returncode,
                "duration_s": round(r.execution.duration_s, 3),
                "report_sha256": r.report_sha256,
                "isolation": r.execution.isolation.kind,
                # the image the run saw as its root (image backend); absent for this machine's
                **({"root": r.execution.isolation.root} if r.execution.isolation.root else {}),
                **({"services": list(r.services)} if r.services else {}),
                **({"internal_error": r.internal_error} if r.internal_error else {}),
            }
            for r in runs
        ],
        "flaky_excluded": sorted(flips),
        "reruns": [r.model_dump() for r in reruns],
        "results": [] if graded is None else [t.model_dump() for t in graded.results],
    }


_NOT_PASSING: dict[Kind, str] = {
    "fail_to_pass": "FAIL_TO_PASS test(s) do not pass on the candidate",
    "pass_to_pass": "PASS_TO_PASS test(s) passed at the base, not on the candidate",
}
"""How a test check's detail says its ids that did not pass (named after it, with outcomes)."""


def check_tests(
    runs: Sequence[TestRun],
    flips: set[str],
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str],
    base_flaky: set[str] | frozenset[str] = frozenset(),
    *,
    base_xfailed: set[str] | frozenset[str] = frozenset(),
    base_xpassed: Collection[str] = (),
    reruns: Sequence[Rerun] = (),
) -> GradedTests:
    """Grade the runs: ``focused_tests_passed`` (FAIL_TO_PASS) and ``regression_tests_passed``.

    Called only after the base-state check ran the same tests in the same environment and got a
    trustworthy report; so a candidate run without one (a hang past the budget, pytest unable to
    start, nothing collected) is the candidate's doing, and both checks fail with the reason:
    never a pass, and no way for a patch to turn its rejection into an evaluator error by
    breaking the runner. The last run's outcomes are graded.

    Flaky tests are left out of the verdict and named in the check's detail: those that flipped
    at the base (``base_flaky``), those that flipped between the candidate's repeated runs
    (``flips``), and those the reruns found flaky (``reruns``, see :func:`grade_tree`).
    A test flipping only on the candidate is flaky too: a failure is charged only when it
    reproduces (issue 9, after SWE-bench charging every flaky failure to the patch).

    ``harness_untampered`` fails when the harness's guard saw the candidate's code change
    pytest's test-running machinery in any run (:mod:`repogate.oracles.guard`); such a run has
    no trusted outcome, so both test checks fail with it.
    """
    untampered = untampered_check(runs)
    broken = [r for r in runs if r.status != "ok"]
    if broken or not runs:
        reason = broken[0].reason if broken else "no test run"
        checks = tuple(
            Check(name=n, status="failed", detail=f"the test run broke on the candidate: {reason}")
            for n in ("focused_tests_passed", "regression_tests_passed")
        )
        return GradedTests(
            checks=(*checks, untampered),
            details=_test_details(runs, None, flips),
            outcomes=outcomes_of(runs),
            timed_out=any(r.execution.timed_out for r in broken),
        )
    unstable = flips - set(base_flaky)
    excluded = set(base_flaky) | flips | flaky_ids(reruns)
    graded = grade(
        runs[-1].outcomes,
        fail_to_pass,
        pass_to_pass,
        exclude=excluded,
        base_xfailed=base_xfailed,
        base_xpassed=base_xpassed,
    )

    def detail(kind: Kind) -> str:
        bad = [r for r in graded.results if r.kind == kind and not r.excluded and not r.ok]
        text = ""
        if bad:
            seen = {r.test_id: label(r.observed) for r in bad}
            what = _NOT_PASSING[kind]
            text = f"{len(bad)} {what}: {named(list(seen), seen)}"
        left_out = sorted(r.test_id for r in graded.results if r.kind == kind and r.excluded)
        if left_out:
            text += ("; " if text else "") + "flaky, left out: " + listed(left_out, 10)
        return text

    focused_detail = detail("fail_to_pass") or ("" if fail_to_pass else "no FAIL_TO_PASS test")
    unconfirmed = (
        "not rerun: FAIL_TO_PASS failed, so the reruns could not change the verdict"
        if not graded.focused_ok and not graded.regression_ok and not reruns
        else ""
    )
    return GradedTests(
        checks=(
            Check(
                name="focused_tests_passed",
                status="passed" if graded.focused_ok else "failed",
                detail=focused_detail,
            ),
            Check(
                name="regression_tests_passed",
                status="passed" if graded.regression_ok else "failed",
                detail="; ".join(
                    x for x in (detail("pass_to_pass"), describe(reruns), unconfirmed) if x
                ),
            ),
            untampered,
        ),
        details={
            **_test_details(runs, graded, excluded, reruns),
            "unstable_on_candidate": sorted(unstable),
        },
        outcomes=outcomes_of(runs),
    )


def untampered_check(runs: Sequence[TestRun]) -> Check:
    """Return ``harness_untampered`` for ``runs``: failed naming what the guard saw changed."""
    seen = list(dict.fromkeys(c for r in runs for c in r.tampering))
    return Check(
        name="harness_untampered",
        status="failed" if seen else "passed",
        detail="the candidate's code changed the test runner: " + "; ".join(seen) if seen else "",
    )


def outcomes_of(runs: Sequence[TestRun]) -> dict[str, TestOutcome]:
    """Return the last trustworthy run's outcomes, or an empty mapping."""
    ok = [r for r in runs if r.status == "ok"]
    return dict(ok[-1].outcomes) if ok else {}
