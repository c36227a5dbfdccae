"""The Ray executor: each attempt a Ray task whose events stream back to the head's store.

Needs the optional extra ``repogate[ray]``; nothing else in repogate imports this module, so a run
without ``--executor ray`` never imports Ray. A task is a generator (Ray's streaming generators):
it runs the attempt in a thread and yields each event (started, each receipt as its gate
finishes, finished) as it is made; the head waits on every running task at once (``ray.wait``) and
writes each event to the run store, its one writer.

The cluster is the one ``ray.init`` already connected (a test's, a notebook's), else the one
``RAY_ADDRESS`` names, else a local one started here and shut down at the end. Each task asks for
one CPU and is never retried (a retried task would replay its receipts). A task whose worker died
is stored as a crash. Ctrl-C cancels every running task with ``force=True``: the worker process is
killed and bubblewrap's ``--die-with-parent`` takes the sandboxed commands with it.

What every node needs is in ``docs/distributed.md``: this repogate installed, the run directory,
the repositories and the environment cache at the same paths as on the head.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import ray
from ray.exceptions import RayError

from repogate._descendants import killed_on_failure
from repogate.errors import RepogateError
from repogate.executors._perform import perform
from repogate.jobs import AttemptEvent, AttemptJob, Finished
from repogate.receipt import Crash

START_TRIES = 3
"""Times a local cluster's start is tried when Ray's node misses its start-up wait."""

GCS_PORT_WAIT_S = 120
"""Seconds Ray waits for its GCS port unless ``RAY_gcs_server_port_wait_time_s`` says otherwise
(Ray's default is 30)."""

_NODE_TIMEOUT = "timed out during startup"


class RayStartError(RepogateError):
    """A local Ray cluster's node missed Ray's start-up wait in every try (``error:`` line, exit 3)."""


def start_local_cluster(tries: int = START_TRIES, **init: Any) -> int:
    """Start (``ray.init(**init)``) a local cluster, retrying when its node starts too slowly.

    Ray waits a fixed 30 s for its own node to register (``raylet_start_wait_time_s`` in
    ``ray/_private/node.py``, not configurable) and then raises a bare ``Exception``; on a machine
    at a load of ~20 it misses that wait. Each failure of that kind is shut down cleanly and
    tried again, up to ``tries`` times; the GCS port wait is lengthened to ``GCS_PORT_WAIT_S``
    unless the environment sets it. Whatever a failed try started (GCS server, raylet, agents:
    Ray keeps no handle on them when its node fails to start) is killed before the next try or
    the error, so no daemon is left behind.

    Returns:
        The try that started it (1-based).

    Raises:
        RayStartError: every try timed out (the message names the count and Ray's fixed wait).
        Exception: any other start-up failure, as Ray raised it, not retried.
    """
    os.environ.setdefault("RAY_gcs_server_port_wait_time_s", str(GCS_PORT_WAIT_S))
    for attempt in range(1, tries + 1):
        try:
            with killed_on_failure():  # a failed init leaves its daemons running, unreachable
                ray.init(**init)
        except Exception as exc:  # Ray raises a bare Exception when its node start times out
            ray.shutdown()
            if _NODE_TIMEOUT not in str(exc):
                raise
            continue
        return attempt
    raise RayStartError(
        f"the local Ray cluster did not start in {tries} tries: its node missed Ray's fixed "
        "30 s start-up wait each time (machine overloaded?); retry when the load is lower, or "
        "start it once with `ray start --head` and set RAY_ADDRESS"
    )


def _events(job: AttemptJob) -> Iterator[AttemptEvent]:
    """Run ``job`` in a thread of this Ray worker and yield its events as they are made."""
    made: queue.SimpleQueue[AttemptEvent | None] = queue.SimpleQueue()

    def work() -> None:
        try:
            perform(job, made.put)
        finally:
            made.put(None)

    threading.Thread(target=work, name=f"repogate-{job.attempt_id}", daemon=True).start()
    while (event := made.get()) is not None:
        yield event


class RayExecutor:
    """Run attempts as Ray tasks, at most ``workers`` at once (None: as many as the cluster takes).

    Args:
        workers: a cap on attempts in flight, or None for no cap beyond the cluster's CPUs.
    """

    name = "ray"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers

    def describe(self) -> dict[str, Any]:
        """Return the name, the cap on attempts in flight (None: none) and Ray's version."""
        return {"name": self.name, "workers": self.workers, "ray": ray.__version__}

    def run(self, jobs: Sequence[AttemptJob], on_event: Callable[[AttemptEvent], None]) -> None:
        """Run every job; see :class:`repogate.jobs.Executor`."""
        started_here = not ray.is_initialized()
        if started_here:
            start_local_cluster(include_dashboard=False, log_to_driver=False)
        task = ray.remote(num_cpus=1, max_retries=0, num_returns="streaming")(_events)
        waiting = list(reversed(jobs))
        running: list[tuple[Any, AttemptJob]] = []

        def submit() -> None:
            while waiting and (self.workers is None or len(running) < self.workers):
                job = waiting.pop()
                running.append((task.remote(job), job))

        try:
            submit()
            while running:
                ready, _ = ray.wait([gen for gen, _ in running], num_returns=1)
                for entry in [e for e in running if any(e[0] is r for r in ready)]:
                    if not _relay(entry, on_event):
                        running.remove(entry)
                submit()
        except BaseException:
            for gen, _ in running:
                ray.cancel(gen, force=True)
            raise
        finally:
            if started_here:
                ray.shutdown()


def _relay(entry: tuple[Any, AttemptJob], on_event: Callable[[AttemptEvent], None]) -> bool:
    """Hand on the next event of a ready task; return False when the task has ended."""
    gen, job = entry
    try:
        event = ray.get(next(gen))
    except StopIteration:
        return False
    except RayError as exc:  # the task's worker died, or the task failed outside the attempt
        on_event(Finished(job.attempt_id, None, crash=Crash.of(exc)))
        return False
    on_event(event)
    return True
