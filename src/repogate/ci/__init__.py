"""CI gate mode: ``repogate gate`` on a live pull request, in the repository its CI checked out.

:mod:`~repogate.ci.request` resolves base, head and contract from options and GitHub Actions'
variables; :mod:`~repogate.ci.gate` runs the pipeline on the head and reports the verdict.
"""

from __future__ import annotations

from repogate.ci.gate import GateOutcome, exit_code, markdown_summary, run_gate
from repogate.ci.request import GateRequest, resolve_request

__all__ = [
    "GateOutcome",
    "GateRequest",
    "exit_code",
    "markdown_summary",
    "resolve_request",
    "run_gate",
]
