"""The non-compensating decision: every hard check of the profile passes, or the change is not accepted.

Hard checks come in a fixed order. The first four are derived from the candidate state's identity;
the rest are read from the receipts the gates produced. Soft metrics (cost, time, review minutes,
retries, changed lines) are reported beside the verdict and never change it: no saving in one
place buys back a failed gate in another.

A check no receipt reports counts as failed (no evidence is not a pass), and so does a check its
gates reported only as ``skipped`` (not run), unless another hard check really failed: then the
skipped check stays ``skipped`` and the decision names only the checks that stopped the attempt
(``repogate run --skip-sentinel-when-rejected`` leaves gate S out of an attempt already rejected,
:func:`failed_before`). A check whose receipt is an ``error`` counts as errored: the evaluator's or
the environment's fault, reported apart and never scored as a wrong patch.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field, StrictFloat, StrictInt

from repogate._model import FrozenModel, SchemaVersion
from repogate.receipt import Artifact, Check, Crash, Receipt, Status
from repogate.state import CandidateState, sha256_hex
from repogate.vocabulary import (
    CHECK_TABLE,
    PROFILE_CHECKS,
    PROFILE_VERSIONS,
    RECONSTRUCTION_FUNNEL,
    REPORTS,
    STAGE_CHECKS,
    CheckName,
    ErrorKind,
    GateId,
    PhaseName,
    Profile,
    StageName,
    first_kind,
)

EMPTY_DIFF_DIGEST = sha256_hex(b"")

IDENTITY_CHECKS: tuple[CheckName, ...] = tuple(r.name for r in CHECK_TABLE if r.identity)
"""Checks derived from the candidate state's identity, not read from a receipt."""
HERMETIC_CHECKS: tuple[CheckName, ...] = PROFILE_CHECKS["hermetic"]
LIFECYCLE_CHECKS: tuple[CheckName, ...] = PROFILE_CHECKS["lifecycle"]
ADVISORY_CHECKS: tuple[CheckName, ...] = tuple(r.name for r in CHECK_TABLE if not r.hard_in)
"""Checks reported in every profile beside the verdict; one is hard only where the contract asks
(:attr:`Evidence.also_hard`: ``oracles.differential = "hard"``)."""
STAGES: dict[StageName, tuple[CheckName, ...]] = STAGE_CHECKS
SWEBENCH_CHECKS: tuple[CheckName, ...] = tuple(r.name for r in CHECK_TABLE if r.resolved)
"""The checks of gate V's graded run that make SWE-bench's "resolved"."""

Outcome = Literal["accepted", "rejected", "error"]


def hard_checks(profile: Profile, also_hard: Iterable[CheckName] = ()) -> tuple[CheckName, ...]:
    """Return the hard checks of ``profile``, in the order failures are reported.

    ``also_hard`` names advisory checks (:data:`ADVISORY_CHECKS`) the contract makes hard; they
    follow the profile's own.
    """
    return (*PROFILE_CHECKS[profile], *(n for n in ADVISORY_CHECKS if n in set(also_hard)))


class SoftMetrics(FrozenModel):
    """Operating measures observed beside the hard gates; they never change the verdict.

    Units: minutes, US dollars, seconds, counts.
    """

    review_minutes: StrictFloat = 0.0
    agent_cost_usd: StrictFloat = 0.0
    wall_time_s: StrictFloat = 0.0
    retries: StrictInt = 0
    changed_lines: StrictInt = 0
    review_rounds: StrictInt = 0
    extra_repair_effort: StrictInt = 0
    tokens: StrictInt = 0

    def text(self) -> str:
        """The measures that are not zero, as a person reads them, in field order.

        For example ``agent cost $0.0123, wall time 12.4 s, tokens 12,345``; ``""`` when all are
        zero. Each is written by :func:`measure_text`.
        """
        shown = [measure_text(n, v) for n, v in self.model_dump().items() if v]
        return ", ".join(shown)


_SOFT_LABELS = {
    "review_minutes": "review",
    "agent_cost_usd": "agent cost",
    "wall_time_s": "wall time",
    "retries": "retries",
    "changed_lines": "changed lines",
    "review_rounds": "review rounds",
    "extra_repair_effort": "extra repair effort",
    "tokens": "tokens",
}


