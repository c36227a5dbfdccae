"""Gate V's extra oracle commands: each of the contract's commands run on the base and the candidate.

A command that newly fails on the candidate fails ``regression_tests_passed``; one the base
already failed is recorded and not held against the patch (:func:`check_commands`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from repogate import sandbox
from repogate.contract import OracleCommand
from repogate.environments import Environment
from repogate.receipt import Check, Observation, Status
from repogate.sandbox import SandboxPolicy


class CommandResults(Observation):
    """What the extra oracle commands observed, with each command's status.

    Attributes:
        statuses: by command name: ``passed``; ``failed`` when it newly fails on the candidate;
            ``error`` when it timed out there.
    """

    statuses: dict[str, Status] = Field(default_factory=dict)


def _run_command(
    command: OracleCommand, tree: Path, env: Environment, policy: SandboxPolicy
) -> sandbox.ExecResult:
    return env.run(shlex.split(command.run), tree, policy)


def check_commands(
    commands: Sequence[OracleCommand],
    base_tree: Path,
    candidate_tree: Path,
    env: Environment,
    policy: SandboxPolicy,
) -> CommandResults:
    """Run each extra oracle command on the base and the candidate.

    A failure the base already had is recorded and not held against the patch; a new failure
    fails ``regression_tests_passed`` naming the command and its output. A command stopped at its
    timeout on the candidate is an ``error``.
    """
    results: list[dict[str, Any]] = []
    statuses: dict[str, Status] = {}
    new_failures: list[str] = []
    errors: list[str] = []
    for command in commands:
        at_base = _run_command(command, base_tree, env, policy)
        at_candidate = _run_command(command, candidate_tree, env, policy)
        results.append(
            {
                "name": command.name,
                "base_returncode": at_base.returncode,
                "candidate_returncode": at_candidate.returncode,
                "candidate_output": (at_candidate.stdout + at_candidate.stderr)[-2000:],
            }
        )
        statuses[command.name] = "passed"
        if at_candidate.timed_out:
            errors.append(f"command:{command.name} timed out")
            statuses[command.name] = "error"
        elif not at_candidate.ok and at_base.ok:
            tail = (at_candidate.stdout + at_candidate.stderr).strip().splitlines()[-3:]
            new_failures.append(f"command:{command.name} newly fails: {' | '.join(tail)}")
            statuses[command.name] = "failed"
    status = "error" if errors else "failed" if new_failures else "passed"
    return CommandResults(
        checks=(
            Check(
                name="regression_tests_passed",
                status=status,
                detail="; ".join(errors + new_failures),
                kind="timeout" if errors else None,
            ),
        ),
        details={"commands": results, "statuses": statuses},
        statuses=statuses,
    )
