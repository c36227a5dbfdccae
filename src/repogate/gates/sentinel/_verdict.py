"""The sentinel's reading of a replayed window: the verdict, repair effort and residual unknowns.

Pure functions of the step records (:class:`repogate.gates.sentinel._replay.StepRecord`), the
regeneration result, the anchor (:mod:`repogate.gates.sentinel._anchor`) and the matrix entries (:mod:`repogate.gates.sentinel._survival`); no git,
no test runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from repogate._counted import counted
from repogate.contract import Sentinel
from repogate.gates.sentinel._anchor import Anchor
from repogate.gates.sentinel._follow_ups import FollowUp
from repogate.gates.sentinel._replay import ConflictFile, StepRecord
from repogate.gates.sentinel._survival import MatrixEntry, Regeneration
from repogate.receipt import Check
from repogate.vocabulary import CheckName, ErrorKind

CHECK: CheckName = "post_merge_sentinel_passed"
"""The check the sentinel reports."""


def repair_effort(conflicts: Iterable[ConflictFile], changelog: bool) -> dict[str, int]:
    """Count the changelog (or the semantic) conflicted files, hunks and lines of ``conflicts``."""
    files = [c for c in conflicts if c.changelog == changelog and not c.superseded]
    return {
        "files": len(files),
        "hunks": sum(c.hunks for c in files),
        "lines": sum(c.lines for c in files),
    }


def residual_unknowns(
    cfg: Sentinel, follow_ups: Sequence[FollowUp], steps: Sequence[StepRecord], anchor: Anchor
) -> list[str]:
    """Say what the window left unobserved: the contract's own notes, then the window's gaps."""
    notes = list(cfg.residual_unknowns)
    if anchor.status == "base" and anchor.landing is not None:
        notes.append(anchor.detail)
    wanted = cfg.follow_up_count
    if not cfg.follow_ups and wanted and len(follow_ups) < wanted:
        notes.append(
            f"history holds {len(follow_ups)} of the {counted(wanted, 'follow-up')} asked for"
        )
    between = sum(f.between for f in follow_ups)
    if between:
        notes.append(f"{between} commit(s) between the named follow-ups replayed with them")
    blocked = [s for s in steps if s.status == "blocked"]
    if blocked:
        notes.append(f"{len(blocked)} follow-up(s) not observed after a semantic conflict")
    notes += [f"follow-up {s.sha[:12]} selected no tests" for s in steps if s.tree and not s.tests]
    return notes


def verdict(
    steps: Sequence[StepRecord],
    regen: Regeneration,
    matrix: Sequence[MatrixEntry],
    anchor: Anchor,
) -> Check:
    """Return ``post_merge_sentinel_passed`` (the rule: :mod:`repogate.gates.sentinel`).

    A conflict at the anchor (the candidate's difference from the reference meeting the
    landing's history) fails it. An ``error`` is a ``timeout`` when the regeneration reached its
    budget, else an ``other evaluator error``.
    """
    failed: list[str] = [anchor.detail] if anchor.status == "conflict" else []
    errored: list[str] = []
    for s in steps:
        if s.status == "conflict":
            failed.append(f"follow-up {s.sha[:12]} conflicts ({s.detail})")
        elif s.status == "regressed":
            failed.append(f"follow-up {s.sha[:12]}: regressions {', '.join(s.regressions[:5])}")
        elif s.status == "error":
            errored.append(f"follow-up {s.sha[:12]}: {s.detail}")
    if regen.status in ("failed", "error"):
        (failed if regen.status == "failed" else errored).append(f"regeneration: {regen.detail}")
    for m in matrix:
        if m.status in ("failed", "error"):
            (failed if m.status == "failed" else errored).append(f"python {m.version}: {m.detail}")
    if not steps:
        errored.append("the window is empty: no follow-up commit to replay")
    if failed:
        return Check(name=CHECK, status="failed", detail="; ".join(failed))
    if errored:
        timed_out = regen.status == "error" and regen.timed_out
        kind: ErrorKind = "timeout" if timed_out else "other evaluator error"
        return Check.error(CHECK, "; ".join(errored), kind)
    replayed = sum(1 for s in steps if s.tree is not None)
    detail = f"{replayed} follow-up(s) replayed without conflict or regression"
    return Check(name=CHECK, status="passed", detail=detail)