def measure_value(name: str, value: float) -> str:
    """One soft measure's value with its unit: ``12.4 s``, ``$0.0123``, ``2.5 min``, ``12,345``.

    Seconds to a tenth (two significant digits under one second), US dollars to the cent (three
    significant digits under a dollar), minutes to three significant digits, counts whole with
    thousands separators (a median of counts may be a half: ``1.5``).

    Args:
        name: a :class:`SoftMetrics` field name; its suffix gives the unit (``_s``, ``_usd``,
            ``_minutes``, else a count).
        value: the measure.
    """
    if name.endswith("_s"):
        return f"{value:.1f} s" if abs(value) >= 1 else f"{value:.2g} s"
    if name.endswith("_usd"):
        return f"${value:,.2f}" if abs(value) >= 1 else f"${value:.3g}"
    if name.endswith("_minutes"):
        return f"{value:.3g} min"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:.3g}"


def measure_label(name: str) -> str:
    """A soft measure's name as a person says it: ``wall_time_s`` is ``wall time``."""
    return _SOFT_LABELS.get(name, name.replace("_", " "))


def measure_text(name: str, value: float) -> str:
    """One soft measure as a person reads it: ``wall time 12.4 s`` (:func:`measure_value`)."""
    return f"{measure_label(name)} {measure_value(name, value)}"


class Evidence(FrozenModel):
    """Everything a decision reads: the state the harness computed, the agent's claim, the receipts.

    Attributes:
        schema_version: version of this record (1); another version is refused.
        task_id: the contract's id.
        profile: ``hermetic`` or ``lifecycle``.
        state: the candidate state as the harness computed it.
        submitted_patch_digest: the patch digest the proposal claims (what the agent submitted).
        receipts: every receipt of the attempt.
        soft: soft metrics.
        isolation: the isolation untrusted code ran under (``WEAK ISOLATION ...`` when weaker
            than bubblewrap's allowlist).
        stopped_at: the phase that stopped the attempt (None: it ran to the end).
        assurance: what the verdict's evidence cannot show, when weaker than usual
            (:data:`repogate.vocabulary.RUNNER_UNDER_TEST_ASSURANCE`); empty otherwise.
        also_hard: advisory checks the contract makes hard (``behaviour_matches_reference``
            under ``oracles.differential = "hard"``).
    """

    schema_version: SchemaVersion = 1
    task_id: str
    profile: Profile
    state: CandidateState
    submitted_patch_digest: str
    receipts: tuple[Receipt, ...] = ()
    soft: SoftMetrics = Field(default_factory=SoftMetrics)
    stopped_at: PhaseName | None = None
    isolation: str = ""
    assurance: str = ""
    also_hard: tuple[CheckName, ...] = ()


class Decision(FrozenModel):
    """The verdict for one attempt.

    Attributes:
        accepted: every hard check of the profile passed.
        outcome: ``accepted``; ``rejected`` when a check failed (the agent's); ``error`` when none
            failed but one errored (the evaluator's or environment's, never scored as a wrong patch).
        failed: failed hard checks, in the profile's order.
        errored: hard checks that could not be decided, in the same order.
        checks: every hard check as resolved.
        stages: partial progress, stage name to status.
        soft: soft metrics, beside the verdict.
        isolation: the isolation untrusted code ran under, from the evidence.
        assurance: the weaker assurance the verdict carries, from the evidence (empty when
            none): ``the runner under test produced the verdicts ...`` for a contract with
            ``[oracles] runner_under_test``.
        resolved: SWE-bench's "resolved": every FAIL_TO_PASS and every declared PASS_TO_PASS
            test passed on the candidate (gate V's graded run), whatever the other checks say;
            kept beside ``accepted`` for comparison with SWE-bench's numbers
            (``swebench/harness/grading.py``, ``get_resolution_status``: ``FULL``).
        advisory: the advisory checks (:data:`ADVISORY_CHECKS`) not hard for this attempt, as
            observed: reported beside the verdict, never changing it.
        receipt_digests: the attempt's receipt files (path relative to the attempt folder) with
            the sha256 of each, filled in by the store when it records the decision: the link
            from the decision to its evidence in the store's digest chain (:mod:`repogate.store._chain`).
        profile_version: the profile's version the attempt was decided under
            (:data:`repogate.vocabulary.PROFILE_VERSIONS`); None in a decision stored before
            profiles had versions (its check list is then not known from the record).
    """

    schema_version: SchemaVersion = 1
    task_id: str
    profile: Profile
    state_id: str
    accepted: bool
    outcome: Outcome
    failed: tuple[str, ...]
    errored: tuple[str, ...]
    checks: tuple[Check, ...]
    stages: dict[str, Status]
    soft: SoftMetrics
    isolation: str = ""
    assurance: str = ""
    resolved: bool = False
    advisory: tuple[Check, ...] = ()
    receipt_digests: tuple[Artifact, ...] = ()
    profile_version: int | None = None


