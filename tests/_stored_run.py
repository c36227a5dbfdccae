"""A run written straight through the store: two decided attempts (gold, null), no pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

from repogate.agent_spec import GoldSpec, NullSpec
from repogate.decision import Evidence, decide
from repogate.receipt import Check, Observation, Status, observe
from repogate.state import CandidateState
from repogate.store import Store
from repogate.vocabulary import GateId


def _same(seen: Observation) -> Observation:
    return seen


def stored_run(
    run_dir: Path,
    state: CandidateState,
    receipts: Sequence[tuple[GateId, CandidateState]],
    status: Status,
) -> list[str]:
    """Store two attempts on task ``t`` decided on ``state``; return their ids.

    Each attempt gets one receipt per ``(gate, state it is bound to)`` whose one check
    (``edits_permitted``) has ``status``.
    """
    ids = []
    with Store.create(run_dir) as store:
        for agent in (GoldSpec(), NullSpec()):
            record = store.begin_attempt("t", agent, 0)
            for gate, bound in receipts:
                seen = Observation(checks=(Check(name="edits_permitted", status=status),))
                receipt = observe(gate, bound.state_id, partial(_same, seen))
                assert receipt.crash is None and receipt.status == status
                store.add_receipt(record.attempt_id, receipt, bound)
            evidence = Evidence(
                task_id="t",
                profile="hermetic",
                state=state,
                submitted_patch_digest=state.patch_digest,
                receipts=tuple(store.receipts(record.attempt_id)),
            )
            store.finish_attempt(record.attempt_id, decide(evidence))
            ids.append(record.attempt_id)
    return ids


STATE = CandidateState(base_commit="a" * 40, candidate_commit="b" * 40, patch_digest="c" * 64)
"""The candidate state every attempt of :func:`finished_run` is decided on."""


def finished_run(tmp_path: Path) -> tuple[Path, str, str]:
    """A run with two finished attempts, each with two receipts; returns (dir, id1, id2)."""
    ids = stored_run(tmp_path, STATE, (("E", STATE), ("I", STATE)), "failed")
    return tmp_path, ids[0], ids[1]
