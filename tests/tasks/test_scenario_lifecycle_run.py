"""End to end: ``repogate run`` on the lifecycle scenarios gives the verdicts the seed describes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repogate.cli import main
from repogate.tasks.scenarios import build_scenario

# (scenario, rendered contract, agent) -> the hard checks that fail; empty means accepted.
EXPECTED = {
    ("payments", "contract", "constant-only"): [
        "generated_artifacts_fresh",
        "code_owner_approved",
        "post_merge_sentinel_passed",  # the sentinel's regeneration drops the hand edit too
        "release_receipt_present",
    ],
    ("payments", "contract", "full"): [],
    ("payments", "compat", "compat-stale"): ["code_owner_approved"],
    ("payments", "compat", "compat"): [],
    ("identical-diff", "contract", "same-diff"): [],
    ("identical-diff", "derived", "same-diff"): [
        "generated_artifacts_fresh",
        "post_merge_sentinel_passed",
    ],
}


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["payments", "identical-diff"])
def test_run_gives_the_seed_verdicts(
    scenario: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    built = build_scenario(scenario, tmp_path / "built")
    cases = {k: v for k, v in EXPECTED.items() if k[0] == scenario}
    for _, contract, agent in cases:
        args = ["run", str(tmp_path / "built" / f"{contract}.toml"), "--json"]
        args += ["--agent", f"scripted:{tmp_path / 'built' / 'agents' / f'{agent}.toml'}"]
        assert main([*args, "--out", str(tmp_path / f"run-{contract}-{agent}")]) == 0
        (decision,) = json.loads(capsys.readouterr().out)
        assert decision["errored"] == [], decision
        assert decision["failed"] == cases[(scenario, contract, agent)], decision
        assert decision["accepted"] is (not cases[(scenario, contract, agent)])
    assert built.repo.is_dir()


@pytest.mark.slow
def test_decision_keeps_the_review_soft_metrics_gate_a_observed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The decision's review minutes and rounds are those gate A observed, not zero.

    They used to be read from a key of gate A's details that the gate never wrote, so every
    decision reported 0 minutes and 0 rounds of review.
    """
    build_scenario("identical-diff", tmp_path / "built")
    agent = f"scripted:{tmp_path / 'built' / 'agents' / 'same-diff.toml'}"
    out = tmp_path / "run"
    args = ["run", str(tmp_path / "built" / "contract.toml"), "--agent", agent, "--out", str(out)]
    assert main([*args, "--json"]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)
    assert shown["decision"]["accepted"] is True
    soft = shown["decision"]["soft"]
    assert (soft["review_minutes"], soft["review_rounds"]) == (4.0, 1)
