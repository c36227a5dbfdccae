"""What Ctrl-C prints, by command: one line on what is kept and how to go on; Ctrl-C never lost.

Imported by the console script's entry point before the rest of repogate loads (so it imports
nothing of repogate's), and by :mod:`repogate.cli`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the console script imports this module before anything else: keep it light
    from collections.abc import Callable, Sequence
    from sys import UnraisableHookArgs
    from types import FrameType

INTERRUPTED_MESSAGE = "interrupted: finished attempts are kept; rerun the same command to resume"
"""``repogate run``: its finished attempts are in the run folder."""
TASKS_INTERRUPTED_MESSAGE = (
    "interrupted: finished candidates are kept; rerun the same command to resume"
)
"""``tasks import`` and ``tasks mine``: each finished candidate is in the task-set folder."""
CHECK_INTERRUPTED_MESSAGE = "interrupted: nothing was kept; rerun the same command to check again"
"""``tasks check``: it writes no results, only a line per contract as it finishes."""
OTHER_INTERRUPTED_MESSAGE = "interrupted; rerun the same command"

_BY_COMMAND = {
    ("run",): INTERRUPTED_MESSAGE,
    ("tasks", "import"): TASKS_INTERRUPTED_MESSAGE,
    ("tasks", "mine"): TASKS_INTERRUPTED_MESSAGE,
    ("tasks", "check"): CHECK_INTERRUPTED_MESSAGE,
}


def interrupted_message(args: Sequence[str]) -> str:
    """The line Ctrl-C prints for the command line ``args`` (without the program name)."""
    words = tuple(args[:2])
    return _BY_COMMAND.get(words, _BY_COMMAND.get(words[:1], OTHER_INTERRUPTED_MESSAGE))


REDELIVER_S = 0.01
"""Seconds after Python swallowed an interrupt until it is raised again (by ``SIGALRM``)."""


class sigterm_as_ctrl_c:  # named as the function it stands for: `with sigterm_as_ctrl_c():`
    """While the block runs, SIGTERM is Ctrl-C, and a Ctrl-C Python swallowed comes back.

    SIGTERM raises ``KeyboardInterrupt`` in the main thread, as SIGINT does. A scheduler's stop
    (systemd, a CI runner's timeout, ``kill PID``) sends SIGTERM to the main process alone;
    handled as Ctrl-C it stops the whole tree the command started (each sandboxed command's
    session is killed as the interrupt unwinds), keeps what is finished, prints one line and
    exits 130, instead of dying at once with 143 and leaving that tree running.

    Python cannot raise out of a finalizer (``__del__``), a weakref callback or the garbage
    collector: a ``KeyboardInterrupt`` its signal handler raises there goes to
    :data:`sys.unraisablehook` ("Exception ignored in ...") and is dropped, and the command runs
    on as if no Ctrl-C had come (at a load of 10, one landed in the callback importlib runs as
    it frees a module lock, and ``tasks import`` then waited for ever on its input). While the
    block runs, such an interrupt is not printed but raised again :data:`REDELIVER_S` later, by
    ``SIGALRM`` (a real signal, so it also ends a blocking system call the command has entered
    meanwhile); any other error Python could not raise is reported as before.

    A library that calls back into Python from native code may turn the ``KeyboardInterrupt``
    raised there into an error of its own (pydantic_core's ``SchemaError: Error building
    `literal` serializer: KeyboardInterrupt``, seen as ``tasks import`` loaded its record
    types). An error that leaves the block after an interrupt came in it is therefore the
    interrupt: it leaves as ``KeyboardInterrupt``, chained to that error; where an error is made
    data and the command goes on (a gate's ``error`` receipt, a crash), :func:`interrupt_came`
    says to raise the interrupt instead. SIGINT is handled here too (when Python's own handler
    is in place: a command started with SIGINT ignored keeps ignoring it; an outer block's
    handler counts as Python's), so that its arrival is known; :attr:`received` says whether one
    came.

    Everything is put back when the block ends (a caller in the same process, such as a test
    runner calling :func:`repogate.cli.main`, keeps its own handlers and hook), and a pending
    re-delivery is cancelled. A caller's own SIGINT or SIGALRM handler is left in place (its
    SIGINT is not seen, and a swallowed interrupt is then reported and dropped as Python does).
    Off the main thread, where Python installs no handler, it does nothing. ``signal``, ``sys``
    and ``threading`` are imported on entry, not with the module: a Ctrl-C while they load is
    then inside the console script's guard.
    """

    def __init__(self) -> None:
        self.received = False
        """Whether SIGINT, SIGTERM or a re-delivery came while the block ran."""
        self._previous: dict[int, object] = {}
        self._previous_hook: Callable[[UnraisableHookArgs], object] | None = None
        self._armed = False

    def __enter__(self) -> sigterm_as_ctrl_c:
        import signal
        import sys
        import threading

        if threading.current_thread() is threading.main_thread():
            ours = [signal.SIGTERM]
            for signum, python_s in (
                (signal.SIGINT, signal.default_int_handler),
                (signal.SIGALRM, signal.SIG_DFL),
            ):
                handler = signal.getsignal(signum)
                if handler is python_s or _is_a_guard(handler):
                    ours.append(signum)
            for signum in ours:
                self._previous[signum] = signal.signal(signum, self._interrupt)
            self._previous_hook = sys.unraisablehook
            sys.unraisablehook = self._unraisable
            _ACTIVE.append(self)
        return self

    def _interrupt(self, _signum: int, _frame: FrameType | None) -> None:
        self.received = True
        raise KeyboardInterrupt

    def _unraisable(self, unraisable: UnraisableHookArgs) -> None:
        import signal

        if issubclass(unraisable.exc_type, KeyboardInterrupt) and signal.SIGALRM in self._previous:
            signal.setitimer(signal.ITIMER_REAL, REDELIVER_S)
            self._armed = True
        elif self._previous_hook is not None:
            self._previous_hook(unraisable)

    def __exit__(
        self, _type: type[BaseException] | None, error: BaseException | None, _tb: object
    ) -> None:
        self._restore()
        if self.received and isinstance(error, Exception):
            raise KeyboardInterrupt from error

    def _restore(self) -> None:
        import signal
        import sys

        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._armed = False
        if self._previous_hook is not None:
            sys.unraisablehook = self._previous_hook
            self._previous_hook = None
            if self in _ACTIVE:
                _ACTIVE.remove(self)
            for signum, handler in self._previous.items():
                signal.signal(signum, handler)  # type: ignore[arg-type]
            self._previous.clear()


def _is_a_guard(handler: object) -> bool:
    """Whether ``handler`` is an enclosing :class:`sigterm_as_ctrl_c`'s (the console script's)."""
    return isinstance(getattr(handler, "__self__", None), sigterm_as_ctrl_c)


_ACTIVE: list[sigterm_as_ctrl_c] = []
"""The blocks running now, outermost first."""


def interrupt_came() -> bool:
    """Whether an interrupt came in a :class:`sigterm_as_ctrl_c` block that is still running.

    For the places that turn an ``Exception`` into data and go on (a gate's ``error`` receipt,
    an attempt's or a candidate's crash): after an interrupt the error is most likely the
    interrupt a library turned into its own error, and the command is stopping, so it is raised
    as ``KeyboardInterrupt`` instead (the attempt stays unfinished, redone on resume).
    """
    return any(block.received for block in _ACTIVE)
