"""A model that answers from a recorded trajectory: tests, and re-running a published trajectory.

``baseline:@FILE`` and ``mini:@FILE`` choose it: FILE is a trajectory (:mod:`.trajectory`); its
model calls' replies are given back in order, with the model name and usage they recorded. The
prompts sent are recorded afresh, so a replay whose prompts drift from the recording shows it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from repogate._files import read_text
from repogate._problems import every_problem
from repogate.errors import AgentSpecError, ModelError
from repogate.models.trajectory import ModelCall, Trajectory
from repogate.protocols import ChatMessage, ModelReply


def load_replies(path: Path) -> tuple[ModelCall, ...]:
    """Read the answered model calls of the trajectory at ``path``.

    Raises:
        AgentSpecError: unreadable, not JSON, or not a trajectory (the problem named).
    """
    text = read_text(path, "recorded trajectory", AgentSpecError, "give a trajectory.json")
    try:
        trajectory = Trajectory.model_validate(json.loads(text))
    except ValueError as exc:
        why = every_problem(exc, Trajectory) if isinstance(exc, ValidationError) else str(exc)
        raise AgentSpecError(
            f"recorded trajectory {path} is not a repogate trajectory: {why}",
            "give a trajectory.json a model-driven attempt left in its agent/ folder",
        ) from None
    return tuple(s for s in trajectory.steps if isinstance(s, ModelCall) and s.reply is not None)


class ReplayModel:
    """Answers each call with the next recorded reply (:class:`~repogate.protocols.ChatModel`)."""

    def __init__(self, path: Path) -> None:
        self.name = f"replay:{path.name}"
        self._path = path
        self._calls = load_replies(path)
        self._next = 0

    def complete(self, messages: Sequence[ChatMessage], temperature: float) -> ModelReply:
        """Return the next recorded reply.

        Raises:
            ModelError: the recording has no reply left.
        """
        if self._next >= len(self._calls):
            raise ModelError(f"the recording {self._path.name} has no more replies")
        call = self._calls[self._next]
        self._next += 1
        assert call.reply is not None
        return ModelReply(
            text=call.reply, model=call.model, finish_reason=call.finish_reason, usage=call.usage
        )

    def describe(self) -> dict[str, Any]:
        """Kind and the recording's name."""
        return {"kind": "replay", "model": self.name, "replies": len(self._calls)}
