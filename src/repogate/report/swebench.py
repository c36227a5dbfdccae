"""``--format swebench``: SWE-bench's run report (``report.json``) from repogate's hermetic verdicts.

The keys and their meaning follow SWE-bench's ``harness/reporting.py`` (``make_run_report``,
schema_version 2): ``total_instances``, ``submitted_instances``, ``completed_instances``,
``resolved_instances``, ``unresolved_instances``, ``empty_patch_instances``, ``error_instances``,
and the sorted id lists ``completed_ids``, ``incomplete_ids``, ``empty_patch_ids``,
``submitted_ids``, ``resolved_ids``, ``unresolved_ids``, ``error_ids``.

Mapping: an instance is a contract; resolved is FAIL_TO_PASS and PASS_TO_PASS passed
(:func:`repogate.report.classify.resolved`), never the other gates. An empty patch (the candidate
equals the base) is counted apart and not completed, as SWE-bench counts it. Tests that could not
decide (an evaluator or environment error, a crashed attempt) are errors; a contract with no
finished attempt of the agent is incomplete. SWE-bench runs one attempt per instance: with several
epochs, epoch 0 is reported.

A missing prediction is not an empty patch. ``make_run_report`` loops over the dataset and, first,
``if instance_id not in predictions: incomplete_ids.add(instance_id); continue``; only a row whose
``model_patch`` is ``""`` or None goes to ``empty_patch_ids``; and ``submitted_instances`` is
``len(predictions)``, ``submitted_ids`` ``sorted(predictions.keys())``. So an attempt whose agent
recorded status ``no_prediction`` (a ``predictions:FILE`` with no row for the contract, see
:mod:`repogate.agents.predictions`) is incomplete and not submitted, though repogate's own verdict
rejects it as an empty patch; a row with an empty patch is submitted and an empty patch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from repogate.errors import UserInputError
from repogate.recorded import recorded_proposal
from repogate.report.classify import resolved
from repogate.report.load import Attempt, Run
from repogate.store import Store
from repogate.vocabulary import UNFINISHED

SCHEMA_VERSION = 2


def _empty(attempt: Attempt) -> bool:
    decision = attempt.decision
    return decision is not None and any(
        c.name == "patch_is_a_new_state" and c.status == "failed" for c in decision.checks
    )


def _without_prediction(attempts: list[Attempt]) -> set[str]:
    """The contracts of ``attempts`` whose agent recorded status ``no_prediction`` (no row)."""
    found: set[str] = set()
    by_run: dict[Path, list[Attempt]] = {}
    for attempt in attempts:
        by_run.setdefault(attempt.run, []).append(attempt)
    for run_dir, mine in by_run.items():
        with Store.open(run_dir) as store:
            for attempt in mine:
                proposal = recorded_proposal(store.receipts(attempt.attempt_id))
                if proposal is not None and proposal.status == "no_prediction":
                    found.add(attempt.contract)
    return found


def swebench_report(runs: list[Run], agent: str | None) -> dict[str, Any]:
    """Return SWE-bench's run report for one agent over the contracts of ``runs``.

    Args:
        runs: the runs read by :func:`repogate.report.load.load_runs`.
        agent: the agent's short name; may be None when the runs hold one agent.

    Raises:
        UserInputError: ``agent`` is None with several agents, or names none of them.
    """
    attempts = [a for run in runs for a in run.attempts]
    agents = sorted({a.agent for a in attempts})
    if agent is None and len(agents) == 1:
        agent = agents[0]
    if agent not in agents:
        raise UserInputError(
            "--format swebench reports one agent"
            + (f"; {agent!r} is not one of these runs'" if agent else ""),
            f"add --agent NAME, one of: {', '.join(agents)}",
        )
    instances = sorted({c.id for run in runs if run.manifest for c in run.manifest.contracts})
    mine = {a.contract: a for a in attempts if a.agent == agent and a.epoch == 0}
    instances = sorted({*instances, *mine})
    no_row = _without_prediction(list(mine.values()))
    ids: dict[str, set[str]] = {
        k: set()
        for k in ("completed", "incomplete", "empty_patch", "resolved", "unresolved", "error")
    }
    for instance in instances:
        attempt = mine.get(instance)
        if attempt is None or attempt.status in UNFINISHED or instance in no_row:
            ids["incomplete"].add(instance)
        elif _empty(attempt):
            ids["empty_patch"].add(instance)
        else:
            verdict = resolved(attempt.decision)
            if verdict is None:
                ids["error"].add(instance)
            else:
                ids["completed"].add(instance)
                ids["resolved" if verdict else "unresolved"].add(instance)
    submitted = sorted(set(mine) - no_row)
    return {
        "total_instances": len(instances),
        "submitted_instances": len(submitted),
        "completed_instances": len(ids["completed"]),
        "resolved_instances": len(ids["resolved"]),
        "unresolved_instances": len(ids["unresolved"]),
        "empty_patch_instances": len(ids["empty_patch"]),
        "error_instances": len(ids["error"]),
        "completed_ids": sorted(ids["completed"]),
        "incomplete_ids": sorted(ids["incomplete"]),
        "empty_patch_ids": sorted(ids["empty_patch"]),
        "submitted_ids": submitted,
        "resolved_ids": sorted(ids["resolved"]),
        "unresolved_ids": sorted(ids["unresolved"]),
        "error_ids": sorted(ids["error"]),
        "schema_version": SCHEMA_VERSION,
    }
