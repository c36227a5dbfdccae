"""The payments scenario, gate by gate: each lifecycle gate run on each scripted agent's candidate.

The pipeline wires these gates together; here each gate function is called directly on the
scenario's real repository and the real candidates the scripted agents produce, so the verdicts
the scenario promises are checked where they are made.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _lifecycle_scenarios import (
    POLICY,
    Candidate,
    authority,
    hidden_patch,
    lifecycle_checks,
    run_agents,
    run_pytest,
)
from repogate import git
from repogate.contract import TransitionContract, load_contract
from repogate.gates.dependency import check_dependency_policy
from repogate.git import ChangedPath
from repogate.receipt import Check
from repogate.sandbox import SandboxPolicy
from repogate.tasks.scenarios import BuiltScenario, build_scenario


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltScenario:
    return build_scenario("payments", tmp_path_factory.mktemp("payments"))


@pytest.fixture(scope="module")
def contracts(built: BuiltScenario) -> dict[str, TransitionContract]:
    return {path.stem: load_contract(path) for path in built.contracts}


@pytest.fixture(scope="module")
def candidates(
    built: BuiltScenario, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Candidate]:
    return run_agents(built, tmp_path_factory.mktemp("agents"))


def _statuses(
    built: BuiltScenario,
    contracts: dict[str, TransitionContract],
    candidates: dict[str, Candidate],
    contract_name: str,
    agent: str,
    tmp_path: Path,
) -> dict[str, Check]:
    return lifecycle_checks(built, contracts[contract_name], candidates[agent], tmp_path)


EXPECTED = {
    ("contract", "constant-only"): {
        "generated_artifacts_fresh",
        "release_receipt_present",
        "code_owner_approved",
    },
    ("contract", "full"): set(),
    ("compat", "compat-stale"): {"code_owner_approved"},
    ("compat", "compat"): set(),
}


@pytest.mark.parametrize(("contract_name", "agent"), list(EXPECTED))
def test_lifecycle_gates_give_the_scenario_verdicts(
    built: BuiltScenario,
    contracts: dict[str, TransitionContract],
    candidates: dict[str, Candidate],
    contract_name: str,
    agent: str,
    tmp_path: Path,
) -> None:
    checks = _statuses(built, contracts, candidates, contract_name, agent, tmp_path)
    failed = {name for name, check in checks.items() if check.status != "passed"}
    assert failed == EXPECTED[(contract_name, agent)], {n: checks[n].detail for n in failed}
    assert all(checks[n].status == "failed" for n in failed)


def test_constant_only_is_named_for_editing_the_derived_client(
    built: BuiltScenario,
    contracts: dict[str, TransitionContract],
    candidates: dict[str, Candidate],
    tmp_path: Path,
) -> None:
    checks = _statuses(built, contracts, candidates, "contract", "constant-only", tmp_path)
    assert checks["generated_artifacts_fresh"].detail == (
        "regeneration changed payments/client_gen.py; edited derived output "
        "payments/client_gen.py without its source: regeneration overwrites it"
    )
    assert "payments/retry.py need an approval from @acme/payments-owners" in (
        checks["code_owner_approved"].detail
    )
    assert checks["release_receipt_present"].detail == "no entry added under CHANGELOG.md"


def test_compat_stale_approval_is_reported_stale(
    built: BuiltScenario, contracts: dict[str, TransitionContract], candidates: dict[str, Candidate]
) -> None:
    """An approval of an earlier patch must not carry over to the changed patch."""
    seen = authority(built, contracts["compat"], candidates["compat-stale"])
    assert "stale approval by olga on an earlier patch" in seen.checks[0].detail
    assert seen.details["stale_approvals"][0]["patch_digest"] == candidates["full"].digest
    assert seen.details["changes_after_review"] == 1
    assert seen.checks[1].status == "passed"


def test_stale_digest_in_review_files_is_the_full_patch_digest(
    built: BuiltScenario, candidates: dict[str, Candidate]
) -> None:
    """The literal digest the compatibility-round review files name is really the full patch's."""
    literal = {
        review["patch_digest"]
        for name in ("compat-stale", "compat")
        for review in json.loads((built.repo.parent / "reviews" / f"{name}.json").read_text())[
            "reviews"
        ]
        if review["patch_digest"] != "{{candidate}}"
    }
    assert literal == {candidates["full"].digest}
    assert candidates["compat"].digest == candidates["compat-stale"].digest


def test_no_agent_touches_the_lockfile(
    built: BuiltScenario,
    contracts: dict[str, TransitionContract],
    candidates: dict[str, Candidate],
    tmp_path: Path,
) -> None:
    base = tmp_path / "base"
    git.export_tree(built.repo, built.commits["base"], base)
    for cand in candidates.values():
        checkout = cand.checkout(tmp_path / cand.agent)
        seen = check_dependency_policy(
            lambda: (base, checkout),  # noqa: B023 (called before the loop moves on)
            contracts["contract"].oracles.lockfile,
            cand.changed,
            POLICY,
        )
        assert seen.checks[0].detail == "no manifest or lockfile changed"


@pytest.mark.slow
def test_scenario_lockfile_is_what_uv_writes(built: BuiltScenario, tmp_path: Path) -> None:
    """The scenario's uv.lock is real: replaying ``uv lock`` from it reproduces it byte for byte."""
    base = tmp_path / "base"
    git.export_tree(built.repo, built.commits["base"], base)
    touched = (ChangedPath("M", "pyproject.toml", None, False),)
    seen = check_dependency_policy(
        lambda: (base, base), None, touched, SandboxPolicy(network=True, timeout_s=120)
    )
    assert seen.checks[0].status == "passed", seen.checks[0].detail


@pytest.mark.parametrize(
    ("contract_name", "agent", "passes"),
    [
        ("contract", "constant-only", True),
        ("contract", "full", True),
        ("compat", "full", False),
        ("compat", "compat", True),
    ],
)
def test_hidden_tests_grade_the_candidates(
    built: BuiltScenario,
    contracts: dict[str, TransitionContract],
    candidates: dict[str, Candidate],
    tmp_path: Path,
    contract_name: str,
    agent: str,
    passes: bool,
) -> None:
    contract = contracts[contract_name]
    hidden = hidden_patch(built, contract)
    checkout = candidates[agent].checkout(tmp_path / "run")
    ids = [*contract.oracles.fail_to_pass, *contract.oracles.pass_to_pass]
    assert (run_pytest(checkout, hidden, ids) == 0) is passes


def test_base_state_fails_the_focused_tests_and_passes_the_regression_tests(
    built: BuiltScenario, contracts: dict[str, TransitionContract], tmp_path: Path
) -> None:
    """The task is valid: at the base plus hidden tests, FAIL_TO_PASS fail and PASS_TO_PASS pass."""
    base = built.commits["base"]
    for contract in contracts.values():
        hidden = hidden_patch(built, contract)
        for ids, code in ((contract.oracles.fail_to_pass, 1), (contract.oracles.pass_to_pass, 0)):
            checkout = tmp_path / f"{contract.id}-{code}"
            git.export_tree(built.repo, base, checkout)
            for test_id in ids:
                assert run_pytest(checkout, hidden if test_id == ids[0] else b"", [test_id]) == code
