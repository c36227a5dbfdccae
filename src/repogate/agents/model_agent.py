"""What the model-driven agents (``baseline:``, ``mini:``) share: model, sandboxed actions, ending.

The model is called in the harness's process (:mod:`repogate.models`); each action runs in
repogate's sandbox under the attempt's policy (no network unless the contract grants it), with
writes allowed in the workspace only (not the output folder, where the harness writes the
trajectory), and at most the wall time left. Every attempt, whatever its end, leaves
``trajectory.json`` in its output folder (:mod:`repogate.models.trajectory`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Generic, TypeVar

from repogate import sandbox
from repogate._version import __version__
from repogate.agent_spec import ModelSpec
from repogate.errors import BudgetExceeded, ModelError
from repogate.models.meter import Budget, Meter
from repogate.models.openai_compat import OpenAIModel, Sampling, require_key, shown_endpoint
from repogate.models.replay import ReplayModel, load_replies
from repogate.models.trajectory import (
    TRAJECTORY_FILE,
    Action,
    ModelCall,
    Recorder,
    write_trajectory,
)
from repogate.protocols import ChatModel, Proposal, TaskView, Usage
from repogate.sandbox import SandboxPolicy

C = TypeVar("C")


def check_ready(spec: ModelSpec) -> None:
    """Check what a model-driven agent needs before anything is written.

    Raises:
        AgentSpecError: ``OPENAI_API_KEY`` is unset (a live model), or the recording a replay
            names is unusable.
    """
    if spec.replay is not None:
        load_replies(spec.replay)
    else:
        require_key()


def build_model(spec: ModelSpec, sampling: Sampling) -> ChatModel:
    """The model ``spec`` names: a replay of its recording, else the OpenAI-compatible endpoint."""
    if spec.replay is not None:
        return ReplayModel(spec.replay)
    return OpenAIModel(spec.model, sampling)


def endpoint_of(spec: ModelSpec) -> str:
    """Where its answers come from: the endpoint's URL, or ``replay:FILE``."""
    return f"replay:{spec.replay.name}" if spec.replay is not None else shown_endpoint()


def reported_model(spec: ModelSpec, sampling: Sampling) -> dict[str, Any]:
    """What the endpoint says of the model (``GET /models/{name}``), for the run manifest."""
    if spec.replay is not None:
        return {"id": spec.model, "source": "replay"}
    return OpenAIModel(spec.model, sampling).reported()


def run_action(
    command: str, workspace: Path, policy: SandboxPolicy, meter: Meter, step_timeout_s: float
) -> Action:
    """Run ``command`` with ``bash -c`` in the sandbox and record it; the output is stdout then stderr.

    Raises:
        BudgetExceeded: no wall time is left for it.
    """
    meter.check()
    limit = min(policy.timeout_s, step_timeout_s, meter.remaining_s())
    if limit <= 0:
        raise BudgetExceeded("wall_time_s", meter.budget.wall_time_s, meter.elapsed())
    confined = policy.model_copy(update={"writable": (workspace,), "timeout_s": limit})
    result = sandbox.run(["bash", "-c", command], workspace, confined)
    output = result.stdout + result.stderr
    if result.truncated_bytes:
        output += f"\n[{result.truncated_bytes} more bytes of output were not kept]"
    action = Action(
        command=command,
        returncode=result.returncode,
        output=output,
        timed_out=result.timed_out,
        seconds=round(result.duration_s, 3),
    )
    meter.recorder.add(action)
    return action


class GaveUp(Exception):
    """The agent ends without a usable proposal (no usable edit); its message says why."""


class ModelAgent(Generic[C]):
    """What the model-driven agents share: spec, configuration, budget, and how an attempt ends.

    A subclass gives its sampling settings, its configuration for the manifest and its loop
    (``_loop``: returns its status and detail). Every end is a status, caught here in one place:
    a budget reached is ``budget_exceeded``, a failed model call or :class:`GaveUp` is
    ``agent_error``. The trajectory is written whatever the end.

    Args:
        spec: the parsed spec.
        config: the agent's own configuration.
        budget: the contract's budgets.
    """

    def __init__(self, spec: ModelSpec, config: C, budget: Budget) -> None:
        self.spec = spec.text
        self._spec = spec
        self._config = config
        self._budget = budget

    def _sampling(self) -> Sampling:
        return Sampling()

    def _configuration(self) -> dict[str, Any]:
        raise NotImplementedError

    def _loop(
        self, task: TaskView, workspace: Path, output: Path, policy: SandboxPolicy, meter: Meter
    ) -> tuple[str, str]:
        raise NotImplementedError

    def propose(
        self, task: TaskView, workspace: Path, output: Path, policy: SandboxPolicy
    ) -> Proposal:
        """Run the agent's loop with a metered model; every end is a status, never a raise."""
        recorder = Recorder()
        meter = Meter(build_model(self._spec, self._sampling()), self._budget, recorder)
        try:
            status, detail = self._loop(task, workspace, output, policy, meter)
        except BudgetExceeded as exc:
            status, detail = "budget_exceeded", str(exc)
        except ModelError as exc:
            status, detail = "agent_error", f"model call failed: {exc}"
        except GaveUp as exc:
            status, detail = "agent_error", str(exc)
        return finish(self._spec, recorder, output, status, detail, last_reported(recorder))

    def describe(self) -> dict[str, Any]:
        """The manifest's entry: spec, kind, configuration, and what the endpoint reports."""
        return {
            "spec": self.spec,
            "kind": self._spec.kind,
            **self._configuration(),
            "reported_model": reported_model(self._spec, self._sampling()),
        }


def finish(
    spec: ModelSpec,
    recorder: Recorder,
    output: Path,
    status: str,
    detail: str,
    reported: str = "",
) -> Proposal:
    """Write the trajectory and return the proposal: status, usage, calls, steps, detail."""
    trajectory = recorder.finish(spec.text, spec.model, status, detail)
    write_trajectory(output, trajectory)
    return Proposal.model_validate(
        {
            "status": status,
            "model": reported or spec.model,
            "scaffold": f"repogate {__version__} {spec.kind}",
            "usage": Usage(
                tokens=trajectory.usage.tokens, cost_usd=trajectory.usage.cost_usd
            ).model_dump(),
            "detail": detail,
            "model_calls": trajectory.model_calls,
            "steps": trajectory.actions + trajectory.edits,
            "trajectory": TRAJECTORY_FILE,
        }
    )


def last_reported(recorder: Recorder) -> str:
    """The model name the endpoint reported last (empty when no call was answered)."""
    names = [s.model for s in recorder.steps if isinstance(s, ModelCall) and s.model]
    return names[-1] if names else ""
