"""FAIL_TO_PASS / PASS_TO_PASS grading, the base-state check, and flaky tests.

The rules follow SWE-bench's harness (``swebench/harness/grading.py``: ``test_passed``,
``test_failed``, ``get_eval_tests_report``), with two deliberate differences, both stricter:

- SWE-bench counts a test as passed when its status is PASSED or XFAIL, and as failed when it is
  FAILED, ERROR or absent from the log; a SKIPPED test is neither and silently drops out of both
  lists (and an empty list scores 1.0). Here a FAIL_TO_PASS test passes only when it ran and passed:
  skipped or missing is a failure, and an empty FAIL_TO_PASS list never makes ``focused_ok`` true.
- A skipped PASS_TO_PASS test is, by default, a regression (``skipped_regression="fail"``). A
  PASS_TO_PASS test passed at the base in this same environment (the base-state check makes sure),
  so a skip on the candidate was caused by the candidate (an ``importorskip`` of a module the patch
  broke, a skip condition the patch changed) and the evidence the test gave is gone.
  ``skipped_regression="ignore"`` restores SWE-bench's behaviour.

A test passes only when its body ran to completion (``passed``). An ``xfailed`` test's body raised,
however the xfail was reached (a mark, or ``pytest.xfail()`` called from the test, a fixture, a
conftest or the code under test), so:

- on the candidate, an XFAIL is never a FAIL_TO_PASS pass (SWE-bench counts ``XFAIL`` as passed,
  which is SWE-bench issue #654). A non-strict XPASS counts only when its xfail mark is the hidden
  tests' own (declared in a hidden test file; see :mod:`repogate.oracles._pytest_plugin`): one under
  a mark added at run time (a conftest the agent added, the code under test calling
  ``add_marker``, a hook) is ``xpassed``, never a pass, since whoever added the mark chose how the
  test's result is read (a non-strict mark put before a strict one turns a strict XPASS, a
  failure, into a pass). A strict XPASS is written as a failure;
- at the base, an XFAIL of a FAIL_TO_PASS test counts as failing (the body raised);
- a PASS_TO_PASS test that XFAILs at the base (an xfail-marked test in an imported list) and XFAILs
  again on the candidate is unchanged, not a regression (``base_xfailed``); one that passed at the
  base and XFAILs on the candidate is a regression. Likewise one that is ``xpassed`` at the base
  (there every mark is the base's or the hidden tests': the agent has no code there) is unchanged
  when ``xpassed`` again (``base_xpassed``), and a regression when it is ``xpassed`` only now.

An expected id that the run did not report is ``uncollected`` when its file, or a folder above it,
failed to collect (pytest reports the path as an ``error``; the ids in it, parametrized ones too,
never appear): it counts as failing, at the base as on the candidate (SWE-bench's ``test_failed``
counts ERROR and absent ids as failed). Otherwise it is ``missing`` and listed in ``invalid``: on
the base plus hidden tests such an id means the task names a test that does not exist (truncated,
renamed, a docstring instead of an id), an evaluator error, not an agent failure (see
:func:`base_state_check`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Literal

from repogate._counted import listed
from repogate._model import FrozenModel
from repogate.oracles.junit import TestOutcome, looks_truncated, match_ids, volatile_key

Observed = Literal[
    "passed", "failed", "error", "skipped", "xfailed", "xpassed", "uncollected", "missing"
]
"""A test's outcome (:data:`~repogate.oracles.junit.TestOutcome`), or why the run reported none:
``uncollected`` (its file or a folder above it failed to collect) or ``missing`` (no trace of it)."""
Kind = Literal["fail_to_pass", "pass_to_pass"]
_FAILING_AT_BASE: frozenset[Observed] = frozenset({"failed", "error", "xfailed", "uncollected"})
_PASSING_AT_BASE: frozenset[Observed] = frozenset({"passed", "xfailed", "xpassed"})
_WHY: dict[str, str] = {
    "xpassed": "xpassed: a non-strict XPASS under an xfail mark the hidden tests do not declare",
}


def label(seen: Observed) -> str:
    """Return ``seen`` as a check's detail shows it, with the reason when it is not plain."""
    return _WHY.get(seen, seen)


class TestResult(FrozenModel):
    """One expected test's result after a run.

    Attributes:
        test_id: the id as the contract names it.
        kind: whether it is a FAIL_TO_PASS or a PASS_TO_PASS test.
        observed: the run's outcome for it, or ``missing`` when the run did not report it.
        matched_id: the reported id it was matched to (differs from ``test_id`` only through the
            run-varying fallback of :func:`~repogate.oracles.junit.match_ids`), or None.
        ok: whether it counts as passed for its kind.
        excluded: True when the caller excluded it (flaky); it then counts for nothing.
    """

    __test__ = False

    test_id: str
    kind: Kind
    observed: Observed
    matched_id: str | None
    ok: bool
    excluded: bool = False


