"""Typed values read back from stored receipts: the one place a receipt's details are parsed.

Phases hand each other typed values (:class:`repogate.attempt.AttemptProgress`); a receipt's
``details`` are the human and JSON record. Readers of a finished run (``run --json``) that need a
value from that record parse it here, validated, so a renamed key is an error, never an empty read.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import TypeAdapter

from repogate.oracles.grading import TestResult
from repogate.protocols import Proposal
from repogate.receipt import Receipt

_RESULTS = TypeAdapter(tuple[TestResult, ...])


def recorded_proposal(receipts: Sequence[Receipt]) -> Proposal | None:
    """Return the agent's proposal as the ``propose`` receipt recorded it (None: no such receipt).

    Raises:
        pydantic.ValidationError: the receipt's ``proposal`` is not a proposal.
    """
    found = [r for r in receipts if r.gate == "propose" and "proposal" in r.details]
    return Proposal.model_validate(found[-1].details["proposal"]) if found else None


def recorded_results(receipts: Sequence[Receipt]) -> tuple[TestResult, ...]:
    """Return the graded tests' results of the last test run (gate ``V``); empty when none ran.

    Raises:
        pydantic.ValidationError: the receipt's ``results`` are not test results.
    """
    runs = [r for r in receipts if r.gate == "V"]
    return _RESULTS.validate_python(runs[-1].details.get("results", ())) if runs else ()
