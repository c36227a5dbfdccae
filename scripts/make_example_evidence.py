"""Write examples/evidence/*.json: the seed article's three synthetic cases as typed evidence.

Run with `uv run python scripts/make_example_evidence.py`; the files are committed and tests read them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from repogate.decision import Evidence, SoftMetrics
from repogate.receipt import Check, Receipt
from repogate.state import CandidateState, patch_digest
from repogate.vocabulary import CheckName, GateId

OUT = Path(__file__).resolve().parent.parent / "examples" / "evidence"
WHEN = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
PATCH = b"-    timeout = 5\n+    timeout = retry_policy.timeout_seconds\n"

GATES: dict[GateId, tuple[CheckName, ...]] = {
    "I": ("edits_permitted", "oracle_untouched"),
    "R": ("requirements_recovered",),
    "E": ("environment_reproduced",),
    "V": ("focused_tests_passed", "regression_tests_passed", "dependency_policy_passed"),
    "V-generated": ("generated_artifacts_fresh",),
    "A": ("code_owner_approved", "review_threads_resolved"),
    "S": ("post_merge_sentinel_passed",),
    "release": ("release_receipt_present",),
}


def receipts(state_id: str, failing: set[str], gates: tuple[GateId, ...]) -> tuple[Receipt, ...]:
    out = []
    for gate in gates:
        checks = tuple(
            Check(name=n, status="failed" if n in failing else "passed") for n in GATES[gate]
        )
        status = "failed" if any(not c.passed for c in checks) else "passed"
        out.append(
            Receipt(gate=gate, status=status, checks=checks, state_id=state_id, started_at=WHEN)
        )
    return tuple(out)


def state(base: str, candidate: str, digest: str) -> CandidateState:
    return CandidateState(
        base_commit=base, candidate_commit=candidate, patch_digest=digest, policy_digest="example"
    )


def main() -> None:
    digest = patch_digest(PATCH)
    lifecycle = tuple(GATES)
    hermetic: tuple[GateId, ...] = ("I", "R", "E", "V")
    good = state("a81f2c1", "bc94a76", digest)
    cases = {
        "payments-sdk-retry": Evidence(
            task_id="payments-sdk-retry",
            profile="lifecycle",
            state=good,
            submitted_patch_digest=digest,
            receipts=receipts(good.state_id, set(), lifecycle),
            soft=SoftMetrics(review_minutes=18, agent_cost_usd=2.40),
        ),
        # Tests ran on the earlier candidate bc94a76; the submitted state is d31ed02, and the
        # digest the harness computed for it is not the one the agent claims.
        "payments-sdk-retry-stale": Evidence(
            task_id="payments-sdk-retry-stale",
            profile="lifecycle",
            state=state("a81f2c1", "d31ed02", "0" * 64),
            submitted_patch_digest=digest,
            receipts=receipts(
                good.state_id,
                {
                    "generated_artifacts_fresh",
                    "code_owner_approved",
                    "review_threads_resolved",
                    "post_merge_sentinel_passed",
                    "release_receipt_present",
                },
                lifecycle,
            ),
            soft=SoftMetrics(review_minutes=7, agent_cost_usd=1.15),
        ),
        "pure-parser-function": Evidence(
            task_id="pure-parser-function",
            profile="hermetic",
            state=state("1" * 7, "2" * 7, digest),
            submitted_patch_digest=digest,
            receipts=receipts(state("1" * 7, "2" * 7, digest).state_id, set(), hermetic),
            soft=SoftMetrics(review_minutes=2, agent_cost_usd=0.08),
        ),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    for name, evidence in cases.items():
        (OUT / f"{name}.json").write_text(evidence.model_dump_json(indent=2) + "\n")


if __name__ == "__main__":
    main()
