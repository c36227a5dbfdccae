"""Gate R, requirements: every criterion, stated or implicit, is met by its linked oracles.

A criterion links oracles by name: a test id (``path::name``), ``generator:<name>``,
``command:<name>``, ``lockfile`` or ``release_notes``. It is recovered when every linked oracle
passed on this candidate; a criterion with no oracle cannot be shown, and fails. The agent's own
requirements receipt is compared with the contract (which implicit criteria it named, which of
its claims were assumptions of its own); the comparison is reported and never changes the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from repogate.contract import Criterion
from repogate.oracles.junit import TestOutcome, match_ids
from repogate.protocols import ClaimedRequirement
from repogate.receipt import Check, Observation, Status

ORACLE_CHECKS = {
    "lockfile": "dependency_policy_passed",
    "release_notes": "release_receipt_present",
}


def _named_status(oracle: str, checks: Mapping[str, Status]) -> Status | None:
    """The status of a named oracle, or None when this attempt has no such oracle.

    ``generator:<name>`` and ``command:<name>`` are looked up under those exact keys (the
    caller adds one per generator and command the contract declares), so a misspelled or
    undeclared name is unknown, never borrowed from another check.
    """
    if oracle.startswith(("generator:", "command:")):
        return checks.get(oracle)
    return checks.get(ORACLE_CHECKS[oracle], "skipped")


def criterion_status(
    criterion: Criterion, outcomes: Mapping[str, TestOutcome], checks: Mapping[str, Status]
) -> tuple[Status, list[str]]:
    """Return a criterion's status and the oracles that did not pass.

    Args:
        criterion: the contract's criterion.
        outcomes: test id -> outcome on the candidate (with hidden tests).
        checks: check name (or ``command:<name>``) -> status from this attempt's receipts.
    """
    if not criterion.oracles:
        return "failed", ["no linked oracle"]
    tests = [o for o in criterion.oracles if "::" in o]
    matched = match_ids(tests, outcomes) if tests else {}
    missing: list[str] = []
    errored = False
    for oracle in criterion.oracles:
        if "::" in oracle:
            hit = matched.get(oracle)
            if hit is None or outcomes[hit] != "passed":
                missing.append(f"{oracle} ({outcomes[hit] if hit else 'missing'})")
        elif oracle in ORACLE_CHECKS or oracle.startswith(("generator:", "command:")):
            status = _named_status(oracle, checks)
            errored |= status == "error"
            if status is None:
                missing.append(f"{oracle} (unknown oracle name: the contract declares none)")
            elif status != "passed":
                missing.append(f"{oracle} ({status})")
        else:
            missing.append(f"{oracle} (unknown oracle name)")
    if missing:
        return ("error" if errored else "failed"), missing
    return "passed", []


def compare_claims(
    criteria: Sequence[Criterion], claims: Sequence[ClaimedRequirement] | None
) -> dict[str, Any]:
    """Compare the agent's requirements receipt with the contract's criteria (reported only)."""
    if claims is None:
        return {"given": False}
    named = {c.criterion for c in claims if c.criterion}
    implicit = [c.id for c in criteria if c.kind == "implicit"]
    return {
        "given": True,
        "implicit_recovered": [i for i in implicit if i in named],
        "implicit_missed": [i for i in implicit if i not in named],
        "assumptions": [c.claim for c in claims if not c.criterion],
        "claims": [c.model_dump() for c in claims],
    }


def check_requirements(
    criteria: Sequence[Criterion],
    outcomes: Mapping[str, TestOutcome],
    checks: Mapping[str, Status],
    claims: Sequence[ClaimedRequirement] | None,
) -> Observation:
    """Decide ``requirements_recovered``: every criterion's linked oracles passed."""
    per: dict[str, dict[str, Any]] = {}
    for criterion in criteria:
        one, missing = criterion_status(criterion, outcomes, checks)
        per[criterion.id] = {"kind": criterion.kind, "status": one, "not_passed": missing}
    bad = [
        f"{cid} ({v['kind']}): {', '.join(v['not_passed'])}"
        for cid, v in per.items()
        if v["status"] != "passed"
    ]
    status: Status = (
        "error"
        if any(v["status"] == "error" for v in per.values())
        else "failed"
        if bad
        else "passed"
    )
    if not criteria:
        status, bad = "failed", ["the contract states no criterion"]
    check = (
        Check.error("requirements_recovered", "; ".join(bad), "other evaluator error")
        if status == "error"
        else Check(name="requirements_recovered", status=status, detail="; ".join(bad))
    )
    return Observation(
        checks=(check,),
        details={"criteria": per, "agent_claims": compare_claims(criteria, claims)},
    )
