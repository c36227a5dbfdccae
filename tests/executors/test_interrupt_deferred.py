"""Cleanup that must finish once begun holds back every interrupt, the re-delivered one too.

:func:`repogate.executors._perform.interrupt_deferred` holds SIGINT and SIGTERM back while an
attempt's working folder is removed. Since Ctrl-C swallowed by Python is raised again by SIGALRM
(:class:`repogate._interrupted.sigterm_as_ctrl_c`), SIGALRM is an interrupt too: one armed just
before the removal (a Ctrl-C that landed in a finalizer) must wait for its end like the others.
"""

from __future__ import annotations

import subprocess
import sys

CLEANUP = """
import os, signal, sys, time
from repogate.executors._perform import interrupt_deferred

def cleanup(before, inside):
    try:
        before()
        with interrupt_deferred():
            inside()
            for _ in range(20):
                time.sleep(0.01)
            sys.stdout.write("cleanup finished\\n")
        time.sleep(5)
    except KeyboardInterrupt:
        sys.stdout.write("interrupted\\n")
"""
"""A removal that takes 0.2 s, then a wait an interrupt ends; what it prints says the order."""

SCRIPT = (
    CLEANUP
    + """
import os, signal, sys, time
from repogate._interrupted import sigterm_as_ctrl_c
from repogate.executors._perform import interrupt_deferred

class Thing:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C lands in a finalizer: swallowed
        for _ in range(100_000):
            pass

with sigterm_as_ctrl_c():
    # raised again by SIGALRM a few ms later, inside the cleanup
    cleanup(before=Thing, inside=lambda: None)
"""
)


def _said(script: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``script`` run by this interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    return done.returncode, done.stdout, done.stderr


def test_a_redelivered_interrupt_waits_for_the_cleanup() -> None:
    assert _said(SCRIPT) == (0, "cleanup finished\ninterrupted\n", "")


WORKER = (
    CLEANUP
    + """
import multiprocessing, os, signal, sys, threading, time
from repogate.executors import local
from repogate.executors._perform import interrupt_deferred

class Head:
    def join(self):
        threading.Event().wait()  # the head lives on

multiprocessing.parent_process = lambda: Head()
signal.signal(signal.SIGTERM, local._interrupt)  # as local._serve sets it up
threading.Thread(target=local._orphaned, daemon=True).start()
time.sleep(0.1)
# the head stopping its workers
cleanup(before=lambda: None, inside=lambda: os.kill(os.getpid(), signal.SIGTERM))
"""
)


def test_a_worker_s_other_thread_does_not_take_the_interrupt_into_the_cleanup() -> None:
    """A pool worker's orphan watch is a second thread: a signal the main thread holds back
    went to it, and Python then raised it in the main thread, inside the cleanup."""
    assert _said(WORKER) == (0, "cleanup finished\ninterrupted\n", "")
