"""The local executor: attempts in this process (one worker) or in a pool of worker processes.

With ``workers == 1`` each attempt runs here, one after another, and writes the store directly,
as a serial run always has. With more, ``workers`` processes (started by ``spawn``, never ``fork``:
the head may hold threads and an open database; and a spawned worker has the head's environment
variables as they are when the run starts) each run one attempt at a time and send
its events over their own pipe; the head waits on every pipe and every process at once
(:func:`multiprocessing.connection.wait`) and writes each event to the store as it arrives, so the
store has one writer and a receipt is stored as soon as its gate finishes.

A worker that dies (kill -9, out of memory) ends its attempt as a crash and is replaced; the run
goes on. Ctrl-C in the head (or SIGINT to the head alone) stops every worker: each is sent SIGTERM,
which it turns into ``KeyboardInterrupt`` so the sandbox kills the commands it ran, and is killed
after a grace period; attempts left unfinished stay ``running`` in the store, to be redone on
resume. Workers ignore the terminal's SIGINT, so one Ctrl-C is handled once, by the head.

A pool of our own processes rather than :class:`concurrent.futures.ProcessPoolExecutor`: stopping
workers on Ctrl-C and telling which attempt a dead worker held need the workers' process ids, which
that pool keeps private before Python 3.14.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any

from repogate.executors._perform import INTERRUPTS, perform
from repogate.jobs import AttemptEvent, AttemptJob, Finished
from repogate.receipt import Crash

STOP_GRACE_S = 10.0
"""Seconds a stopped worker has to kill its sandboxed commands before it is killed itself."""


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: let the cleanup finish
    raise KeyboardInterrupt


def _orphaned() -> None:
    """Wait for the head to die (even by kill -9), then stop this worker as on Ctrl-C.

    This thread holds every interrupt back, so the head's SIGTERM goes to the main thread
    alone, and waits while :func:`~repogate.executors._perform.interrupt_deferred` holds it.
    """
    signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    head = multiprocessing.parent_process()
    if head is not None:
        head.join()
        os.kill(os.getpid(), signal.SIGTERM)


def _serve(conn: Connection) -> None:
    """A worker's main loop: receive a job, run it, send its events; stop on ``None``.

    A worker whose head died stops too, so a rerun never shares an attempt's folders with it.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _interrupt)
    threading.Thread(target=_orphaned, name="repogate-orphan-watch", daemon=True).start()
    with contextlib.suppress(KeyboardInterrupt, EOFError, BrokenPipeError):
        while (job := conn.recv()) is not None:
            perform(job, conn.send)


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    job: AttemptJob | None = None


class LocalExecutor:
    """Run attempts on this machine, ``workers`` at a time.

    Args:
        workers: how many attempts run at once (1 runs them in this process).

    Raises:
        ValueError: ``workers`` is below 1.
    """

    name = "local"

    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers

    def describe(self) -> dict[str, Any]:
        """Return ``{"name": "local", "workers": N}``."""
        return {"name": self.name, "workers": self.workers}

    def run(self, jobs: Sequence[AttemptJob], on_event: Callable[[AttemptEvent], None]) -> None:
        """Run every job; see :class:`repogate.jobs.Executor`."""
        if self.workers == 1:
            for job in jobs:
                perform(job, on_event)
            return
        _Pool(min(self.workers, len(jobs)), on_event).run(jobs)


class _Pool:
    """The head's side of the worker processes: hand out jobs, relay events, replace the dead."""

    def __init__(self, size: int, on_event: Callable[[AttemptEvent], None]) -> None:
        self._ctx = multiprocessing.get_context("spawn")
        self._size = size
        self._on_event = on_event
        self._workers: list[_Worker] = []

    def _start(self) -> _Worker:
        ours, theirs = self._ctx.Pipe()
        process = self._ctx.Process(target=_serve, args=(theirs,), daemon=True)
        process.start()
        theirs.close()  # so a dead worker's pipe reads as closed
        worker = _Worker(process, ours)
        self._workers.append(worker)
        return worker

    def run(self, jobs: Sequence[AttemptJob]) -> None:
        queue = list(reversed(jobs))
        try:
            for _ in range(self._size):
                self._hand_out(self._start(), queue)
            while any(w.job is not None for w in self._workers):
                busy = {w.conn: w for w in self._workers if w.job is not None}
                for conn in wait(list(busy)):
                    self._receive(busy[conn], queue)  # type: ignore[index]
        finally:
            self._stop()

    def _hand_out(self, worker: _Worker, queue: list[AttemptJob]) -> None:
        worker.job = queue.pop() if queue else None
        if worker.job is None:
            with contextlib.suppress(OSError):
                worker.conn.send(None)
        else:
            worker.conn.send(worker.job)

    def _receive(self, worker: _Worker, queue: list[AttemptJob]) -> None:
        job = worker.job
        assert job is not None
        try:
            event = worker.conn.recv()
        except (EOFError, OSError):  # the worker died mid-attempt
            worker.process.join()
            self._workers.remove(worker)
            worker.conn.close()
            code = worker.process.exitcode
            self._on_event(
                Finished(
                    job.attempt_id,
                    None,
                    crash=Crash(type="WorkerDied", message=f"worker exited with {code}"),
                )
            )
            if queue:
                self._hand_out(self._start(), queue)
            return
        self._on_event(event)
        if isinstance(event, Finished):
            self._hand_out(worker, queue)

    def _stop(self) -> None:
        """Stop every worker: a clean one exits on ``None``; a busy one gets SIGTERM, then SIGKILL."""
        for worker in self._workers:
            if worker.job is not None and worker.process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.process.pid, signal.SIGTERM)
        for worker in self._workers:
            worker.process.join(STOP_GRACE_S)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self._workers.clear()
