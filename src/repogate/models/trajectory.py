"""A model-driven attempt's trajectory: every model call, action and edit, exactly as it happened.

The file ``trajectory.json`` (in the agent's output folder, beside the attempt's evidence) is one
:class:`Trajectory`: a versioned record whose ``steps`` are, in order,

- ``model``: one model call: the prompt's messages exactly as sent (``continues`` counts the
  messages it shares with the previous call's prompt and reply, which are not repeated), the
  reply's text, the model the endpoint reported, the finish reason, tokens, US dollars, seconds,
  or the error that ended it;
- ``action``: one command run in the sandbox: the command, its return code, the output exactly as
  the model was shown it, whether it was stopped at its time limit;
- ``edit``: one search/replace edit: the file, whether it applied, and why not;
- ``note``: what the agent decided between calls (localisation's ranking, the sample kept).

A trajectory that truncated what the model saw would mislead review, so nothing is shortened
here: what the model was shown is what is kept. A ``cmd:`` agent may write the same file to
``$REPOGATE_OUTPUT/trajectory.json``; ``repogate show`` summarises it (:func:`summary`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError

from repogate._counted import counted
from repogate._files import PlantedLinkError, read_bytes_nofollow, write_bytes_nofollow
from repogate._model import FrozenModel, SchemaVersion
from repogate.protocols import ChatMessage, ModelReply, Usage

TRAJECTORY_FILE = "trajectory.json"
"""The trajectory's file name in an agent's output folder."""
MAX_TRAJECTORY_BYTES = 64 * 1024 * 1024
"""Bytes of a trajectory file read at most (a larger one is not summarised)."""


class ModelCall(FrozenModel):
    """One model call (see the module's docstring)."""

    kind: Literal["model"] = "model"
    continues: int = Field(default=0, ge=0)
    messages: tuple[ChatMessage, ...]
    temperature: float = 0.0
    reply: str | None = None
    model: str = ""
    finish_reason: str = ""
    usage: Usage = Usage()
    seconds: float = 0.0
    error: str | None = None


class Action(FrozenModel):
    """One command run in the sandbox; ``output`` is exactly what the model was shown."""

    kind: Literal["action"] = "action"
    command: str
    returncode: int | None
    output: str
    timed_out: bool = False
    seconds: float = 0.0


class EditStep(FrozenModel):
    """One search/replace edit of ``path``: applied, or why not."""

    kind: Literal["edit"] = "edit"
    path: str
    applied: bool
    detail: str = ""


class Note(FrozenModel):
    """What the agent decided between calls."""

    kind: Literal["note"] = "note"
    text: str


Step = Annotated[ModelCall | Action | EditStep | Note, Field(discriminator="kind")]
"""One step of a trajectory, told apart by ``kind``."""


class Trajectory(FrozenModel):
    """A whole trajectory (schema_version 1); see the module's docstring for its steps.

    Attributes:
        agent: the agent's spec text.
        model: the configured model name; each call records what the endpoint reported.
        status: the agent's status (:attr:`repogate.protocols.Proposal.status`).
        detail: why it ended.
        steps: every step, in order.
        usage: tokens and US dollars, summed over the model calls.
        model_calls: model calls made (failed ones included).
        actions: commands run in the sandbox.
        edits: search/replace edits tried (applied or not).
    """

    schema_version: SchemaVersion = 1
    format: Literal["repogate-trajectory"] = "repogate-trajectory"
    agent: str = ""
    model: str = ""
    status: str = ""
    detail: str = ""
    steps: tuple[Step, ...] = ()
    usage: Usage = Usage()
    model_calls: int = 0
    actions: int = 0
    edits: int = 0


class Recorder:
    """Collects a trajectory's steps as they happen; :meth:`finish` makes the record."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self._conversation: list[ChatMessage] = []

    def call(
        self,
        messages: Sequence[ChatMessage],
        temperature: float,
        reply: ModelReply | None,
        seconds: float,
        error: str | None = None,
    ) -> None:
        """Record one model call: its prompt (only what the last call's did not hold), its reply."""
        shared = 0
        while (
            shared < min(len(messages), len(self._conversation))
            and messages[shared] == self._conversation[shared]
        ):
            shared += 1
        if shared < len(self._conversation):
            shared = 0  # another conversation: kept whole
        self.steps.append(
            ModelCall(
                continues=shared,
                messages=tuple(messages[shared:]),
                temperature=temperature,
                reply=None if reply is None else reply.text,
                model="" if reply is None else reply.model,
                finish_reason="" if reply is None else reply.finish_reason,
                usage=Usage() if reply is None else reply.usage,
                seconds=round(seconds, 3),
                error=error,
            )
        )
        self._conversation = list(messages)
        if reply is not None:
            self._conversation.append(ChatMessage(role="assistant", content=reply.text))

    def add(self, step: Action | EditStep | Note) -> None:
        """Record an action, an edit or a note."""
        self.steps.append(step)

    def finish(self, agent: str, model: str, status: str, detail: str) -> Trajectory:
        """Return the trajectory, its totals summed from the steps."""
        calls = [s for s in self.steps if isinstance(s, ModelCall)]
        return Trajectory(
            agent=agent,
            model=model,
            status=status,
            detail=detail,
            steps=tuple(self.steps),
            usage=Usage(
                tokens=sum(c.usage.tokens for c in calls),
                cost_usd=sum(c.usage.cost_usd for c in calls),
            ),
            model_calls=len(calls),
            actions=sum(isinstance(s, Action) for s in self.steps),
            edits=sum(isinstance(s, EditStep) for s in self.steps),
        )


def write_trajectory(output: Path, trajectory: Trajectory) -> None:
    """Write ``trajectory`` to ``output/trajectory.json``, following no link planted there."""
    write_bytes_nofollow(output, TRAJECTORY_FILE, trajectory.model_dump_json(indent=1).encode())


def read_trajectory(folder: Path) -> Trajectory | str | None:
    """Return the trajectory in ``folder``, None when there is none, or why it cannot be read.

    Never raises over what an agent left: a link (not followed), a file over
    :data:`MAX_TRAJECTORY_BYTES`, text that is not a trajectory each give one line of text.
    """
    try:
        data = read_bytes_nofollow(folder, TRAJECTORY_FILE, MAX_TRAJECTORY_BYTES)
    except PlantedLinkError:
        return f"{TRAJECTORY_FILE} is a symbolic link: not followed"
    except OSError as exc:
        return f"{TRAJECTORY_FILE} cannot be read ({exc.strerror or type(exc).__name__})"
    if data is None:
        return None
    try:
        return Trajectory.model_validate(json.loads(data))
    except (ValueError, RecursionError, ValidationError) as exc:
        first = str(exc).splitlines()[0][:160]
        return f"{TRAJECTORY_FILE} is not a repogate trajectory ({first})"


def summary(trajectory: Trajectory) -> str:
    """One line: status, model calls, commands, edits, tokens, US dollars, the models reported."""
    reported = sorted({s.model for s in trajectory.steps if isinstance(s, ModelCall) and s.model})
    errors = sum(1 for s in trajectory.steps if isinstance(s, ModelCall) and s.error)
    parts = [
        counted(trajectory.model_calls, "model call") + (f" ({errors} failed)" if errors else ""),
        counted(trajectory.actions, "command"),
        counted(trajectory.edits, "edit"),
        f"{trajectory.usage.tokens:,} tokens",
        f"${trajectory.usage.cost_usd:.4f}",
    ]
    if reported:
        parts.append("model reported " + ", ".join(reported))
    head = f"{trajectory.status}: " if trajectory.status else ""
    return head + "; ".join(parts)