def _resolved(receipts: Iterable[Receipt]) -> bool:
    """SWE-bench's resolved: the candidate's graded run passed FAIL_TO_PASS and declared PASS_TO_PASS.

    Read from gate ``V``'s receipt for the candidate tree only: the base-passing regression step
    (``V-regression``) and extra commands (``V-commands``) are repogate's, not SWE-bench's.
    """
    graded = [r for r in receipts if r.gate == "V" and r.graded_tree == "candidate"]
    seen = {c.name: c.passed for r in graded if r.crash is None for c in r.checks}
    return bool(graded) and all(seen.get(name, False) for name in SWEBENCH_CHECKS)


def _identity_checks(evidence: Evidence) -> dict[str, Check]:
    """The identity checks (:data:`IDENTITY_CHECKS`), read from the candidate state itself."""
    state = evidence.state
    if not state.candidate_commit:
        why = f"no candidate: the attempt stopped at {evidence.stopped_at or 'an early phase'}"
        return {
            name: Check.error(name, why, "other evaluator error")
            if name != "base_commit_recorded"
            else Check(name=name, status="passed")
            if state.base_commit
            else Check.error(name, "", "other evaluator error")
            for name in IDENTITY_CHECKS
        }
    unbound = sorted({r.gate for r in evidence.receipts if r.state_id != state.state_id})
    new_state = (
        state.candidate_commit != state.base_commit and state.patch_digest != EMPTY_DIFF_DIGEST
    )
    values = {
        "base_commit_recorded": (bool(state.base_commit), state.base_commit or "no base commit"),
        "patch_is_a_new_state": (new_state, "" if new_state else "the candidate equals the base"),
        "evidence_bound_to_patch": (
            not unbound,
            f"receipts bound to another state: {', '.join(unbound)}" if unbound else "",
        ),
        "patch_digest_verified": (
            evidence.submitted_patch_digest == state.patch_digest,
            ""
            if evidence.submitted_patch_digest == state.patch_digest
            else f"submitted {evidence.submitted_patch_digest[:12]}, "
            f"candidate {state.patch_digest[:12]}",
        ),
    }
    return {
        name: Check(name=name, status="passed" if ok else "failed", detail=detail)
        for name, (ok, detail) in values.items()
    }


_TIMEOUTS = frozenset({"TimeoutExpired", "TimeoutError"})
"""Exception types that mean a budget ran out: :class:`subprocess.TimeoutExpired` and the
built-in :class:`TimeoutError`."""


def _crash_kind(crash: Crash) -> ErrorKind:
    """A gate's crash as an error kind: ``timeout`` for a budget's exception, else ``harness crash``."""
    return "timeout" if crash.type in _TIMEOUTS else "harness crash"


