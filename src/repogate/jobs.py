"""What the head hands an executor (a job per attempt) and what comes back (events), as values.

The head process owns the run store and is its one writer. It begins each attempt in the store,
then hands the executor an :class:`AttemptJob`: everything a worker needs to run that attempt,
picklable, with no open handle. The worker sends back, in order, :class:`Started`, one
:class:`ReceiptMade` per gate as the gate finishes, and :class:`Finished`; the head writes each to
the store as it arrives, so a killed run keeps every receipt that reached it.

An executor (:class:`Executor`, the Protocol every backend implements) that loses a worker (it
was killed, or its node died) reports the attempt as :class:`Finished` with a ``crash``; one that is interrupted (Ctrl-C) reports nothing more, and the
attempt stays ``running`` in the store, to be redone on resume.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from repogate.contract import TransitionContract
from repogate.decision import Decision
from repogate.protocols import Agent
from repogate.receipt import Crash, Receipt
from repogate.state import CandidateState


@dataclass(frozen=True)
class AttemptJob:
    """One attempt to run, begun in the store by the head.

    Attributes:
        attempt_id: the attempt's id in the store.
        label: how progress names it, e.g. ``parser-bounded-config · gold · epoch 0``.
        contract: the task.
        agent: the agent, built (and its files read) by the head, so a worker needs no path
            of the user's that the head resolved.
        agent_name: its short name (for ``{agent}`` in review-file paths).
        source: the harness's full-history repository (a path every worker can read).
        run_dir: the run directory (hidden from the agent).
        work: the attempt's scratch folder, removed when the attempt ends.
        evidence: the attempt's evidence folder in the run directory.
        env_cache: the shared environment cache.
        history_cache: the sentinel's cache of real-history results.
        git_cache: copies of base histories (:func:`repogate.git.cached_history`).
        isolation: the isolation in force, as every decision records it.
        isolation_kind: the sandbox kind the head found and recorded in the run manifest
            (``bwrap``, ``unshare``, ``none``); a worker that cannot give the same refuses the
            attempt.
        weak_isolation: who allowed untrusted code to run without bubblewrap, or None.
        skip_sentinel_when_rejected: ``--skip-sentinel-when-rejected``: gate S is not run on an
            attempt a hard check has already failed.
    """

    attempt_id: str
    label: str
    contract: TransitionContract
    agent: Agent
    agent_name: str
    source: Path
    run_dir: Path
    work: Path
    evidence: Path
    env_cache: Path
    history_cache: Path
    git_cache: Path
    isolation: str
    isolation_kind: str
    weak_isolation: str | None
    skip_sentinel_when_rejected: bool = False


@dataclass(frozen=True)
class Started:
    """A worker began the attempt (process id ``pid`` on host ``host``)."""

    attempt_id: str
    pid: int
    host: str


@dataclass(frozen=True)
class ReceiptMade:
    """A gate finished: its receipt, bound to the candidate state it was observed on."""

    attempt_id: str
    receipt: Receipt
    state: CandidateState


@dataclass(frozen=True)
class Finished:
    """The attempt ended with a decision, or crashed (``crash``: the exception's type and message)."""

    attempt_id: str
    decision: Decision | None
    crash: Crash | None = None


AttemptEvent = Started | ReceiptMade | Finished
"""One message from a worker to the head."""


class Executor(Protocol):
    """Runs attempts and hands every event back to the head as it happens.

    ``name`` is how ``--executor`` chooses it and how the run manifest records it.
    """

    name: str

    def describe(self) -> dict[str, Any]:
        """Return the executor's spec for the run manifest (name, workers, versions).

        Its keys are :class:`repogate.manifest.ExecutorEntry`'s.
        """
        ...

    def run(self, jobs: Sequence[AttemptJob], on_event: Callable[[AttemptEvent], None]) -> None:
        """Run every job; call ``on_event`` in this (the head's) process, in each job's order.

        Every job ends with one :class:`Finished` (a lost worker is a crash),
        unless the run is interrupted: then the workers are stopped before this returns, and
        ``KeyboardInterrupt`` propagates.
        """
        ...