class Grading(FrozenModel):
    """The grade of one run against FAIL_TO_PASS and PASS_TO_PASS.

    Attributes:
        results: one entry per expected id, FAIL_TO_PASS first, in the contract's order.
        focused_ok: at least one non-excluded FAIL_TO_PASS test, and every one of them passed.
        regression_ok: every non-excluded PASS_TO_PASS test passed (skipped: see module docs).
        invalid: expected ids the run did not report at all, whose file did collect: on the base
            with hidden tests, this makes the task invalid.
        excluded: expected ids left out of the verdict (flaky), kept as a record.
    """

    results: tuple[TestResult, ...]
    focused_ok: bool
    regression_ok: bool
    invalid: tuple[str, ...]
    excluded: tuple[str, ...]


class BaseCheck(FrozenModel):
    """Whether the task is valid at its base state with the hidden tests applied.

    Attributes:
        valid: every FAIL_TO_PASS test fails, every PASS_TO_PASS test passes (or XFAILs), none
            is missing.
        not_failing: FAIL_TO_PASS ids that did not fail at the base (passed, skipped).
        not_passing: PASS_TO_PASS ids that did not pass at the base.
        nonexistent: expected ids the base run did not report, whose file did collect.
        reasons: one sentence per problem, for the evaluator-error record.
        uncollected: expected ids whose file failed to collect at the base (counted as failing).
        xfailed: PASS_TO_PASS ids that XFAIL at the base; an XFAIL on the candidate leaves them
            unchanged (see the module docstring).
        xpassed: PASS_TO_PASS ids that are ``xpassed`` at the base; the same outcome on the
            candidate leaves them unchanged.
    """

    valid: bool
    not_failing: tuple[str, ...]
    not_passing: tuple[str, ...]
    nonexistent: tuple[str, ...]
    reasons: tuple[str, ...]
    uncollected: tuple[str, ...] = ()
    xfailed: tuple[str, ...] = ()
    xpassed: tuple[str, ...] = ()


NAMED = 3
"""How many ids a reason names before it counts the rest (``and 4 more``)."""


def named(ids: Sequence[str], notes: Mapping[str, str] | None = None) -> str:
    """The first :data:`NAMED` of ``ids`` quoted as Python quotes them, the rest counted.

    Quoting with ``repr`` escapes every invisible character (a newline, a bidirectional override)
    as :func:`repogate.receipt.visible` does, so an id in a reason reads as the one line it is:
    ``'t.py::test_a', 't.py::test_b', 't.py::test_c' and 4 more``.

    Args:
        ids: the ids, in the order they are named.
        notes: a note said after an id, in parentheses (its outcome: ``'t.py::test_a'
            (failed)``); an id without one is said alone. Notes are the harness's words, said as
            given.

    Returns:
        The ids as a reason names them; ``""`` for none.
    """
    said = notes or {}
    return listed([f"{t!r} ({said[t]})" if t in said else repr(t) for t in ids], NAMED)


