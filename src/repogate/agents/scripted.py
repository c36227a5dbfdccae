"""The ``scripted:FILE`` agent: canned edits from a TOML file, shipped for tests and demos.

File format::

    description = "what this agent does"
    [[edit]]  path = "src/x.py"  write = "whole new content"
    [[edit]]  path = "src/x.py"  replace = ["old text", "new text"]   # exact, must occur once
    [[edit]]  path = "src/x.py"  delete = true
    [[edit]]  run = "python tools/generate.py"                       # sandboxed, in the workspace
    [usage]   tokens = 1200  cost_usd = 0.02
    [[requirements]]  claim = "..."  source = "inferred"  confidence = 0.9  criterion = "R2"

Edits apply in order. A path outside the workspace, a ``replace`` whose old text does not occur
exactly once, or a failing ``run`` stops the agent with status ``crashed`` and the reason.
"""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path
from typing import Any

from pydantic import StrictBool, ValidationError, model_validator

from repogate import sandbox
from repogate._files import read_text
from repogate._model import FrozenModel
from repogate._problems import every_problem
from repogate.agent_spec import ScriptSpec
from repogate.errors import AgentSpecError
from repogate.protocols import ClaimedRequirement, Proposal, TaskView, Usage
from repogate.sandbox import SandboxPolicy


class Edit(FrozenModel):
    """One scripted edit: exactly one of write, replace, delete, run."""

    path: str | None = None
    write: str | None = None
    replace: tuple[str, str] | None = None
    delete: StrictBool = False
    run: str | None = None

    @model_validator(mode="after")
    def _one_action(self) -> Edit:
        actions = [
            self.write is not None,
            self.replace is not None,
            self.delete,
            self.run is not None,
        ]
        if sum(actions) != 1:
            raise ValueError("give exactly one of write, replace, delete, run")
        if self.run is None and not self.path:
            raise ValueError("write, replace and delete need a path")
        return self


class Script(FrozenModel):
    """A scripted agent file."""

    description: str = ""
    edit: tuple[Edit, ...] = ()
    usage: Usage = Usage()
    requirements: tuple[ClaimedRequirement, ...] | None = None


def load_script(path: Path) -> Script:
    """Read a scripted agent file.

    Raises:
        AgentSpecError: unreadable, not TOML, or not a valid script (the key is named).
    """
    text = read_text(path, "scripted agent file", AgentSpecError, "give a .toml file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AgentSpecError(f"scripted agent file {path} is not TOML: {exc}", "fix it") from None
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        raise AgentSpecError(
            f"scripted agent file {path}: {every_problem(exc, Script)}",
            "see repogate.agents.scripted",
        ) from None


def _inside(workspace: Path, relative: str) -> Path:
    target = (workspace / relative).resolve()
    root = workspace.resolve()
    if target == root or root not in target.parents or ".git" in Path(relative).parts:
        raise ValueError(f"path {relative!r} is outside the workspace")
    return target


def _apply(edit: Edit, workspace: Path, policy: SandboxPolicy) -> None:
    if edit.run is not None:
        result = sandbox.run(shlex.split(edit.run), workspace, policy)
        if not result.ok:
            raise ValueError(f"{edit.run!r} exited {result.returncode}: {result.stderr[-500:]}")
        return
    assert edit.path is not None
    target = _inside(workspace, edit.path)
    if edit.delete:
        target.unlink()
    elif edit.write is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(edit.write, encoding="utf-8")
    elif edit.replace is not None:
        old, new = edit.replace
        text = target.read_text(encoding="utf-8")
        if text.count(old) != 1:
            raise ValueError(
                f"{edit.path}: text to replace occurs {text.count(old)} times, not once"
            )
        target.write_text(text.replace(old, new), encoding="utf-8")


class ScriptedAgent:
    """Applies a script's edits in order: a deterministic fake agent chosen like any real one."""

    def __init__(self, spec: ScriptSpec, script: Script) -> None:
        """Apply ``script`` (read from ``spec.file`` by :func:`load_script`)."""
        self.spec = spec.text
        self._script = script

    def propose(
        self, task: TaskView, workspace: Path, output: Path, policy: SandboxPolicy
    ) -> Proposal:
        """Apply every edit; the first that cannot be applied stops the agent."""
        common: dict[str, Any] = {
            "model": "scripted",
            "usage": self._script.usage,
            "requirements": self._script.requirements,
        }
        for number, edit in enumerate(self._script.edit, start=1):
            try:
                _apply(edit, workspace, policy)
            except (OSError, ValueError) as exc:
                return Proposal(status="crashed", detail=f"edit {number}: {exc}", **common)
        return Proposal(detail=self._script.description, **common)

    def describe(self) -> dict[str, Any]:
        """Return the spec and description."""
        return {"spec": self.spec, "model": "scripted", "description": self._script.description}
