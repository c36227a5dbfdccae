"""Budgets of a model-driven agent, enforced on every model call, and the calls recorded.

:class:`Budget` holds the contract's limits (:func:`budget_of`); :class:`Meter` wraps a
:class:`~repogate.protocols.ChatModel`: before each call it checks wall time, tokens and US
dollars spent, and raises :class:`~repogate.errors.BudgetExceeded` at a limit; after each call it
adds the call's usage and records the call in the trajectory (a failed call too, with its error).
A call that takes spending past a limit is kept (its reply was paid for) and the agent stops
before its next call or sandboxed action (:func:`repogate.agents.model_agent.run_action` checks
too). The agent's loop catches ``BudgetExceeded`` in one place and ends with
status ``budget_exceeded``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from repogate import clock
from repogate.contract import TransitionContract
from repogate.errors import BudgetExceeded, ModelError
from repogate.models.trajectory import Recorder
from repogate.protocols import ChatMessage, ChatModel, ModelReply

DEFAULT_SAMPLES = 4
"""Repair samples the baseline draws when neither its contract nor its configuration says."""


@dataclass(frozen=True)
class Budget:
    """A model-driven agent's limits.

    Attributes:
        wall_time_s: seconds from the agent's start (the contract's ``time_budget_s``).
        tokens: prompt plus completion tokens, or None (unlimited).
        cost_usd: US dollars, or None (unlimited).
        samples: repair samples the baseline may draw.
    """

    wall_time_s: float
    tokens: int | None = None
    cost_usd: float | None = None
    samples: int = DEFAULT_SAMPLES


def budget_of(contract: TransitionContract, samples: int = DEFAULT_SAMPLES) -> Budget:
    """Return the budget the contract's permissions grant (``samples``: the agent's own setting).

    The contract's ``sample_budget``, when set, caps ``samples``.
    """
    permissions = contract.permissions
    cap = permissions.sample_budget
    return Budget(
        wall_time_s=permissions.time_budget_s,
        tokens=permissions.token_budget,
        cost_usd=permissions.cost_budget_usd,
        samples=samples if cap is None else min(samples, cap),
    )


class Meter:
    """A model wrapped with its budget and the trajectory's recorder.

    Attributes:
        model: the model called.
        budget: the limits.
        recorder: where every call is recorded.
        tokens: tokens spent so far.
        cost_usd: US dollars spent so far.
    """

    def __init__(self, model: ChatModel, budget: Budget, recorder: Recorder) -> None:
        self.model = model
        self.budget = budget
        self.recorder = recorder
        self.tokens = 0
        self.cost_usd = 0.0
        self._start = clock.monotonic()

    def elapsed(self) -> float:
        """Seconds since the meter was made (the agent's start)."""
        return clock.monotonic() - self._start

    def remaining_s(self) -> float:
        """Seconds left of the wall-time budget (0 when spent)."""
        return max(0.0, self.budget.wall_time_s - self.elapsed())

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` when a limit is reached."""
        limits: tuple[tuple[str, float | None, float], ...] = (
            ("wall_time_s", self.budget.wall_time_s, self.elapsed()),
            ("tokens", self.budget.tokens, self.tokens),
            ("cost_usd", self.budget.cost_usd, self.cost_usd),
        )
        for which, limit, spent in limits:
            if limit is not None and spent >= limit:
                raise BudgetExceeded(which, limit, spent)

    def complete(self, messages: Sequence[ChatMessage], temperature: float = 0.0) -> ModelReply:
        """Call the model within the budget and record the call.

        Raises:
            BudgetExceeded: a limit was reached before this call.
            ModelError: the call failed (recorded with its error first).
        """
        self.check()
        start = clock.monotonic()
        try:
            reply = self.model.complete(messages, temperature)
        except ModelError as exc:
            self.recorder.call(messages, temperature, None, clock.monotonic() - start, str(exc))
            raise
        self.recorder.call(messages, temperature, reply, clock.monotonic() - start)
        self.tokens += reply.usage.tokens
        self.cost_usd += reply.usage.cost_usd
        return reply
