"""Gate V, differential oracle: ``behaviour_matches_reference``.

Compares each function the candidate or the reference changed, called on the same
Hypothesis-generated inputs in both states (:mod:`repogate.oracles.differential`), and folds the
per-function outcomes into one check:

- ``failed``: some function differs; the detail names the function and the shortest
  distinguishing input with both outcomes (evidence, never a bare flag).
- ``passed``: none differs, and at least one function was compared on inputs that returned in
  both states; the detail gives the inputs compared and how many returned and raised (the
  others' reasons listed, a function whose every input raised among them).
- ``error``: nothing could be compared because a call timed out (the evaluator's budget, not a
  wrong patch).
- ``skipped`` (``error`` when the contract makes the check hard): nothing could be compared,
  each function ``not applicable`` or ``same`` only in raising on every input (the exception
  types agree, nothing returned: click-f634bd0176's 100 inputs all raised ``AttributeError``
  before the changed lines), each with its reason, said so in the detail.

Each function's record (``details.functions``) counts, per state, the inputs that returned and
those that raised.

The check is reported in every profile; it is hard only where the contract sets
``oracles.differential = "hard"`` (:func:`repogate.decision.hard_checks`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from repogate._counted import counted
from repogate.contract import valid_strategy_name
from repogate.oracles.differential import FunctionOutcome, Server, compare_function
from repogate.oracles.functions import Target
from repogate.receipt import Check, Observation
from repogate.sandbox import Session
from repogate.vocabulary import CheckName

NAME: CheckName = "behaviour_matches_reference"
MAX_FUNCTIONS = 12
"""At most this many changed functions are compared per attempt (the rest listed, not run)."""


def _fold(outcomes: Sequence[FunctionOutcome], hard: bool) -> Check:
    differs = [o for o in outcomes if o.outcome == "differs"]
    same = [o for o in outcomes if o.outcome == "same"]
    others = [f"{o.function}: {o.outcome} ({o.reason})" for o in outcomes if o.reason]
    if differs:
        first = differs[0]
        detail = (
            f"differs from the reference on {first.input}: the candidate {first.candidate}; "
            f"the reference {first.reference}"
        )
        if len(differs) > 1:
            detail += f" (and {len(differs) - 1} more function(s))"
        return Check(name=NAME, status="failed", detail=detail)
    # a function whose every input raised in both states agrees on nothing it returns
    returning = [o for o in same if o.candidate_returned and o.reference_returned]
    if returning:
        examples = sum(o.examples for o in returning)
        returned = sum(o.reference_returned for o in returning)
        raised = sum(o.reference_raised for o in returning)
        detail = (
            f"{len(returning)} function(s), {counted(examples, 'input')} in both states "
            f"({returned} returned, {raised} raised), 0 differences"
        )
        return Check(name=NAME, status="passed", detail="; ".join([detail, *others[:5]]))
    if any(o.outcome == "timed out" for o in outcomes):
        return Check.error(NAME, "timed out: " + "; ".join(others[:5]), "timeout")
    detail = "not applicable: " + ("; ".join(others[:5]) or "no changed function to call")
    return _not_applicable(detail, hard)


def _not_applicable(detail: str, hard: bool) -> Check:
    """Nothing compared: an ``other evaluator error`` where the check is hard, else ``skipped``."""
    if hard:
        return Check.error(NAME, detail, "other evaluator error")
    return Check(name=NAME, status="skipped", detail=detail)


def not_run(reason: str, hard: bool) -> Observation:
    """The check when the oracle did not run (no reference, the graded tests failed)."""
    return Observation(
        checks=(_not_applicable(f"not applicable: {reason}", hard),),
        details={"functions": [], "reason": reason},
    )


def check_behaviour(
    targets: Sequence[Target],
    literals: Sequence[Any],
    strategies: Mapping[str, Mapping[str, str]],
    start: tuple[Callable[[], Session], Callable[[], Session]],
    *,
    hard: bool,
    max_examples: int = 100,
    call_timeout_s: float = 10.0,
) -> Observation:
    """Compare every target in the candidate and the reference; return the check and the record.

    Args:
        targets: the changed functions (:func:`repogate.oracles.functions.changed_functions`).
        literals: the tests' literal values.
        strategies: the contract's named strategies, by function and parameter.
        start: opens the candidate's and the reference's call server.
        hard: the contract makes the check hard (not applicable is then an ``error``).
        max_examples: Hypothesis examples per function.
        call_timeout_s: the budget of one call.

    Returns:
        The observation: the check, and ``details.functions`` with each function's outcome.
    """
    bad = sorted(
        f"{fn}.{param} = {name!r}"
        for fn, params in strategies.items()
        for param, name in params.items()
        if not valid_strategy_name(name)
    )
    servers = (Server(start[0], call_timeout_s), Server(start[1], call_timeout_s))
    outcomes: list[FunctionOutcome] = []
    try:
        for target in targets[:MAX_FUNCTIONS]:
            named = {
                k: v for k, v in strategies.get(target.name, {}).items() if valid_strategy_name(v)
            }
            outcomes.append(compare_function(target, servers, literals, named, max_examples))
    finally:
        for server in servers:
            server.close()
    skipped = [t.name for t in targets[MAX_FUNCTIONS:]]
    return Observation(
        checks=(_fold(outcomes, hard),),
        details={
            "functions": [o.model_dump() for o in outcomes],
            "not_compared_over_budget": skipped,
            "strategies_refused": bad,
            "max_examples": max_examples,
        },
    )
