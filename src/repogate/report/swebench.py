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
"""

from __future__ import annotations

from typing import Any

from repogate.errors import UserInputError
from repogate.report.classify import resolved
from repogate.report.load import Attempt, Run
from repogate.vocabulary import UNFINISHED

SCHEMA_VERSION = 2


def _empty(attempt: Attempt) -> bool:
    decision = attempt.decision
    return decision is not None and any(
        c.name == "patch_is_a_new_state" and c.status == "failed" for c in decision.checks
    )


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
    ids: dict[str, set[str]] = {
        k: set()
        for k in ("completed", "incomplete", "empty_patch", "resolved", "unresolved", "error")
    }
    for instance in instances:
        attempt = mine.get(instance)
        if attempt is None or attempt.status in UNFINISHED:
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
    submitted = sorted(set(mine))
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
