"""Gate V's regression step: every test that passed at the base must still pass.

SWE-bench's PASS_TO_PASS lists only tests of the test files the fix's test patch touches, so a
patch that breaks a neighbouring file's tests passes its grading. Here the regression set is, by
default, every test that passed in the base's whole-suite run (:mod:`repogate.oracles.base_suite`),
minus tests known to flip; the tests a change can affect are selected from per-test coverage
(:mod:`repogate.oracles.selection`), or all of them when selection cannot be trusted. A contract
may narrow the set to the declared ids (``oracles.regression = "declared"``, SWE-bench's rule);
the narrowing is recorded in this receipt and shown in the check's detail.

A selected test that does not pass on the candidate is run twice more, alone. One that passes alone
is run again with the same selection as the run where it failed (the same ids, or the same files:
:func:`next_run`), up to twice, stopping at its first pass: only a pass there marks it flaky,
excluded from the verdict with a record and named in the check's detail. One that fails with the
selection every time and passes alone is order-dependent on the candidate (red team: an ``add()``
wrong only when another test module is loaded failed in the whole-suite run, passed alone and
was excused as flaky): it is charged. A failure that reproduces fails ``regression_tests_passed``. Every run is on a fresh tree of the candidate, never one that earlier
test code wrote (:func:`repogate.gates.graded_trees.fresh_tree`), so a failure kept away by a file
an earlier run left in the checkout is not called flaky.

What only the base's passing tests read is their oracle too: a patch changing a data file that
only test code opened in the base's whole-suite run (the guard's read trace) fails
``regression_tests_passed`` (a broken test hidden by rewriting its table), unless gate I already
refused it as the graded tests' (:mod:`repogate.gates.graded_oracle`). So does a data file the
patch adds that the selected tests open when run on the base with it
(:func:`repogate.phases._added_reads.suite_added_reads`, passed in ``edited``).

The step is data in, data out, as the rerun policy is (:mod:`repogate.oracles.reruns`):
:func:`start` opens the record, :func:`next_run` names the run to make next (a :class:`RunRequest`,
None when done), :func:`seen` adds the run the caller made, and :func:`grade` closes it into the
receipt's observation. The runs themselves are the caller's
(:func:`repogate.phases.regressions`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from repogate._counted import counted
from repogate.gates.graded_oracle import GradedOracle, graded_edits
from repogate.gates.verification import untampered_check
from repogate.git import ChangedPath
from repogate.oracles.base_suite import BaseSuite
from repogate.oracles.grading import named
from repogate.oracles.junit import TestOutcome, match_ids
from repogate.oracles.pytest_runner import TestRun
from repogate.oracles.selection import Selection
from repogate.receipt import Check, Observation
from repogate.vocabulary import CheckName, ErrorKind

RegressionScope = Literal["base-passing", "declared"]

CHECK: CheckName = "regression_tests_passed"
RERUNS = 2
NARROWED = 'regression set narrowed by the contract to the declared PASS_TO_PASS (oracles.regression = "declared")'


def narrowed() -> Observation:
    """The record of a contract that narrows the regression set to the declared ids."""
    return Observation(
        checks=(Check(name=CHECK, status="passed", detail=NARROWED),),
        details={"scope": "declared", "narrowed_by": "contract"},
    )


def scope_text(selected: int, passing: int, whole_because: Sequence[str] | None) -> str:
    """The regression set's scope as the check's detail says it, zero and one read as English.

    Args:
        selected: base-passing tests (beyond the graded ids) run on the candidate.
        passing: base-passing tests beyond the graded ids.
        whole_because: why every one of them runs (coverage could not select), None when
            coverage selected them.

    Returns:
        e.g. ``885 of 1646 base-passing tests selected beyond the graded ids``, ``no
        base-passing tests beyond the graded ids``, ``all 7 base-passing tests beyond the graded
        ids (setup.cfg changed (it configures or installs the tests))``.
    """
    tests, beyond = "base-passing tests", "beyond the graded ids"
    said = {0: f"no {tests} {beyond}", 1: f"the one base-passing test {beyond}"}
    if whole_because is None:
        if passing == 1:
            return said[1] + (", selected" if selected else ", not selected")
        if passing == 0:
            return said[0]
        if selected:
            return f"{selected} of {passing} {tests} selected {beyond}"
        return f"none of the {passing} {tests} {beyond} selected"
    scope = said.get(selected, f"all {selected} {tests} {beyond}")
    return f"{scope} ({'; '.join(whole_because)})" if whole_because else scope


def failing_text(failing: Sequence[str], outcomes: Mapping[str, str]) -> str:
    """Say which base-passing tests no longer pass on the candidate, each with its outcome.

    Args:
        failing: the ids, in the order they are named (at least one).
        outcomes: each id's outcome on the candidate (``failed``, ``error``, ``missing``...).

    Returns:
        e.g. ``2 tests passed at the base, not on the candidate: 't/a.py::test_2' (failed),
        't/b.py::test_3' (error)``; past three ids the rest are counted (``and 4 more``), as
        :func:`repogate.oracles.grading.named` names them.
    """
    return (
        f"{counted(len(failing), 'test')} passed at the base, not on the candidate: "
        f"{named(failing, outcomes)}"
    )


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


@dataclass(frozen=True)
class RunRequest:
    """One run the regression step asks for.

    Attributes:
        ids: the test ids to run.
        label: the run's name: ``selected``, ``unfiltered``, ``rerun0``, ``rerun1``,
            ``rerun-same-<where>-<n>`` (the selection ``<where>`` again: ``selected``,
            ``unfiltered`` or ``graded``), ``base-alone`` or ``base-same-<where>`` (that selection
            at the base) (its report folder is named after it).
        filtered: True to run the ids alone; False to run their files whole (ids the filter lost).
        at_base: True to run on a fresh tree of the base (hidden tests applied), else on one of
            the candidate.
    """

    ids: tuple[str, ...]
    label: str
    filtered: bool = True
    at_base: bool = False


@dataclass(frozen=True)
class Regressions:
    """The regression step's record so far; made by :func:`start`, grown by :func:`seen`.

    Attributes:
        suite: the base's whole-suite record.
        selection: the base-passing tests the change can affect (or all of them).
        chosen: the selected ids beyond the excluded ones, in selection order.
        to_run: the chosen ids not already observed on this tree.
        observed: outcome per id on the candidate: the graded run's, then the selected runs'.
        runs: each run made so far, with what asked for it, in order.
        base_runs: whether a reproducible failure is run at the base (order-dependent tests).
        graded: the graded ids, whose files the graded run ran (the selection ``observed``'s
            first outcomes come from; run again, files whole, to confirm a flip alone there).
    """

    suite: BaseSuite
    selection: Selection
    chosen: tuple[str, ...]
    to_run: tuple[str, ...]
    observed: Mapping[str, TestOutcome]
    runs: tuple[tuple[RunRequest, TestRun], ...] = ()
    base_runs: bool = True
    graded: tuple[str, ...] = ()

    def made(self, *labels: str) -> list[TestRun]:
        """Return the runs made under ``labels`` (every run when none is given), in order."""
        return [run for ask, run in self.runs if not labels or ask.label in labels]

    def broken(self) -> list[TestRun]:
        """Return the selected runs that broke (not ``ok``, no outcome): nothing is rerun then."""
        return [
            r for r in self.made("selected", "unfiltered") if r.status != "ok" and not r.outcomes
        ]

    def failing(self) -> list[str]:
        """Return the chosen ids that did not pass in the selected runs, in order."""
        seen = _observe(self.chosen, self.observed)
        return [t for t in self.chosen if seen[t] != "passed"]

    def passed_alone(self) -> list[str]:
        """Return the failing ids that passed in a rerun alone, in order."""
        alone = self.made(*(f"rerun{n}" for n in range(RERUNS)))
        return [
            t
            for t in self.failing()
            if any(_observe([t], r.outcomes)[t] == "passed" for r in alone)
        ]

    def failed_in(self, test_id: str) -> Where:
        """Return the selection ``test_id`` was observed in, as ``observed`` holds it.

        The unfiltered run's outcome overrides the selected run's, and the graded run's
        (``observed`` before any regression run) is the one when neither reported the id.
        """
        for where in ("unfiltered", "selected"):
            for run in self.made(where):
                if _observe([test_id], run.outcomes)[test_id] != "missing":
                    return where
        return "graded"

    def context(self, where: Where) -> RunRequest:
        """Return the run that repeats the selection ``where`` (its ids, filtered as it was)."""
        label = f"rerun-same-{where}-{len(self.made(*_again(where)))}"
        if where == "graded":
            return RunRequest(self.graded, label, filtered=False)
        ask = next(a for a, _ in self.runs if a.label == where)
        return RunRequest(ask.ids, label, filtered=ask.filtered)

    def flaky(self) -> list[str]:
        """Return the ids that passed alone and then with the selection they failed in, in order."""
        return [
            t
            for t in self.passed_alone()
            if any(
                _observe([t], r.outcomes)[t] == "passed"
                for r in self.made(*_again(self.failed_in(t)))
            )
        ]

    def pending_again(self) -> list[str]:
        """Return the ids that passed alone and not yet with their selection, in order."""
        flaky = set(self.flaky())
        return [t for t in self.passed_alone() if t not in flaky]

    def order_dependent(self) -> list[str]:
        """Return the ids that passed alone and failed every usable rerun with their selection."""
        flaky = set(self.flaky())
        return [
            t
            for t in self.passed_alone()
            if t not in flaky
            and any(r.status == "ok" for r in self.made(*_again(self.failed_in(t))))
        ]

    def alone_at_base(self) -> list[str]:
        """Return the reproducible failures that did not pass alone at the base either."""
        return [
            t
            for ask, run in self.runs
            if ask.label == "base-alone" and run.status == "ok"
            for t, o in _observe(ask.ids, run.outcomes).items()
            if o != "passed"
        ]

    def with_selection_at_base(self) -> list[str]:
        """Return the order-dependent ids that did not pass with their selection at the base."""
        return [
            t
            for t in self.order_dependent()
            for ask, run in self.runs
            if ask.label == f"base-same-{self.failed_in(t)}" and run.status == "ok"
            if _observe([t], run.outcomes)[t] != "passed"
        ]

    def reproducible(self) -> list[str]:
        """Return the failing ids not found flaky, in order (order-dependent ones included)."""
        flaky = set(self.flaky())
        return [t for t in self.failing() if t not in flaky]


Where = Literal["selected", "unfiltered", "graded"]
"""The selection a failing id was first seen failing in (the graded run's, or a regression run's)."""


def _again(where: Where) -> tuple[str, ...]:
    return tuple(f"rerun-same-{where}-{n}" for n in range(RERUNS))


def start(
    suite: BaseSuite,
    selection: Selection,
    already: Mapping[str, TestOutcome],
    exclude: Collection[str],
    *,
    base_runs: bool = True,
    graded: Sequence[str] = (),
) -> Regressions:
    """Open the regression step's record.

    Args:
        suite: the base's whole-suite record.
        selection: the base-passing tests the change can affect (or all of them).
        already: outcomes the graded run already observed on this tree (not run again).
        exclude: ids left out of the regression set: the graded FAIL_TO_PASS / PASS_TO_PASS
            ids (graded apart) and tests that flipped at the base.
        base_runs: run a failure that reproduces on the candidate alone at the base too; one that
            fails there as well (an order-dependent test: it passed in the base's whole-suite run,
            not alone) is left out and recorded as ``failing_alone_at_base``, as gate V's reruns
            charge a PASS_TO_PASS failure only when the base passes it. Likewise an order-dependent
            failure's selection is run at the base, and one failing there too is left out and
            recorded as ``failing_with_selection_at_base``.
        graded: the graded ids, whose files the graded run ran: an id of ``already`` that
            failed there and passes alone is run with their files again before it is flaky.
    """
    skip = set(exclude)
    chosen = tuple(t for t in selection.tests if t not in skip)
    to_run = tuple(t for t in chosen if t not in already)
    return Regressions(
        suite, selection, chosen, to_run, dict(already), base_runs=base_runs, graded=tuple(graded)
    )


def next_run(step: Regressions) -> RunRequest | None:
    """Return the run to make next, or None when the step has all it needs.

    In order: the ids not yet observed, alone; those the filter lost (ids spelled differently),
    with their files whole; the failures, :data:`RERUNS` times alone; those that passed alone,
    with the selection they failed in (:meth:`Regressions.context`), up to :data:`RERUNS` times,
    stopping once each passed there; the failures that reproduced alone, alone at the base; the
    selection of those that failed with it every time and passed alone (order-dependent on the
    candidate), at the base. Nothing when the base suite gave no usable report, and no rerun once a selected run broke.
    """
    if step.suite.status != "ok":
        return None
    labels = [ask.label for ask, _ in step.runs]
    if step.to_run and "selected" not in labels:
        return RunRequest(step.to_run, "selected")
    selected = step.made("selected")
    if selected and selected[-1].status == "ok" and "unfiltered" not in labels:
        lost = tuple(t for t, o in _observe(step.to_run, step.observed).items() if o == "missing")
        if lost:
            return RunRequest(lost, "unfiltered", filtered=False)
    failing = tuple(step.failing())
    if not failing or step.broken():
        return None
    reruns = len(step.made(*(f"rerun{n}" for n in range(RERUNS))))
    if reruns < RERUNS:
        return RunRequest(failing, f"rerun{reruns}")
    for where in dict.fromkeys(step.failed_in(t) for t in step.pending_again()):
        if where == "graded" and not step.graded:
            continue  # no selection to repeat: the failure stands
        again = step.made(*_again(where))
        if len(again) < RERUNS and all(r.status == "ok" for r in again):
            return step.context(where)
    alone = set(step.passed_alone())
    still = tuple(t for t in step.reproducible() if t not in alone)
    if still and step.base_runs and "base-alone" not in labels:
        return RunRequest(still, "base-alone", at_base=True)
    if not step.base_runs:
        return None
    for where in dict.fromkeys(step.failed_in(t) for t in step.order_dependent()):
        if f"base-same-{where}" not in labels:
            return replace(step.context(where), label=f"base-same-{where}", at_base=True)
    return None


def seen(step: Regressions, ask: RunRequest, run: TestRun) -> Regressions:
    """Return ``step`` with ``run``, made as ``ask`` asked, added (its outcomes observed)."""
    observed = step.observed
    if ask.label in ("selected", "unfiltered"):
        observed = {**observed, **run.outcomes}
    return replace(step, observed=observed, runs=(*step.runs, (ask, run)))


def grade(step: Regressions, edited: Sequence[str] = ()) -> Observation:
    """Grade the regression step's runs (once :func:`next_run` asks for none).

    Args:
        step: the record, every run asked for made.
        edited: data files only the base suite's tests read that the candidate changed
            (:func:`suite_oracle_edits`): each fails the check.

    Returns:
        ``regression_tests_passed``: ``error`` when the base's whole suite gave no trustworthy
        report (the base behaviour is unknown); ``failed`` naming every selected test that
        no longer passes, reproducibly; ``passed`` otherwise. Details record the scope, the
        selection and its fallback reasons, what ran, and the flaky tests excluded.
    """
    suite, selection, chosen = step.suite, step.selection, step.chosen
    details: dict[str, Any] = {"scope": "base-passing", "base_suite_status": suite.status}
    if suite.status != "ok":
        why = (
            f"the base's whole suite gave no usable report ({suite.reason}); fix the environment "
            'or narrow the contract with oracles.regression = "declared"'
        )
        kind: ErrorKind = "timeout" if suite.timed_out else "other evaluator error"
        return Observation(checks=(Check.error(CHECK, why, kind),), details=details)
    runs = step.made()
    broken = step.broken()
    outcome = _observe(chosen, step.observed)
    alone_at_base = step.alone_at_base()
    same_at_base = step.with_selection_at_base()
    left_out = {*alone_at_base, *same_at_base}
    failing = [t for t in step.reproducible() if t not in left_out]
    order = [t for t in step.order_dependent() if t not in left_out]
    flaky = step.flaky()
    details.update(
        base_passing=len(suite.passing),
        selection=selection.model_dump(exclude={"tests"}),
        selected=len(chosen),
        ran=len(step.to_run),
        run_seconds=round(sum(r.execution.duration_s for r in runs), 3),
        runs=[{"status": r.status, "reason": r.reason, "collected": r.collected} for r in runs],
        failing={t: outcome[t] for t in failing},
        flaky_excluded=sorted(flaky),
        order_dependent_on_candidate=order,
        failing_alone_at_base=sorted(alone_at_base),
        failing_with_selection_at_base=sorted(same_at_base),
        coverage=suite.coverage is not None,
        coverage_reason=suite.coverage_reason,
        base_passing_without_coverage=len(suite.passing_only_plainly),
        base_suite_runs=[r.kind for r in suite.runs],
        base_suite_reads="traced"
        if suite.reads is not None
        else "not traced: data files only the base's passing tests read are not checked",
    )
    scope = scope_text(
        len(chosen), len(suite.passing), selection.reasons if selection.whole else None
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
    plain = [t for t in failing if t not in order]
    if plain:
        problems.append(failing_text(plain, outcome))
    if order:
        problems.append(order_text(order, outcome))
    said = excluded_text(flaky, alone_at_base, same_at_base)
    if problems:
        details["oracle_edits"] = list(edited)
        detail = f"{'; '.join(problems)} [{scope}]{said}"
        return Observation(
            checks=(Check(name=CHECK, status="failed", detail=detail),), details=details
        )
    return Observation(
        checks=(Check(name=CHECK, status="passed", detail=scope + said),), details=details
    )


def order_text(ids: Sequence[str], outcomes: Mapping[str, str]) -> str:
    """Say which base-passing tests fail with their selection on the candidate and pass alone.

    Args:
        ids: the ids, in the order they are named (at least one).
        outcomes: each id's outcome with the selection on the candidate.

    Returns:
        e.g. ``1 test fails with the whole selection, passes alone (order-dependent on the
        candidate): 'tests/test_add.py::test_add' (failed)``.
    """
    return (
        f"{counted(len(ids), 'test')} {'fails' if len(ids) == 1 else 'fail'} with the whole "
        f"selection, {'passes' if len(ids) == 1 else 'pass'} alone (order-dependent on the "
        f"candidate): {named(ids, outcomes)}"
    )


def excluded_text(
    flaky: Sequence[str], alone_at_base: Sequence[str], same_at_base: Sequence[str] = ()
) -> str:
    """Say the tests left out of the verdict and why, for the end of the check's detail.

    Args:
        flaky: ids that failed once and passed on a rerun with the same selection.
        alone_at_base: ids that failed on the candidate and alone at the base too.
        same_at_base: order-dependent ids that failed with their selection at the base too.

    Returns:
        ``""`` when none is left out, else e.g. ``; left out as flaky (failed, then passed with
        the same selection): 'a.py::test_x'; left out: fail alone at the base too
        (order-dependent at the base): 'b.py::test_y'``.
    """
    said = ""
    if flaky:
        said += "; left out as flaky (failed, then passed with the same selection): "
        said += named(sorted(flaky), {})
    if alone_at_base:
        said += "; left out: fail alone at the base too (order-dependent at the base): "
        said += named(sorted(alone_at_base), {})
    if same_at_base:
        said += "; left out: fail with the same selection at the base too: "
        said += named(sorted(same_at_base), {})
    return said