def _test_file(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def collection_failed(test_id: str, outcomes: Mapping[str, TestOutcome]) -> bool:
    """Return True when the file of ``test_id``, or a folder above it, failed to collect.

    pytest reports a collection error under the path of what failed: the test file (an import
    error in it) or a folder (a ``conftest.py`` there that cannot be imported).
    """
    parts = _test_file(test_id).split("/")
    return any(outcomes.get("/".join(parts[:i])) == "error" for i in range(len(parts), 0, -1))


def observe_ids(
    outcomes: Mapping[str, TestOutcome], expected: Sequence[str]
) -> tuple[dict[str, Observed], dict[str, str | None], list[str]]:
    """Look the expected ids up in a run's outcomes.

    Args:
        outcomes: node id -> outcome of one run.
        expected: the ids to look up.

    Returns:
        ``(observed, matched, invalid)``: each expected id's :data:`Observed` value, the reported
        id it matched (see :func:`~repogate.oracles.junit.match_ids`) or None, and the ids that
        are ``missing`` (not reported, in a file that collected).
    """
    matched = match_ids(expected, outcomes)
    observed: dict[str, Observed] = {}
    invalid: list[str] = []
    for test_id in expected:
        hit = matched[test_id]
        if hit is not None:
            observed[test_id] = outcomes[hit]
        elif collection_failed(test_id, outcomes):
            observed[test_id] = "uncollected"
        else:
            observed[test_id] = "missing"
            invalid.append(test_id)
    return observed, matched, invalid


def passes(
    kind: Kind,
    seen: Observed,
    *,
    xfailed_at_base: bool = False,
    xpassed_at_base: bool = False,
    skipped_regression: Literal["fail", "ignore"] = "fail",
) -> bool:
    """Return whether an outcome on the candidate counts as passed for a test of ``kind``.

    Only ``passed`` (a completed body, any xfail mark on it the hidden tests' own) passes a
    FAIL_TO_PASS test. A PASS_TO_PASS test also passes when it XFAILs and XFAILed at the base too
    (``xfailed_at_base``: unchanged), is ``xpassed`` and was at the base too (``xpassed_at_base``),
    or is skipped and ``skipped_regression="ignore"`` (SWE-bench's behaviour).
    """
    if seen == "passed":
        return True
    if kind == "fail_to_pass":
        return False
    return (
        (seen == "xfailed" and xfailed_at_base)
        or (seen == "xpassed" and xpassed_at_base)
        or (seen == "skipped" and skipped_regression == "ignore")
    )


def grade(
    outcomes_after: Mapping[str, TestOutcome],
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str],
    *,
    exclude: Collection[str] = (),
    skipped_regression: Literal["fail", "ignore"] = "fail",
    base_xfailed: Collection[str] = (),
    base_xpassed: Collection[str] = (),
) -> Grading:
    """Grade a run's outcomes against FAIL_TO_PASS and PASS_TO_PASS (SWE-bench, made stricter).

    Args:
        outcomes_after: node id -> outcome of the run on the candidate (with hidden tests).
        fail_to_pass: ids that must pass now (they failed at the base).
        pass_to_pass: ids that passed at the base and must still pass.
        exclude: ids to leave out of the verdict (flaky ones, see :func:`flaky`); recorded.
        skipped_regression: ``fail`` (default) counts a skipped PASS_TO_PASS test as a
            regression; ``ignore`` drops it from the verdict, as SWE-bench does.
        base_xfailed: PASS_TO_PASS ids that XFAILed at the base (:attr:`BaseCheck.xfailed`); an
            XFAIL on the candidate leaves them unchanged.
        base_xpassed: PASS_TO_PASS ids ``xpassed`` at the base (:attr:`BaseCheck.xpassed`).

    Returns:
        The per-id results, ``focused_ok``, ``regression_ok``, the ``invalid`` ids and the
        ``excluded`` ids.
    """
    expected = [*fail_to_pass, *pass_to_pass]
    observed, matched, invalid = observe_ids(outcomes_after, expected)
    skip = set(exclude)
    xfailed_before = set(base_xfailed)
    results: list[TestResult] = []
    groups: tuple[tuple[Kind, Sequence[str]], ...] = (
        ("fail_to_pass", fail_to_pass),
        ("pass_to_pass", pass_to_pass),
    )
    for kind, ids in groups:
        for test_id in ids:
            seen = observed[test_id]
            ok = passes(
                kind,
                seen,
                xfailed_at_base=test_id in xfailed_before,
                xpassed_at_base=test_id in base_xpassed,
                skipped_regression=skipped_regression,
            )
            results.append(
                TestResult(
                    test_id=test_id,
                    kind=kind,
                    observed=seen,
                    matched_id=matched[test_id],
                    ok=ok,
                    excluded=test_id in skip,
                )
            )
    focused = [r for r in results if r.kind == "fail_to_pass" and not r.excluded]
    regression = [r for r in results if r.kind == "pass_to_pass" and not r.excluded]
    return Grading(
        results=tuple(results),
        focused_ok=bool(focused) and all(r.ok for r in focused),
        regression_ok=all(r.ok for r in regression),
        invalid=tuple(invalid),
        excluded=tuple(t for t in expected if t in skip),
    )


