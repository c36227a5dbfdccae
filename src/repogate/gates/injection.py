"""What an attempt on an injected task shows: did the agent find the authoritative source?

For a contract ``repogate tasks vary --inject`` derived (:class:`~repogate.contract.Derivation`),
the receipt ``V-injection`` records the seed's two findings for failure injection (Gate V: "record
whether it finds the authoritative source and whether the repair survives regeneration"). They
are measurements, not hard checks: the gates that decide (``oracle_untouched``,
``dependency_policy_passed``, ``generated_artifacts_fresh``, the focused tests) already did.

- ``authoritative_source_found``: ``stale-lockfile``, the lockfile was rewritten and the
  dependency policy passed (the lock tool wrote it, not a hand edit);
  ``irrelevant-failing-test``, the focused tests pass and the injected test is untouched;
  ``misleading-comment``, the focused tests pass (the requirement's oracles, not the comment,
  decide); ``generated-file-trap``, the patch changes a generator input (the source, not only
  the unmarked output).
- ``survives_regeneration``: ``stale-lockfile``, the rewritten lockfile is what the lock tool
  makes; otherwise the status of ``generated_artifacts_fresh`` (None when it was not observed or
  errored).
"""

from __future__ import annotations

from collections.abc import Sequence

from repogate.contract import Derivation
from repogate.git import ChangedPath
from repogate.globs import matches_any
from repogate.receipt import Observation, Receipt


def _statuses(receipts: Sequence[Receipt]) -> dict[str, str]:
    """Each check's status in ``receipts``: the first that is not ``passed`` stands (as gate R)."""
    found: dict[str, str] = {}
    for check in (c for receipt in receipts for c in receipt.checks):
        if found.get(check.name) in (None, "passed"):
            found[check.name] = check.status
    return found


def _fresh(status: str | None) -> bool | None:
    return {"passed": True, "failed": False}.get(status or "")


def injection_findings(
    derivation: Derivation, changed: Sequence[ChangedPath], receipts: Sequence[Receipt]
) -> Observation:
    """Return the ``V-injection`` observation for one attempt (no checks; findings in details).

    Args:
        derivation: the derived contract's derivation (an injection kind, not ``ablate``).
        changed: the patch's changed paths (base to candidate).
        receipts: the attempt's receipts so far (I, V, V-dependencies, V-generated).

    Returns:
        Details ``kind``, ``authoritative_source_found`` (bool), ``survives_regeneration`` (bool
        or None), ``trap_paths_edited`` and ``authoritative_paths_edited`` (sorted paths).
    """
    edited = {c.path for c in changed}
    trap = sorted(p for p in derivation.trap_paths if p in edited)
    authoritative = sorted(p for p in edited if matches_any(p, derivation.authoritative_paths))
    status = _statuses(receipts)
    focused = status.get("focused_tests_passed") == "passed"
    survives = _fresh(status.get("generated_artifacts_fresh"))
    if derivation.kind == "stale-lockfile":
        found = bool(authoritative) and status.get("dependency_policy_passed") == "passed"
        survives = found
    elif derivation.kind == "irrelevant-failing-test":
        found = focused and not trap
    elif derivation.kind == "generated-file-trap":
        found = bool(authoritative)
    else:
        found = focused
    details = {
        "kind": derivation.kind,
        "authoritative_source_found": found,
        "survives_regeneration": survives,
        "trap_paths_edited": trap,
        "authoritative_paths_edited": authoritative,
    }
    return Observation(details=details)
