"""An interrupt Python swallows is delivered again: Ctrl-C or SIGTERM always ends the command.

Python cannot raise out of a finalizer, a weakref callback or the garbage collector: a
``KeyboardInterrupt`` its signal handler raises there is printed as "Exception ignored in ..."
and dropped. At a load of 10 one Ctrl-C to ``repogate tasks import`` landed in the callback
importlib runs when it frees a module lock (``_get_module_lock.<locals>.cb``) while the command
loaded a module lazily; the command went on to read its instance file, a FIFO no one wrote, and
waited for ever. Each shape below is such a place, with the signal sent by the process itself
so that it lands there every time; then the process blocks reading a FIFO, as the command did.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HANG_S = 60
"""Only turns a hang into a failure: the interrupt comes back within a fraction of a second."""

SHAPES = {
    # the shape seen at a load of 10: importlib's module-lock callback
    "weakref-callback": """
        class Thing: pass
        thing = Thing()
        ref = weakref.ref(thing, lambda _ref: land(signal.SIGINT))
        del thing
    """,
    "finalizer": """
        class Thing:
            def __del__(self): land(signal.SIGINT)
        Thing()
    """,
    "garbage-collector": """
        class Thing:
            def __del__(self): land(signal.SIGINT)
        first, second = Thing(), Thing()
        first.other, second.other = second, first  # a cycle: only the collector frees it
        del first, second
        gc.collect()
    """,
    "sigterm-in-a-finalizer": """
        class Thing:
            def __del__(self): land(signal.SIGTERM)
        Thing()
    """,
}

SCRIPT = """
import gc, os, signal, sys, weakref
from repogate._interrupted import sigterm_as_ctrl_c

def land(signum):
    # the signal arrives here, and its handler's KeyboardInterrupt is raised here
    os.kill(os.getpid(), signum)
    for _ in range(100_000):
        pass
    sys.stdout.write("not raised in the callback\\n")

with sigterm_as_ctrl_c():
    try:
{shape}
        sys.stdout.write("reading\\n")
        sys.stdout.flush()
        open(sys.argv[1]).read()  # a FIFO no one writes: only an interrupt ends this
    except KeyboardInterrupt:
        sys.stdout.write("interrupted\\n")
        sys.exit(130)
"""


def _run(shape: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    fifo = tmp_path / "instances.jsonl"
    os.mkfifo(fifo)
    body = textwrap.indent(textwrap.dedent(SHAPES[shape]), " " * 8)
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT.format(shape=body), str(fifo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # never left behind
        out, err = proc.communicate()
        pytest.fail(f"the interrupt was lost: still reading after {HANG_S} s\n{out}{err}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_an_interrupt_swallowed_by_python_is_delivered_again(shape: str, tmp_path: Path) -> None:
    done = _run(shape, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (130, "reading\ninterrupted\n", "")


def test_an_interrupt_outside_a_callback_is_delivered_once(tmp_path: Path) -> None:
    """The common case is untouched: one Ctrl-C, one ``KeyboardInterrupt`` (no second one
    arrives while the command unwinds and cleans up)."""
    script = """
import os, signal, sys, time
from repogate._interrupted import sigterm_as_ctrl_c

with sigterm_as_ctrl_c():
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt:
        time.sleep(0.5)  # cleanup: a second interrupt would land here
        sys.stdout.write("cleaned up\\n")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_S
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "cleaned up\n", "")


def test_other_unraisable_errors_are_still_reported(tmp_path: Path) -> None:
    """Only an interrupt is taken from Python's report of an error it could not raise."""
    script = """
from repogate._interrupted import sigterm_as_ctrl_c

class Thing:
    def __del__(self):
        raise ValueError("in a finalizer")

with sigterm_as_ctrl_c():
    Thing()
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_S
    )
    assert done.returncode == 0
    assert "Exception ignored" in done.stderr and "ValueError: in a finalizer" in done.stderr


TURNED = {
    # pydantic_core builds a serializer in native code; an interrupt raised in the Python it calls
    # there comes out as a SchemaError ("Error building `literal` serializer: KeyboardInterrupt"),
    # seen at a load of 10 while `tasks import` loaded its record types
    "chained": "raise RuntimeError('Error building serializer') from exc",
    "chain-cut": "raise RuntimeError('Error building serializer') from None",
    "an-exception-group": "raise ExceptionGroup('in a task group', [ValueError('x')])",
}

TURNED_SCRIPT = """
import os, signal, sys
from repogate._interrupted import sigterm_as_ctrl_c

try:
    with sigterm_as_ctrl_c():
        try:  # a library's own handling of what its callback raised
            os.kill(os.getpid(), signal.{signal})
            for _ in range(10_000_000):
                pass
        except BaseException as exc:
            {turned}
except KeyboardInterrupt:
    sys.stdout.write("interrupted\\n")
    sys.exit(130)
"""


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("turned", sorted(TURNED))
def test_an_interrupt_a_library_turned_into_its_own_error_is_an_interrupt(
    turned: str, signum: str
) -> None:
    script = TURNED_SCRIPT.format(signal=signum, turned=TURNED[turned])
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_S
    )
    assert (done.returncode, done.stdout, done.stderr) == (130, "interrupted\n", "")


def test_an_error_without_an_interrupt_stays_an_error() -> None:
    script = TURNED_SCRIPT.replace("os.kill(os.getpid(), signal.{signal})", "raise ValueError")
    done = subprocess.run(
        [sys.executable, "-c", script.format(turned=TURNED["chained"])],
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert done.returncode == 1 and done.stderr.rstrip().endswith("Error building serializer")


def test_a_callers_own_alarm_survives_the_block() -> None:
    """A program that calls :func:`repogate.cli.main` with a timer of its own keeps it."""
    script = """
import signal, sys, time
from repogate._interrupted import sigterm_as_ctrl_c

rang = []
signal.signal(signal.SIGALRM, lambda *_: rang.append(True))
signal.setitimer(signal.ITIMER_REAL, 0.3)
with sigterm_as_ctrl_c():
    pass
time.sleep(2)
sys.stdout.write(f"rang {len(rang)}\\n")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_S
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "rang 1\n", "")


CAUGHT_SCRIPT = """
import os, signal, sys, time
from repogate._interrupted import sigterm_as_ctrl_c
from repogate.receipt import observed

def gate():
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt as exc:  # a library's native code made it an error of its own
        raise RuntimeError("Error building serializer: KeyboardInterrupt") from exc

try:
    with sigterm_as_ctrl_c():
        receipt, _ = observed("V", "state", gate)
        sys.stdout.write(f"the run went on: a gate {receipt.status}\\n")
except KeyboardInterrupt:
    sys.stdout.write("interrupted\\n")
"""


def test_an_interrupt_a_library_turned_into_an_error_is_not_a_gate_s_crash() -> None:
    """Where a crash becomes data (a gate's ``error`` receipt, an attempt's or a candidate's
    crash) the run goes on, and the error would not leave the block: the interrupt would be
    lost, and the attempt stored as finished with the user's Ctrl-C as its crash."""
    done = subprocess.run(
        [sys.executable, "-c", CAUGHT_SCRIPT], capture_output=True, text=True, timeout=HANG_S
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "interrupted\n", "")