def _fold(name: CheckName, receipts: Iterable[Receipt]) -> Check:
    """Combine every report of ``name``: an errored receipt errors it, any failure fails it.

    A check no receipt reports fails (no evidence is not a pass), unless a gate of the attempt
    crashed: a crashed gate reports no checks, and what it would have decided is the evaluator's
    fault, so the missing check is an ``error`` naming the crash. A crashed gate that reports
    ``name`` (:data:`repogate.vocabulary.REPORTS`) errors it even when another gate passed it.

    An errored result always has a kind: a crash's is ``harness crash`` unless the phase said
    otherwise (gate E's ``environment build``); several errors fold to the kind that counts
    (:func:`repogate.vocabulary.first_kind`); a gate's error given none is an
    ``other evaluator error``.
    """
    receipts = tuple(receipts)
    found: list[Check] = []
    for receipt in receipts:
        own = [c for c in receipt.checks if c.name == name]
        if receipt.crash is None:
            found.extend(own)
        elif own:  # the phase said what the crash means for the check (gate E does)
            crashed_kind = _crash_kind(receipt.crash)
            found.extend(
                c.model_copy(update={"status": "error", "kind": c.kind or crashed_kind})
                for c in own
            )
        elif name in REPORTS[receipt.gate]:
            crash = f"{receipt.gate} crashed: {receipt.crash.type}: {receipt.crash.message}"
            found.append(Check.error(name, f"not observed; {crash}", _crash_kind(receipt.crash)))
    if not found:
        crashed = [(r.gate, r.crash) for r in receipts if r.crash is not None]
        if crashed:
            crashes = [f"{gate} crashed: {c.type}: {c.message}" for gate, c in crashed]
            kind = first_kind(_crash_kind(c) for _, c in crashed) or "harness crash"
            return Check.error(name, "not observed; " + "; ".join(crashes), kind)
        return Check(name=name, status="failed", detail="no receipt reports this check")
    errors = [c for c in found if c.status == "error"]
    if errors:
        kind = first_kind(c.kind for c in errors) or "other evaluator error"
        return Check.error(name, "; ".join(c.detail for c in errors if c.detail), kind)
    for status in ("failed", "skipped"):
        bad = [c for c in found if c.status == status]
        if bad:
            return Check(
                name=name, status="failed", detail="; ".join(c.detail for c in bad if c.detail)
            )
    return Check(name=name, status="passed", detail="; ".join(c.detail for c in found if c.detail))


def _only_skipped(name: CheckName, receipts: Iterable[Receipt]) -> bool:
    """True when the gates that finished report ``name`` and every report of it is ``skipped``."""
    own = [c for r in receipts if r.crash is None for c in r.checks if c.name == name]
    return bool(own) and all(c.status == "skipped" for c in own)


def _advisory(name: CheckName, receipts: tuple[Receipt, ...]) -> Check:
    """Fold an advisory check as a hard one is folded, but keep ``skipped`` as it is.

    ``skipped`` is "not applicable", said so in the detail: reported, never scored.
    """
    folded = _fold(name, receipts)
    if _only_skipped(name, receipts):
        return folded.model_copy(update={"status": "skipped"})
    return folded


def _hard(evidence: Evidence) -> dict[CheckName, Check]:
    """Every hard check of ``evidence``'s profile as folded (:func:`_fold`), in the profile's order.

    A check reported only as ``skipped`` is folded to ``failed`` here (no evidence is not a
    pass); :func:`_stopping` tells those apart.
    """
    identity = _identity_checks(evidence)
    return {
        name: identity[name] if name in identity else _fold(name, evidence.receipts)
        for name in hard_checks(evidence.profile, evidence.also_hard)
    }


def _stopping(checks: dict[CheckName, Check], receipts: Iterable[Receipt]) -> tuple[CheckName, ...]:
    """The failed checks among ``checks`` that really stopped the attempt: not those only skipped."""
    receipts = tuple(receipts)
    return tuple(
        n for n, c in checks.items() if c.status == "failed" and not _only_skipped(n, receipts)
    )


def failed_before(evidence: Evidence, gate: GateId) -> tuple[CheckName, ...]:
    """The hard checks ``evidence`` already fails before ``gate`` has run, in the profile's order.

    The checks ``gate`` reports (:data:`repogate.vocabulary.REPORTS`) are left out: not observed
    yet is no failure. So are checks reported only as ``skipped`` (no rejection by themselves)
    and errored checks (the evaluator's fault, never the agent's). Non-empty means the attempt is
    rejected whatever ``gate`` would observe (decisions are non-compensating), which is when
    ``repogate run --skip-sentinel-when-rejected`` leaves gate S out.

    Args:
        evidence: the attempt's evidence so far (the receipts of the phases that ran).
        gate: the gate about to run, e.g. ``"S"``.

    Returns:
        The names of the failed checks; empty when nothing has failed yet.
    """
    pending = set(REPORTS[gate])
    checks = {n: c for n, c in _hard(evidence).items() if n not in pending}
    return _stopping(checks, evidence.receipts)


