"""The extension points of repogate, kept together: small Protocols with a few methods each.

Everything else in the package is an implementation. An agent proposes; the harness executes,
verifies and decides. No agent ever holds merge authority. An attempt writes its receipts to an
evidence sink (the store itself, or a worker's channel back to the head). The executor's Protocol,
which hands attempts to workers, lives beside the jobs it runs (:class:`repogate.jobs.Executor`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import Field, StrictFloat, StrictInt

from repogate._model import FrozenModel
from repogate.decision import Decision
from repogate.git import PatchApplication
from repogate.receipt import Crash, Receipt
from repogate.sandbox import ExecResult, SandboxPolicy
from repogate.state import CandidateState


class TaskView(FrozenModel):
    """What an agent is told (as JSON in ``REPOGATE_TASK``): never the oracles or hidden tests.

    Attributes:
        id: the contract id.
        statement: the requirement statement.
        criteria: the stated criteria only (id and claim); implicit ones are for the agent to recover.
        editable: path globs the agent may edit.
        forbidden: path globs it must not edit.
        commands: commands it may run.
        time_budget_s: its wall-clock budget in seconds.
        token_budget: its token budget, or None.
        cost_budget_usd: its budget in US dollars, or None.
        network: whether it has network access.
        environment: ``supplied`` when the harness prepared the environment (it is on ``PATH``);
            ``reconstruct`` when the agent must find and write it: it gets none, and leaves its
            recipe as ``environment.toml`` in its output folder
            (:mod:`repogate.environments.agent_recipe`).
    """

    id: str
    statement: str
    criteria: tuple[dict[str, str], ...] = ()
    editable: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    time_budget_s: float
    token_budget: int | None = None
    cost_budget_usd: float | None = None
    network: bool = False
    environment: Literal["supplied", "reconstruct"] = "supplied"


class ClaimedRequirement(FrozenModel):
    """One requirement an agent says it recovered: claim, source, confidence 0..1, test implication."""

    claim: str
    source: str = "inferred"
    confidence: StrictFloat = Field(default=1.0, ge=0.0, le=1.0)
    test_implication: str = ""
    criterion: str | None = None


MAX_TOKENS = 2**53
"""Tokens an agent may report at most (the largest count a JSON number keeps exactly)."""
MAX_COST_USD = 1e12
"""US dollars an agent may report at most: any sum of many reports stays finite."""


class Usage(FrozenModel):
    """What the agent reports it spent: tokens and US dollars.

    Attributes:
        tokens: tokens used, a whole number from 0 to :data:`MAX_TOKENS`.
        cost_usd: US dollars spent, finite, from 0 to :data:`MAX_COST_USD`.

    A figure outside these bounds (negative, NaN, infinite, absurd) fails validation
    (``pydantic.ValidationError``): the report is the agent's bad output, ignored, never summed
    into soft measures.
    """

    tokens: StrictInt = Field(default=0, ge=0, le=MAX_TOKENS)
    cost_usd: StrictFloat = Field(default=0.0, ge=0.0, le=MAX_COST_USD, allow_inf_nan=False)


class Proposal(FrozenModel):
    """What an agent returns. Its real proposal is what it leaves in the workspace.

    Attributes:
        status: ``done``; ``stopped`` when stopped at its time budget; ``crashed`` when it failed
            to run; ``no_prediction`` when a predictions file has no row for the task (an empty
            patch); for a model-driven agent (:mod:`repogate.agents.baseline`,
            :mod:`repogate.agents.mini`) ``budget_exceeded`` when it reached a budget of its
            contract (tokens, cost, wall time, samples) and ``agent_error`` when its model
            failed (unreachable endpoint) or gave no usable edit. Whatever it left is judged.
        model: the model the agent reports (or its kind, e.g. ``gold``).
        scaffold: the scaffold name and version it reports.
        usage: tokens and cost.
        requirements: its own requirements receipt, when it gave one.
        exec: the process result for command-line agents.
        detail: a human-readable note (why it stopped, what it did).
        claimed_patch_digest: the digest the agent says its evidence covers, when it says one.
        applied: for an agent that hands over a patch file (gold, predictions), how the harness
            applied it: the step of SWE-bench's ladder and any fuzz (:func:`repogate.git.apply_ladder`).
        refused_links: files of its output folder that were symbolic links: not followed, not read.
        model_calls: model calls made (model-driven agents; 0 when not known).
        steps: actions and edits run in its sandbox (model-driven agents; 0 when not known).
        trajectory: the trajectory file's name in its output folder, when it left one.
    """

    status: Literal[
        "done", "stopped", "crashed", "no_prediction", "budget_exceeded", "agent_error"
    ] = "done"
    model: str = ""
    scaffold: str = ""
    usage: Usage = Usage()
    requirements: tuple[ClaimedRequirement, ...] | None = None
    exec: ExecResult | None = None
    detail: str = ""
    claimed_patch_digest: str | None = None
    applied: PatchApplication | None = None
    refused_links: tuple[str, ...] = ()
    model_calls: int = Field(default=0, ge=0)
    steps: int = Field(default=0, ge=0)
    trajectory: str | None = None


class ChatMessage(FrozenModel):
    """One message of a chat completion's prompt, as the model sees it.

    Attributes:
        role: ``system``, ``user`` or ``assistant`` (OpenAI's chat roles).
        content: its text, exactly as sent.
    """

    role: Literal["system", "user", "assistant"]
    content: str


class ModelReply(FrozenModel):
    """What one model call returned.

    Attributes:
        text: the completion's text (empty when the model sent none).
        model: the model name the endpoint reported (``model`` of the response), its version.
        finish_reason: why the completion ended (``stop``, ``length``, ...), as reported.
        usage: tokens (prompt plus completion) and US dollars of this call.
        fingerprint: the endpoint's ``system_fingerprint``, when it sent one.
    """

    text: str
    model: str = ""
    finish_reason: str = ""
    usage: Usage = Usage()
    fingerprint: str | None = None


class ChatModel(Protocol):
    """A language model behind the model seam: messages in, text and usage out.

    It is called in the harness's process, never in the sandbox: an agent's model calls need no
    network grant, and only its actions (shell commands, edits) run sandboxed. Implementations:
    :mod:`repogate.models.openai_compat` (any OpenAI-compatible endpoint) and
    :mod:`repogate.models.replay` (answers from a recorded trajectory).
    """

    name: str

    def complete(self, messages: Sequence[ChatMessage], temperature: float) -> ModelReply:
        """Return the model's completion of ``messages`` sampled at ``temperature``.

        Raises:
            ModelError: the call failed (unreachable, refused, no completion).
        """
        ...

    def describe(self) -> dict[str, Any]:
        """Return what rebuilds it: kind, model name, endpoint (never a key), sampling settings."""
        ...


class Agent(Protocol):
    """An agent under evaluation: it edits ``workspace`` and says what it did.

    ``spec`` is the string that rebuilds it (``gold``, ``null``, ``cmd:...``), recorded in the store.
    """

    spec: str

    def propose(
        self, task: TaskView, workspace: Path, output: Path, policy: SandboxPolicy
    ) -> Proposal:
        """Edit ``workspace`` (a git checkout of the base) to meet ``task``.

        Args:
            task: what the agent is told.
            workspace: its own checkout; what it leaves here is its proposal.
            output: a folder outside the workspace for its requirements receipt, usage, trajectory.
            policy: the sandbox its commands must run under (time budget, network, env).
        """
        ...

    def describe(self) -> dict[str, Any]:
        """Return the agent's spec and config (model, scaffold, version) for the run manifest.

        Its keys are :class:`repogate.manifest.AgentEntry`'s.
        """
        ...


class EvidenceSink(Protocol):
    """Where an attempt's receipts and decision go as they are made (the run store, or a channel).

    ``run_dir`` is the run directory, which the agent must not see.
    """

    @property
    def run_dir(self) -> Path:
        """The run directory the evidence ends up in."""
        ...

    def add_receipt(self, attempt_id: str, receipt: Receipt, state: CandidateState) -> object:
        """Keep ``receipt`` (observed on ``state``) now, so a killed run keeps it."""
        ...

    def finish_attempt(
        self, attempt_id: str, decision: Decision | None, crash: Crash | None = None
    ) -> None:
        """Keep the attempt's decision, or its crash (the exception's type and message)."""
        ...
