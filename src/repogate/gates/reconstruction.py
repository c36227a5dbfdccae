"""Gate E, reconstructed: how far the environment the agent supplied got (its rules and record).

With ``[environment] supplied_by = "agent"`` the agent leaves a recipe
(:mod:`repogate.environments.agent_recipe`); the reconstruction phase builds it at the base and
grades it in the stages of :data:`repogate.vocabulary.RECONSTRUCTION_STAGES`, in order, each only
after the one before passed: ``built``, ``imports``, ``collects``, ``reproduces``. The stages
follow the published grading of reconstructed environments: SWE-Cycle (activate, import,
collect), Repo2Run (the tests are runnable) and ExecutionAgent (the results are within a stated
deviation of the reference environment's; here a deviation of none).

A failure at any stage fails ``environment_reproduced``: the agent's fault, never an evaluator
``error`` (a missing or malformed recipe fails at ``built`` with the reason). Grading never uses
this environment: every later gate runs in the evaluator's, built from the contract's recipe.

This module holds the rules (which ids fail to collect, which outcomes differ) and the record;
building and running are the phase's (:mod:`repogate.phases`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

from repogate._model import FrozenModel
from repogate.oracles.grading import Observed, named, observe_ids
from repogate.oracles.junit import TestOutcome
from repogate.receipt import Check, Observation
from repogate.vocabulary import RECONSTRUCTION_STAGES, ReconstructionStage

__all__ = [
    "StageResult",
    "differing",
    "reconstruction",
    "top_level_packages",
    "uncollected",
]


class StageResult(FrozenModel):
    """One reconstruction stage as observed.

    Attributes:
        stage: the stage's name.
        status: ``passed`` or ``failed``; a stage after a failed one is not recorded.
        detail: the cause line when failed, what was checked when passed.
    """

    stage: ReconstructionStage
    status: Literal["passed", "failed"]
    detail: str = ""


def reconstruction(stages: Sequence[StageResult], details: Mapping[str, Any]) -> Observation:
    """The receipt's observation: ``environment_reproduced`` from the stages observed.

    Passed when every stage of :data:`~repogate.vocabulary.RECONSTRUCTION_STAGES` passed; else
    failed, its detail naming the first failed stage and its cause line. ``details`` gains
    ``stages`` (each stage's record) and ``reached`` (the last stage passed, or None).
    """
    passed = [s.stage for s in stages if s.status == "passed"]
    failed = next((s for s in stages if s.status == "failed"), None)
    record = {
        **details,
        "stages": [s.model_dump() for s in stages],
        "reached": passed[-1] if passed else None,
    }
    if failed is None and len(passed) == len(RECONSTRUCTION_STAGES):
        check = Check(
            name="environment_reproduced",
            status="passed",
            detail="the agent's environment reached every stage: " + ", ".join(passed),
        )
    else:
        why = (
            f"the agent's environment failed at {failed.stage}: {failed.detail}"
            if failed is not None
            else "the agent's environment was not graded past " + (passed[-1] if passed else "")
        )
        check = Check(name="environment_reproduced", status="failed", detail=why)
    return Observation(checks=(check,), details=record)


def top_level_packages(names: Mapping[str, Collection[str]]) -> tuple[str, ...]:
    """The checkout's top-level packages the ``imports`` stage imports, sorted.

    Args:
        names: each import root of the checkout (``.``, ``src``) to the folders right below it
            that hold an ``__init__.py``.

    Returns:
        Their names that are Python identifiers, leaving out test and documentation folders
        (``tests``, ``test_*``, ``testing``, ``docs``), which a project does not ship.
    """
    found = {
        name
        for folders in names.values()
        for name in folders
        if name.isidentifier()
        and not name.startswith("test")
        and name not in ("docs", "doc", "examples", "conftest")
    }
    return tuple(sorted(found))


def _observed(outcomes: Mapping[str, TestOutcome], ids: Sequence[str]) -> dict[str, Observed]:
    return observe_ids(outcomes, ids)[0]


def uncollected(
    reference: Mapping[str, TestOutcome],
    agent: Mapping[str, TestOutcome],
    ids: Sequence[str],
) -> str:
    """Say which graded ids collect in the evaluator's environment but not in the agent's ("").

    Args:
        reference: the evaluator's environment's outcomes at the base, hidden tests applied.
        agent: the agent's environment's outcomes on the same tree.
        ids: the graded ids (FAIL_TO_PASS then PASS_TO_PASS).
    """
    theirs, ours = _observed(reference, ids), _observed(agent, ids)
    lost = [
        i
        for i in ids
        if theirs[i] not in ("uncollected", "missing") and ours[i] in ("uncollected", "missing")
    ]
    if not lost:
        return ""
    return f"{len(lost)} graded test id(s) do not collect: {named(lost)}"


def differing(
    reference: Mapping[str, TestOutcome],
    agent: Mapping[str, TestOutcome],
    ids: Sequence[str],
    flaky: Collection[str],
) -> str:
    """Say which graded ids end differently in the agent's environment than in the evaluator's.

    Ids flaky at the base (gate E) are left out; any other difference counts (a deviation of
    none). Returns "" when none differs.
    """
    graded = [i for i in ids if i not in flaky]
    theirs, ours = _observed(reference, graded), _observed(agent, graded)
    changed = [i for i in graded if theirs[i] != ours[i]]
    if not changed:
        return ""
    moves = {i: f"{theirs[i]} -> {ours[i]}" for i in changed}
    return (
        f"{len(changed)} graded test(s) end differently than in the evaluator's environment: "
        f"{named(changed, moves)}"
    )