def _kept_skipped(check: Check, receipts: tuple[Receipt, ...], rejected: bool) -> Check:
    """``check`` as ``skipped`` when the attempt is ``rejected`` and it was only ever skipped."""
    if rejected and check.status == "failed" and _only_skipped(check.name, receipts):
        return check.model_copy(update={"status": "skipped"})
    return check


def _stages(
    checks: dict[CheckName, Check], receipts: tuple[Receipt, ...], rejected: bool
) -> dict[str, Status]:
    """Return partial progress per stage, from hard checks and soft observations alike.

    A hermetic attempt still shows what its sentinel saw. A stage is ``error`` when one of its
    checks errored, else ``failed`` when one failed, else ``skipped`` when one was not run (a
    check of a ``rejected`` attempt reported only as ``skipped``; or no check reported), else
    ``passed``.
    """
    reported = {c.name for r in receipts for c in r.checks}
    stages: dict[str, Status] = {}
    for stage, names in STAGES.items():
        present = {
            checks[n].status
            if n in checks
            else _kept_skipped(_fold(n, receipts), receipts, rejected).status
            for n in names
            if n in checks or n in reported
        }
        stages[stage] = next(
            (s for s in ("error", "failed", "skipped") if s in present),
            "passed" if present else "skipped",
        )
    return {**_reconstruction_stages(receipts), **stages}


def _reconstruction_stages(receipts: tuple[Receipt, ...]) -> dict[str, Status]:
    """The stages an environment the agent supplied reached (``E-reconstruction``'s record).

    Each graded stage under its funnel name (:data:`RECONSTRUCTION_FUNNEL`); a stage after a
    failed one is absent (not reached). Empty when the evaluator supplied the environment.
    """
    found: dict[str, Status] = {}
    for receipt in receipts:
        if receipt.gate != "E-reconstruction" or receipt.crash is not None:
            continue
        for record in receipt.details.get("stages", ()):
            stage, status = record.get("stage"), record.get("status")
            if stage in RECONSTRUCTION_FUNNEL and status in ("passed", "failed"):
                found[RECONSTRUCTION_FUNNEL[stage]] = status
    return found


def decide(evidence: Evidence) -> Decision:
    """Apply the profile's hard checks to ``evidence`` without letting any compensate for another.

    Args:
        evidence: the state, the submitted digest and the receipts of one attempt.

    Returns:
        The decision; ``accepted`` only when every hard check passed. A hard check reported
        only as ``skipped`` is ``failed`` unless another really failed; then it stays
        ``skipped`` and ``failed`` names only the others.
    """
    receipts = evidence.receipts
    folded = _hard(evidence)
    rejected = bool(_stopping(folded, receipts))
    checks = {n: _kept_skipped(c, receipts, rejected) for n, c in folded.items()}
    reported = {c.name for r in receipts for c in r.checks}
    advisory = tuple(
        _advisory(name, receipts)
        for name in ADVISORY_CHECKS
        if name not in checks and name in reported
    )
    failed = tuple(n for n, c in checks.items() if c.status == "failed")
    errored = tuple(n for n, c in checks.items() if c.status == "error")
    outcome: Outcome = "rejected" if failed else "error" if errored else "accepted"
    return Decision(
        task_id=evidence.task_id,
        profile=evidence.profile,
        profile_version=PROFILE_VERSIONS[evidence.profile],
        state_id=evidence.state.state_id,
        accepted=outcome == "accepted",
        outcome=outcome,
        failed=failed,
        errored=errored,
        checks=tuple(checks.values()),
        stages=_stages(checks, receipts, rejected),
        soft=evidence.soft,
        isolation=evidence.isolation,
        assurance=evidence.assurance,
        resolved=_resolved(evidence.receipts),
        advisory=advisory,
    )
