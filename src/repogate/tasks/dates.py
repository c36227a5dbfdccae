"""Tests that depend on today's date: the reference run once more under a clock years ahead.

A task whose test passes only around the day it was written (a hard-coded year, an expiry date
compared with ``date.today()``, a certificate's lifetime) grades nobody correctly later; public
task sets carry such tests. Setting an environment variable cannot move Python's clock, so the run
uses libfaketime (Debian's ``faketime`` package: ``LD_PRELOAD`` of ``libfaketime.so.1`` with
``FAKETIME="+<days>d"``), which shifts ``time()``, ``gettimeofday()`` and ``clock_gettime()``
with a realtime clock for every dynamically linked program in the sandbox, the interpreter
included; the monotonic clock is left alone (``FAKETIME_DONT_FAKE_MONOTONIC=1``), so timeouts and
durations stay true. With that setting libfaketime 0.9.10 (Debian's) breaks an absolute sleep on
the monotonic clock, which Python 3.11+'s ``time.sleep`` is (``clock_nanosleep`` with
``TIMER_ABSTIME``: ``OSError: [Errno 22]``, wolfcw/libfaketime#426), and ``subprocess``'s timeouts
sleep with it; so under :data:`SHIFTED_CLOCK` the harness's own processes in the sandbox, the
test session's bootstrap and the services' launcher, sleep in ``select`` instead (a relative
timeout, which libfaketime passes through). A graded test that passed in every reference run and does not pass in the
shifted one depends on the date (libfaketime: https://github.com/wolfcw/libfaketime).

Without libfaketime the check is not run, and the validation record says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from repogate.oracles.pytest_runner import TestRun
from repogate.sandbox import SandboxPolicy
from repogate.tasks._outcomes import PASSED, always

SHIFTED_CLOCK = "REPOGATE_SHIFTED_CLOCK"
"""Set to ``1`` in the shifted run: the harness's processes in the sandbox then sleep in
``select`` (``repogate.oracles._guard_boot``, ``repogate.oracles._services_launch``)."""

SHIFT_DAYS = 3653
"""How far ahead the shifted clock runs: ten years (a hard-coded year is wrong by then)."""

_CANDIDATES = (
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)


def libfaketime() -> Path | None:
    """Return the installed libfaketime library, or None (``apt-get install faketime``)."""
    for name in _CANDIDATES:
        if Path(name).is_file():
            return Path(name)
    return None


def shifted(policy: SandboxPolicy, library: Path) -> SandboxPolicy:
    """Return ``policy`` with the clock of everything it runs shifted :data:`SHIFT_DAYS` ahead."""
    env = {
        **policy.env,
        "LD_PRELOAD": str(library),
        "FAKETIME": f"+{SHIFT_DAYS}d",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        SHIFTED_CLOCK: "1",
    }
    return policy.model_copy(update={"env": env})


def date_dependent(reference: Sequence[TestRun], later: TestRun, ids: Sequence[str]) -> list[str]:
    """Return the ids of ``ids`` that passed in every reference run but not under the later clock.

    Args:
        reference: the reference runs at today's date.
        later: the reference run under the shifted clock.
        ids: the graded ids (FAIL_TO_PASS and PASS_TO_PASS).
    """
    return [t for t in ids if always(reference, t, PASSED) and later.outcomes.get(t) != "passed"]
