"""The ``cmd:COMMAND`` agent: any command-line agent, run in its workspace under the sandbox.

The agent is told its task through two environment variables:

- ``REPOGATE_TASK``: the task view as JSON (statement, stated criteria, permissions; never oracles);
- ``REPOGATE_OUTPUT``: a folder outside the workspace where it may leave ``requirements.json``
  (a list of claims: claim, source, confidence, test_implication), ``usage.json`` (tokens,
  cost_usd), ``agent.json`` (model, scaffold) and ``trajectory.json`` in repogate's trajectory
  format (:mod:`repogate.models.trajectory`; ``repogate show`` summarises it, and its counts
  of model calls and steps go into the proposal); and, when the contract's agent supplies the
  environment (``[environment] supplied_by = "agent"``), ``environment.toml``, its recipe
  (:mod:`repogate.environments.agent_recipe`; read by gate E, not here).

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
from typing import Any, TypeVar

from pydantic import BaseModel, RootModel, ValidationError

from repogate import sandbox
from repogate._files import PlantedLinkError, read_bytes_nofollow
from repogate._model import ForeignModel
from repogate._problems import every_problem
from repogate.agent_spec import CmdSpec
from repogate.models.trajectory import TRAJECTORY_FILE, Trajectory, read_trajectory
from repogate.protocols import ClaimedRequirement, Proposal, TaskView, Usage
from repogate.sandbox import SandboxPolicy

OUTPUT_CAP_BYTES = 4 * 1024 * 1024
"""Bytes read at most of each file in the agent's output folder; a larger one is ignored."""


_MAX_LINKS_LISTED = 100

_M = TypeVar("_M", bound=BaseModel)


def _read_json(output: Path, name: str, refused: list[str], notes: list[str]) -> Any:
    """Return the JSON value of ``output/name``, or None when absent or unusable (with a note).

    Total over what the agent may leave: a link (refused, not followed), a FIFO or folder, bytes
    that are not UTF-8, text that is not JSON, numbers Python will not convert (over 4300 digits),
    nesting deeper than the parser recurses, strings that are not Unicode text (lone surrogates).
    """
    try:
        data = read_bytes_nofollow(output, name, OUTPUT_CAP_BYTES)
        if data is None:
            return None
        value = json.loads(data.decode("utf-8"))
        # A lone surrogate ("\ud800") parses, but no receipt could store it.
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except PlantedLinkError:
        refused.append(name)
    except OSError as exc:
        notes.append(f"{name} ignored: cannot be read ({exc.strerror or type(exc).__name__})")
    except (ValueError, RecursionError) as exc:  # UnicodeError and JSONDecodeError are ValueErrors
        why = "nested too deeply" if isinstance(exc, RecursionError) else _short(exc)
        notes.append(f"{name} ignored: not usable JSON ({why})")
    return None


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 120 else text[:117] + "..."


def _model(value: Any, cls: type[_M], name: str, notes: list[str]) -> _M | None:
    """Validate one output file's value; a value that does not fit is noted, never raised."""
    try:
        return cls.model_validate(value)
    except (ValidationError, RecursionError) as exc:
        why = every_problem(exc, cls) if isinstance(exc, ValidationError) else "nested too deeply"
        notes.append(f"{name} ignored: {why}")
        return None


class _Claims(RootModel[tuple[ClaimedRequirement, ...]]):
    """requirements.json: a list of claims."""


class _Meta(ForeignModel):
    """agent.json: the model and scaffold the agent reports (other keys ignored)."""

    model: str = ""
    scaffold: str = ""


def read_agent_output(output: Path) -> dict[str, Any]:
    """Read what an agent left in its output folder: requirements, usage, model and scaffold.

    Never raises over what the agent left: an unreadable or invalid file is ignored (it counts as
    not given, never trusted) and named with why under ``detail``. A file that is a symbolic link
    is not followed: its name is listed under ``refused_links``. Usage figures must be finite and
    at least 0 (:class:`~repogate.protocols.Usage`), else ``usage.json`` is ignored.

    Returns:
        Keyword arguments for :class:`~repogate.protocols.Proposal`: ``requirements``, ``usage``,
        ``model``, ``scaffold``, ``refused_links``, ``trajectory``, ``model_calls``, ``steps`` and
        ``detail`` (the notes), each only when found.
    """
    found: dict[str, Any] = {}
    refused: list[str] = []
    notes: list[str] = []
    claims = _read_json(output, "requirements.json", refused, notes)
    if claims is not None:
        given = _model(claims, _Claims, "requirements.json", notes)
        if given is not None:
            found["requirements"] = given.root
    usage = _read_json(output, "usage.json", refused, notes)
    if usage is not None:
        reported = _model(usage, Usage, "usage.json", notes)
        if reported is not None:
            found["usage"] = reported
    meta = _read_json(output, "agent.json", refused, notes)
    if meta is not None:
        said = _model(meta, _Meta, "agent.json", notes)
        if said is not None:
            found["model"], found["scaffold"] = said.model, said.scaffold
    # Every link it planted there is recorded, none followed.
    with contextlib.suppress(OSError), os.scandir(output) as entries:
        refused += [_printable(e.name) for e in entries if e.is_symlink() and e.name not in refused]
    trajectory = read_trajectory(output)
    if isinstance(trajectory, Trajectory):
        found["trajectory"] = TRAJECTORY_FILE
        found["model_calls"] = trajectory.model_calls
        found["steps"] = trajectory.actions + trajectory.edits
    elif trajectory is not None:
        notes.append(f"{trajectory}; ignored")
    if refused:
        found["refused_links"] = tuple(sorted(refused)[:_MAX_LINKS_LISTED])
    if notes:
        found["detail"] = "; ".join(notes)
    return found


def _printable(name: str) -> str:
    """A file name as text a receipt can store: bytes that are not UTF-8 as backslash escapes."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


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
        notes = given.pop("detail", "")
        return Proposal(
            status=status,
            exec=result,
            detail=f"{detail}; {notes}" if notes else detail,
            **given,
        )

    def describe(self) -> dict[str, Any]:
        """Return the spec (the command line)."""
        return {"spec": self.spec, "argv": self._argv}
