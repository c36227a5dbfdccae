"""A run written straight through the store: two decided attempts (gold, null), no pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

from repogate.agent_spec import GoldSpec, NullSpec
from repogate.decision import Evidence, SoftMetrics, decide
from repogate.receipt import Check, Observation, Status, observe
from repogate.sandbox import Isolation
from repogate.state import CandidateState
from repogate.store import AgentEntry, RunManifest, Store
from repogate.vocabulary import GateId, Profile


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


def one_attempt_run(
    run_dir: Path,
    isolation: str,
    soft: SoftMetrics,
    *,
    weak: bool = False,
    decided: bool = True,
    gate_s: Observation | None = None,
    profile: Profile = "hermetic",
) -> None:
    """A run of one attempt on task ``t`` with its manifest, through the store.

    The attempt (gold) is decided on :data:`STATE` with ``soft`` and ``isolation`` (no receipts,
    so it is rejected); with ``decided`` False it is null's, begun and never started. The
    manifest records ``isolation`` for agents and tests: bubblewrap with the network off, or with
    ``weak`` no isolation, allowed by the flag, with ``isolation`` as its warning. With
    ``gate_s``, the attempt has one receipt, gate S's with that observation, and is decided in
    ``profile``.
    """
    kind = "none" if weak else "bwrap"
    iso = Isolation(kind=kind, network_off=not weak, detail=isolation)
    with Store.create(run_dir) as store:
        store.write_manifest(
            RunManifest(
                agents=(AgentEntry(spec="gold"),),
                contracts=(),
                selection="test",
                isolation_agent=iso,
                isolation_tests=iso,
                weak_isolation_allowed_by="--allow-weak-isolation" if weak else None,
                warnings=(isolation,) if weak else (),
            )
        )
        record = store.begin_attempt("t", GoldSpec() if decided else NullSpec(), 0)
        if gate_s is not None:
            receipt = observe("S", STATE.state_id, partial(_same, gate_s))
            store.add_receipt(record.attempt_id, receipt, STATE)
        evidence = Evidence(
            task_id="t",
            profile=profile,
            receipts=tuple(store.receipts(record.attempt_id)),
            state=STATE,
            submitted_patch_digest=STATE.patch_digest,
            soft=soft,
            isolation=isolation,
        )
        if decided:
            store.finish_attempt(record.attempt_id, decide(evidence))
