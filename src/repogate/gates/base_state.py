"""Gate E, the base state: is the task valid in the environment built at its base?

The check ``environment_reproduced`` passes only when, at the base with the hidden tests, the
tests import the project from the checkout under test (:mod:`repogate.oracles.imports`),
every FAIL_TO_PASS test fails and every PASS_TO_PASS test passes (after SWE-bench's validation of
its task instances), and the reference (gold) patch passes them in the same environment. Any of
them failing makes the task invalid here: an evaluator ``error``, never a verdict on the agent.
An environment that drifted since the base commit (an open requirement resolved to a later,
incompatible release) shows up as a reference that fails, named with its failing tests and the
resolved versions.

This module holds the gate's rules and its record; building the environment is
:mod:`repogate.environments`'s, and running the trees is the environment phase's
(:mod:`repogate.phases`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from repogate.environments import Environment, EnvironmentRecord, as_record
from repogate.oracles.graded_reads import TracedReads
from repogate.oracles.grading import BaseCheck, Observed, base_state_check, observe_ids
from repogate.oracles.junit import TestOutcome
from repogate.oracles.reruns import Rerun, flaky_ids
from repogate.receipt import Check, Observation
from repogate.vocabulary import ErrorKind

__all__ = [
    "BaseState",
    "confirmed_verdict",
    "foreign_reason",
    "invalid",
    "read_cached",
    "reference_verdict",
    "reproduced",
]


class BaseState(Observation):
    """Gate E's observation, with the typed facts later phases grade by.

    Attributes:
        flaky: tests whose outcome flipped at the base (between repeated runs or in reruns),
            sorted; left out of every later grading.
        xfailed: PASS_TO_PASS tests that XFAILed at the base, sorted; an XFAIL on the candidate
            leaves them as they were.
        xpassed: PASS_TO_PASS tests ``xpassed`` at the base (an XPASS under a mark the hidden
            tests do not declare), sorted; the same outcome on the candidate leaves them as
            they were.
        environment: the environment the check ran in; None only in a cached result, which is
            stored without it (its digest is part of the cache key).
        reads: what the graded tests and the product code read from the repository, traced on
            the reference or the base (:mod:`repogate.oracles.graded_reads`); None until traced
            (a result handed over by task validation is traced when first read).
    """

    flaky: tuple[str, ...]
    xfailed: tuple[str, ...]
    xpassed: tuple[str, ...] = ()
    environment: EnvironmentRecord | None = None
    reads: TracedReads | None = None


def read_cached(text: str, env: Environment) -> BaseState:
    """Parse a cached base-state result (JSON written from a :class:`BaseState`) for ``env``.

    Raises:
        pydantic.ValidationError: the text is not a base-state result of this version.
    """
    return BaseState.model_validate_json(text).model_copy(update={"environment": as_record(env)})


def reproduced(
    details: dict[str, Any],
    flaky: Collection[str],
    xfailed: Collection[str],
    env: Environment,
    xpassed: Collection[str] = (),
) -> BaseState:
    """The base state is as the contract says: ``environment_reproduced`` passes."""
    return BaseState(
        checks=(Check(name="environment_reproduced", status="passed"),),
        details=details,
        flaky=tuple(sorted(flaky)),
        xfailed=tuple(sorted(xfailed)),
        xpassed=tuple(sorted(xpassed)),
        environment=as_record(env),
    )


def invalid(
    env: Environment,
    why: str,
    details: Mapping[str, object] | None = None,
    flaky: Collection[str] = (),
    kind: ErrorKind = "invalid task",
) -> BaseState:
    """The task is invalid in ``env``: ``environment_reproduced`` is an ``error`` saying ``why``.

    ``kind`` is ``invalid task`` unless the cause was a run reaching its budget (``timeout``).
    """
    return BaseState(
        checks=(Check.error("environment_reproduced", why, kind),),
        details={"environment": env.describe(), **(details or {})},
        flaky=tuple(sorted(flaky)),
        xfailed=(),
        environment=as_record(env),
    )


def foreign_reason(found: Mapping[str, str]) -> str:
    """Say which project modules the tests import from outside the checkout ("" when none).

    Args:
        found: module name -> where it resolved (:func:`repogate.oracles.imports.foreign_imports`).
    """
    return "; ".join(
        f"the tests import {name} from {where}, outside the checkout under test (a copy "
        "installed in the environment, not the candidate's code); install the project editable "
        "(-e .) or from a layout the environment can redirect"
        for name, where in sorted(found.items())
    )


def to_rerun_at_base(
    outcomes: Mapping[str, TestOutcome],
    flips: set[str],
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str],
) -> dict[str, Observed]:
    """Return the ids with the wrong outcome at the base, each with it: they are rerun first.

    A PASS_TO_PASS test that does not pass, or a FAIL_TO_PASS test that does not fail, may be
    flaky: it is run again (:func:`repogate.gates.verification.rerun_state`) before the task is
    called invalid (:func:`confirmed_verdict`).

    Args:
        outcomes: the base run's outcomes by reported id.
        flips: ids already found flaky (they flipped between repeated runs).
        fail_to_pass: the contract's FAIL_TO_PASS ids.
        pass_to_pass: the contract's PASS_TO_PASS ids.
    """
    verdict = confirmed_verdict(outcomes, flips, fail_to_pass, pass_to_pass)
    observed, _matched, _invalid = observe_ids(
        outcomes, [*verdict.not_failing, *verdict.not_passing]
    )
    return observed


def confirmed_verdict(
    outcomes: Mapping[str, TestOutcome],
    flips: set[str],
    fail_to_pass: Sequence[str],
    pass_to_pass: Sequence[str],
    reruns: Sequence[Rerun] = (),
) -> BaseCheck:
    """Check the base state, leaving out the ids found flaky (between runs or on ``reruns``).

    An id with the wrong outcome that flips when rerun (:func:`to_rerun_at_base`) is flaky and
    left out, not a reason to call the task invalid.

    Args:
        outcomes: the base run's outcomes by reported id.
        flips: ids already found flaky (they flipped between repeated runs).
        fail_to_pass: the contract's FAIL_TO_PASS ids.
        pass_to_pass: the contract's PASS_TO_PASS ids.
        reruns: the records of the wrong ids' reruns at the base
            (:func:`repogate.oracles.reruns.records`).

    Returns:
        The verdict (:func:`repogate.oracles.grading.base_state_check`).
    """
    left_out = flips | flaky_ids(reruns)
    return base_state_check(
        outcomes,
        [t for t in fail_to_pass if t not in left_out],
        [t for t in pass_to_pass if t not in left_out],
    )


def reference_verdict(graded: Observation, env: Environment) -> tuple[str, dict[str, Any]]:
    """Say why the reference (gold) patch fails in ``env`` ("" when it passes), and the record.

    Args:
        graded: the reference graded as a candidate is
            (:func:`repogate.gates.verification.grade_tree`).
        env: the environment; its resolved versions are named when the reference fails.
    """
    details: dict[str, Any] = {"reference": {c.name: c.status for c in graded.checks}}
    bad = [c.detail for c in graded.checks if not c.passed]
    if not bad:
        return "", details
    pinned = [p for p in env.packages if "==" in p]
    more = f" and {len(pinned) - 40} more (in the receipt)" if len(pinned) > 40 else ""
    why = (
        f"the reference (gold) patch fails in the built environment: {'; '.join(bad)}; "
        f"resolved versions: {', '.join(pinned[:40]) + more or 'none recorded'}"
    )
    return why, {**details, "reference_failures": bad}
