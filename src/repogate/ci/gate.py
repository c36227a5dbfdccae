"""``repogate gate``: evaluate a pull request's head as the candidate, in the repository CI runs in.

No agent runs: the candidate is the head commit's tree (the ``commit:SHA`` agent,
:mod:`repogate.agents.commit`), and the whole pipeline (gates E, I, V, R, A, S by the contract's
profile) decides it, as ``repogate run`` would. The verdict is stored as a one-attempt run under
``--out`` (signed when a key is given), summarised in Markdown for ``$GITHUB_STEP_SUMMARY``
(https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#adding-a-job-summary),
and turned into the job's exit code: 0 accepted, 1 not accepted; in shadow mode always 0, the
verdict recorded all the same. Merge authority stays with the repository: repogate never merges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from securesystemslib.signer import Signer

from repogate.agent_spec import CommitSpec
from repogate.ci.request import GateRequest
from repogate.decision import Decision
from repogate.errors import ExitCode
from repogate.runner import PlannedAttempt, RunOptions, run
from repogate.store import AttemptRecord

__all__ = ["GateOutcome", "exit_code", "markdown_summary", "run_gate"]

SUMMARY_FILE = "summary.md"


@dataclass(frozen=True)
class GateOutcome:
    """What one gate run produced.

    Attributes:
        record: the stored attempt (its decision, or its crash).
        summary: the Markdown summary.
        signed_by: the signing key's id, or None when unsigned.
    """

    record: AttemptRecord
    summary: str
    signed_by: str | None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:300]


def markdown_summary(
    request: GateRequest, record: AttemptRecord, signed_by: str | None, shadow: bool
) -> str:
    """Return the Markdown summary of one gate run: verdict, commits, every hard check."""
    decision: Decision | None = record.decision
    verdict = decision.outcome if decision is not None else "crashed"
    mark = {"accepted": "✅", "rejected": "❌", "error": "⚠️"}.get(verdict, "⚠️")
    lines = [
        f"## repogate gate: {mark} {verdict}",
        "",
        f"- contract `{request.contract.id}` ({request.contract.profile} profile)",
        f"- base `{request.base}` ({', '.join(request.said_by[1:])})",
        f"- head `{request.head}` ({request.said_by[0]})",
    ]
    if decision is not None:
        lines.append(f"- state id `{decision.state_id}`")
    lines.append(
        f"- signed with key `{signed_by[:16]}` (check with `repogate verify`)"
        if signed_by
        else "- not signed (give `--sign-key` to sign the verdict)"
    )
    if shadow:
        lines.append("- shadow mode: the verdict is recorded and does not fail the job")
    if decision is None:
        crash = record.crash
        lines += ["", f"repogate crashed: {_cell(str(crash)) if crash else 'no decision'}"]
        return "\n".join(lines) + "\n"
    lines += ["", "| check | status | detail |", "|---|---|---|"]
    lines += [f"| {c.name} | {c.status} | {_cell(c.detail)} |" for c in decision.checks]
    return "\n".join(lines) + "\n"


def exit_code(record: AttemptRecord, shadow: bool) -> ExitCode:
    """0 when accepted or in shadow mode; 1 when not accepted; 3 when repogate crashed."""
    if shadow or (record.decision is not None and record.decision.accepted):
        return ExitCode.OK
    return ExitCode.NOT_ACCEPTED if record.decision is not None else ExitCode.INTERNAL


def run_gate(
    request: GateRequest,
    out: Path,
    *,
    signer: Signer | None,
    shadow: bool,
    weak_isolation: str | None,
    env: Mapping[str, str],
) -> GateOutcome:
    """Run the pipeline on ``request``'s head, store and sign the verdict, write the summaries.

    Args:
        request: the resolved pull request.
        out: the run folder (one attempt; rerun on the same head resumes it).
        signer: signs the decision and run summary; None leaves them unsigned.
        shadow: record the verdict without failing the job (said in the summary).
        weak_isolation: who allowed running without bubblewrap, or None.
        env: the environment: ``GITHUB_STEP_SUMMARY``, when set, gets the summary appended.

    Raises:
        UserInputError: the contract or repository is unusable (nothing written).
        IsolationError: bubblewrap is not usable and weak isolation was not allowed.
    """
    plan = PlannedAttempt(
        request.contract, f"gate {request.contract.source_file}", CommitSpec(arg=request.head)
    )
    options = RunOptions(
        out=out,
        selection=f"repogate gate: head {request.head[:12]} on base {request.base[:12]}",
        weak_isolation=weak_isolation,
        signer=signer,
    )
    records = run([plan], options)
    record = records[-1]
    signed_by = signer.public_key.keyid if signer is not None else None
    summary = markdown_summary(request, record, signed_by, shadow)
    (out / SUMMARY_FILE).write_text(summary, encoding="utf-8")
    step_summary = env.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with Path(step_summary).open("a", encoding="utf-8") as handle:
            handle.write(summary)
    return GateOutcome(record, summary, signed_by)