def base_state_check(
    outcomes_at_base: Mapping[str, TestOutcome],
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str],
) -> BaseCheck:
    """Check the task at its base state plus hidden tests: FAIL_TO_PASS fail, PASS_TO_PASS pass.

    A task that breaks this rule cannot grade anyone (SWE-bench validates its instances the same
    way): the result is an evaluator error, never an agent failure. FAIL_TO_PASS "fails" means
    ``failed``, ``error``, ``xfailed`` (the body raised) or ``uncollected`` (its file does not
    import yet, typically because it imports a name the fix adds); SWE-bench's ``test_failed``
    minus the missing case, which is reported apart as ``nonexistent``. PASS_TO_PASS "passes"
    means ``passed``, or ``xfailed`` (kept in ``xfailed``: it must XFAIL the same on the candidate),
    or ``xpassed`` (kept in ``xpassed``); an ``xpassed`` FAIL_TO_PASS test does not fail (its body
    completed).

    Args:
        outcomes_at_base: node id -> outcome of the run at the base with hidden tests applied.
        fail_to_pass: the contract's FAIL_TO_PASS ids.
        pass_to_pass: the contract's PASS_TO_PASS ids.

    Returns:
        The check, with the offending ids and a sentence per problem.
    """
    observed, _matched, invalid = observe_ids(outcomes_at_base, [*fail_to_pass, *pass_to_pass])
    # Missing because its file failed to collect (a new test importing the name the change adds):
    # failed at the base, as SWE-bench counts a test absent from the log. Missing otherwise: the
    # id does not exist.
    nonexistent = tuple(invalid)
    not_failing = tuple(
        t for t in fail_to_pass if observed[t] != "missing" and observed[t] not in _FAILING_AT_BASE
    )
    not_passing = tuple(
        t for t in pass_to_pass if t not in nonexistent and observed[t] not in _PASSING_AT_BASE
    )
    reasons: list[str] = []
    if not fail_to_pass:
        reasons.append("the task names no FAIL_TO_PASS test, so nothing checks the change")
    if nonexistent:
        reasons.append(
            f"{len(nonexistent)} expected test id(s) do not exist at the base: {named(nonexistent)}"
        )
    cut = [t for t in nonexistent if looks_truncated(t)]
    if cut:
        reasons.append(
            f"{len(cut)} of them cut at a blank as SWE-bench's log parser cuts ids, matching no "
            f"test of that form: {named(cut)}"
        )
    seen = {t: label(o) for t, o in observed.items()}
    if not_failing:
        reasons.append(
            f"{len(not_failing)} FAIL_TO_PASS test(s) do not fail at the base: "
            f"{named(not_failing, seen)}"
        )
    if not_passing:
        reasons.append(
            f"{len(not_passing)} PASS_TO_PASS test(s) do not pass at the base: "
            f"{named(not_passing, seen)}"
        )
    return BaseCheck(
        valid=not reasons,
        not_failing=not_failing,
        not_passing=not_passing,
        nonexistent=nonexistent,
        reasons=tuple(reasons),
        uncollected=tuple(t for t in observed if observed[t] == "uncollected"),
        xfailed=tuple(t for t in pass_to_pass if observed[t] == "xfailed"),
        xpassed=tuple(t for t in pass_to_pass if observed[t] == "xpassed"),
    )


def confirm_in_reference(
    check: BaseCheck, outcomes_in_reference: Mapping[str, TestOutcome]
) -> BaseCheck:
    """Settle whether the ids of files that failed to collect at the base exist at all.

    At the base such an id cannot be seen (its module does not import), so a misspelled id there
    would pass for a failing one. The reference (gold) state with the hidden tests shows it: an id
    its run does not report, from a file that collected there, does not exist, and the task is
    invalid as for any nonexistent id. An id whose file fails to collect in the reference too
    stays counted as failing (nothing shows it is wrong).

    Args:
        check: the base-state check (:func:`base_state_check`).
        outcomes_in_reference: node id -> outcome of the reference's run of those files.

    Returns:
        ``check`` with the ids found missing moved to ``nonexistent`` (and a reason added).
    """
    if not check.uncollected:
        return check
    _observed, _matched, missing = observe_ids(outcomes_in_reference, check.uncollected)
    if not missing:
        return check
    reasons = [
        *check.reasons,
        f"{len(missing)} expected test id(s) do not exist in the reference state "
        f"(their file does not import at the base): {named(missing)}",
    ]
    return check.model_copy(
        update={
            "valid": False,
            "nonexistent": (*check.nonexistent, *missing),
            "uncollected": tuple(t for t in check.uncollected if t not in missing),
            "reasons": tuple(reasons),
        }
    )


def flaky(runs: Sequence[Mapping[str, TestOutcome]]) -> set[str]:
    """Return the ids whose outcome differs between repeated runs of the same state.

    Ids are compared through :func:`~repogate.oracles.junit.volatile_key`, so an id that embeds a
    run-varying value is the same test in every run. An id reported in some runs and not in others
    counts as differing (absent is an outcome). Callers leave these out of the verdict
    (``grade(..., exclude=...)``) and keep the record.

    Args:
        runs: the outcomes of two or more runs; fewer than two runs finds nothing.

    Returns:
        Every reported id (in any run) whose masked key had more than one outcome.
    """
    if len(runs) < 2:
        return set()
    per_run: list[dict[str, frozenset[TestOutcome]]] = []
    for run in runs:
        keyed: dict[str, set[TestOutcome]] = {}
        for test_id, outcome in run.items():
            keyed.setdefault(volatile_key(test_id), set()).add(outcome)
        per_run.append({k: frozenset(v) for k, v in keyed.items()})
    keys: set[str] = set().union(*per_run)
    unstable = {k for k in keys if len({run.get(k, frozenset()) for run in per_run}) > 1}
    return {t for run in runs for t in run if volatile_key(t) in unstable}
