"""One attempt inside a worker: run the pipeline and send every event back to the head.

Shared by every executor, so an attempt runs the same in the head's process, in a local worker
process and in a Ray task.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from repogate import sandbox
from repogate._files import storage_problem
from repogate._interrupted import interrupt_came
from repogate.attempt import AttemptConfig
from repogate.decision import Decision
from repogate.errors import IsolationError
from repogate.jobs import AttemptEvent, AttemptJob, Finished, ReceiptMade, Started
from repogate.pipeline import PHASES, run_attempt
from repogate.receipt import Crash, Receipt
from repogate.state import CandidateState

INTERRUPTS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGALRM})
"""The signals that raise ``KeyboardInterrupt`` (SIGALRM: a swallowed Ctrl-C raised again).

Held back by :func:`interrupt_deferred` in the main thread, and always by any other thread of
ours: a signal sent to the process goes to a thread that does not hold it back, and Python then
raises it in the main thread at once, held back there or not."""


@contextmanager
def interrupt_deferred() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT, and SIGTERM taken as it) back while the block runs; raised right after.

    For cleanup that must finish once begun (removing an attempt's working folder): an interrupt
    there would leave half a folder and surface as an error from the middle of the removal.
    SIGALRM is held back too: it raises again a Ctrl-C Python swallowed
    (:class:`repogate._interrupted.sigterm_as_ctrl_c`). Off the main thread (where Python
    delivers no signal) this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


Emit = Callable[[AttemptEvent], None]
"""Sends one event towards the head (a direct call, a pipe, a Ray stream)."""


class _Channel:
    """An evidence sink that turns the pipeline's writes into events for the head."""

    def __init__(self, run_dir: Path, emit: Emit) -> None:
        self._run_dir = run_dir
        self._emit = emit

    @property
    def run_dir(self) -> Path:
        return self._run_dir

    def add_receipt(self, attempt_id: str, receipt: Receipt, state: CandidateState) -> None:
        self._emit(ReceiptMade(attempt_id, receipt, state))

    def finish_attempt(
        self, attempt_id: str, decision: Decision | None, crash: Crash | None = None
    ) -> None:
        self._emit(Finished(attempt_id, decision, crash))


def perform(job: AttemptJob, emit: Emit) -> None:
    """Run ``job``'s attempt and ``emit`` its events: Started, each receipt, Finished.

    A crash of the attempt (any ``Exception``) is emitted as a ``Finished`` with the crash as a
    :class:`~repogate.receipt.Crash`; ``KeyboardInterrupt`` propagates with nothing more emitted. The attempt's
    scratch folder is removed either way. A worker (a Ray node) whose sandbox is not the one the
    head recorded in the run manifest refuses the attempt (a crash naming both), so isolation
    never weakens silently on another machine.
    """
    host = socket.gethostname()
    emit(Started(job.attempt_id, os.getpid(), host))
    channel = _Channel(job.run_dir, emit)
    try:
        here = sandbox.isolation(False).kind
        if here != job.isolation_kind:
            raise IsolationError(
                f"worker on {host} isolates tests with {here!r}, the run manifest says "
                f"{job.isolation_kind!r}",
                "give every node the same sandbox tools",
            )
        cfg = AttemptConfig(
            contract=job.contract,
            agent=job.agent,
            agent_name=job.agent_name,
            source=job.source,
            work=job.work,
            evidence=job.evidence,
            env_cache=job.env_cache,
            history_cache=job.history_cache,
            git_cache=job.git_cache,
            store=channel,
            attempt_id=job.attempt_id,
            isolation=job.isolation,
            skip_sentinel_when_rejected=job.skip_sentinel_when_rejected,
        )
        with sandbox.allowing_weak_isolation(job.weak_isolation):
            run_attempt(cfg, PHASES)
    except Exception as exc:  # one attempt's crash is data; the run goes on
        if interrupt_came():  # the user's Ctrl-C, made an error by a library: not a crash
            raise KeyboardInterrupt from exc
        if storage_problem(exc) is not None:
            raise  # the disk's fault, not the attempt's: it stays unfinished, redone on resume
        channel.finish_attempt(job.attempt_id, None, crash=Crash.of(exc))
    finally:
        with interrupt_deferred():
            shutil.rmtree(job.work, ignore_errors=True)
