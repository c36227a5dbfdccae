"""A finished pytest run made from its outcomes alone, for tests of the rerun and selection steps."""

from __future__ import annotations

from repogate.oracles.junit import TestOutcome
from repogate.oracles.pytest_runner import ExecSummary, TestRun
from repogate.sandbox import Isolation


def test_run(outcomes: dict[str, TestOutcome], status: str = "ok") -> TestRun:
    """Return a run with ``outcomes``: ``status`` ``ok``, else an ``error`` run with that reason."""
    quiet = ExecSummary(
        returncode=0 if status == "ok" else 3,
        duration_s=0.5,
        timed_out=False,
        truncated_bytes=0,
        stdout_tail="",
        stderr_tail="",
        isolation=Isolation(kind="none", network_off=False),
    )
    return TestRun(
        status="ok" if status == "ok" else "error",
        reason="" if status == "ok" else status,
        outcomes=outcomes,
        collected=len(outcomes),
        command=("pytest",),
        report_path=None,
        report_sha256=None,
        execution=quiet,
    )


test_run.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test pytest should collect
