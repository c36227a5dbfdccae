"""The ``cmd:COMMAND`` agent: any command-line agent, run in its workspace under the sandbox.

The agent is told its task through two environment variables:

- ``REPOGATE_TASK``: the task view as JSON (statement, stated criteria, permissions; never oracles);
- ``REPOGATE_OUTPUT``: a folder outside the workspace where it may leave ``requirements.json``
  (a list of claims: claim, source, confidence, test_implication), ``usage.json`` (tokens,
  cost_usd), ``agent.json`` (model, scaffold) and any trajectory file.

It runs with the contract's time budget, no network unless granted, and a scrubbed environment.
The harness reads its output folder without following links (a link planted there is named in
the proposal's ``refused_links`` and never followed), and never writes into it: the captured
stdout and stderr are kept by the pipeline in the harness's own evidence folder.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from repogate import sandbox
from repogate._files import PlantedLinkError, read_bytes_nofollow
from repogate.agent_spec import CmdSpec
from repogate.protocols import ClaimedRequirement, Proposal, TaskView, Usage
from repogate.sandbox import SandboxPolicy

OUTPUT_CAP_BYTES = 4 * 1024 * 1024
"""Bytes read at most of each file in the agent's output folder; a larger one is ignored."""


_MAX_LINKS_LISTED = 100


def _read_json(output: Path, name: str, refused: list[str]) -> Any:
    try:
        data = read_bytes_nofollow(output, name, OUTPUT_CAP_BYTES)
        return None if data is None else json.loads(data.decode("utf-8"))
    except PlantedLinkError:
        refused.append(name)
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def read_agent_output(output: Path) -> dict[str, Any]:
    """Read what an agent left in its output folder: requirements, usage, model and scaffold.

    Unreadable or invalid files are ignored (and so count as not given), never trusted. A file
    that is a symbolic link is not followed: its name is listed under ``refused_links``.
    """
    found: dict[str, Any] = {}
    refused: list[str] = []
    claims = _read_json(output, "requirements.json", refused)
    if isinstance(claims, list):
        try:
            found["requirements"] = tuple(ClaimedRequirement.model_validate(c) for c in claims)
        except ValidationError:
            found["detail"] = "requirements.json ignored: not a list of claims"
    usage = _read_json(output, "usage.json", refused)
    if isinstance(usage, dict):
        with contextlib.suppress(ValidationError):
            found["usage"] = Usage.model_validate(usage)
    meta = _read_json(output, "agent.json", refused)
    if isinstance(meta, dict):
        found["model"] = str(meta.get("model", ""))
        found["scaffold"] = str(meta.get("scaffold", ""))
    # Every link it planted there is recorded, none followed.
    with contextlib.suppress(OSError), os.scandir(output) as entries:
        refused += [e.name for e in entries if e.is_symlink() and e.name not in refused]
    if refused:
        found["refused_links"] = tuple(sorted(refused)[:_MAX_LINKS_LISTED])
    return found


class CommandAgent:
    """Runs a shell-free command line as the agent; what it leaves in the workspace is its proposal."""

    def __init__(self, spec: CmdSpec) -> None:
        """Run ``spec.argv`` (its files already made absolute where the user started repogate)."""
        self.spec = spec.text
        self._argv = list(spec.argv)

    def propose(
        self, task: TaskView, workspace: Path, output: Path, policy: SandboxPolicy
    ) -> Proposal:
        """Run the command in ``workspace``; stopped at the budget, a crash is recorded, not raised."""
        env = {
            **policy.env,
            "REPOGATE_TASK": task.model_dump_json(),
            "REPOGATE_OUTPUT": str(output),
        }
        # Its script, named on its command line, is visible to it read-only (not its folder).
        result = sandbox.run(self._argv, workspace, policy.model_copy(update={"env": env}))
        given = read_agent_output(output)
        status = "stopped" if result.timed_out else "done" if result.ok else "crashed"
        detail = (
            f"stopped at its budget of {policy.timeout_s:g} s"
            if result.timed_out
            else f"exit {result.returncode}"
        )
        return Proposal(
            status=status,
            exec=result,
            detail=given.pop("detail", detail),
            **given,
        )

    def describe(self) -> dict[str, Any]:
        """Return the spec (the command line)."""
        return {"spec": self.spec, "argv": self._argv}
