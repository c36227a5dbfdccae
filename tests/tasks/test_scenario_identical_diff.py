"""The seed's identical-diff thought experiment as a built-in scenario.

One repository, one ticket, one diff. The only difference between the two contracts is whether
the edited file is authoritative or derived; the verdict must follow that fact, not the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _lifecycle_scenarios import (
    POLICY,
    PYTHON,
    Candidate,
    hidden_patch,
    lifecycle_checks,
    run_agents,
    run_pytest,
)
from repogate import git
from repogate.contract import TransitionContract, load_contract
from repogate.gates.generated import check_generated
from repogate.tasks.scenarios import BuiltScenario, build_scenario


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltScenario:
    return build_scenario("identical-diff", tmp_path_factory.mktemp("identical"))


@pytest.fixture(scope="module")
def contracts(built: BuiltScenario) -> dict[str, TransitionContract]:
    return {path.stem: load_contract(path) for path in built.contracts}


@pytest.fixture(scope="module")
def same_diff(built: BuiltScenario, tmp_path_factory: pytest.TempPathFactory) -> Candidate:
    return run_agents(built, tmp_path_factory.mktemp("agents"))["same-diff"]


def test_contracts_differ_only_in_the_generator(contracts: dict[str, TransitionContract]) -> None:
    authoritative, derived = contracts["contract"], contracts["derived"]
    assert authoritative.oracles.generators == ()
    assert [g.outputs for g in derived.oracles.generators] == [("sdk/settings.py",)]
    assert (
        authoritative.oracles.model_copy(update={"generators": derived.oracles.generators})
        == derived.oracles
    )


def test_focused_tests_pass_in_both_copies(
    built: BuiltScenario,
    contracts: dict[str, TransitionContract],
    same_diff: Candidate,
    tmp_path: Path,
) -> None:
    for name, contract in contracts.items():
        checkout = same_diff.checkout(tmp_path / name)
        ids = [*contract.oracles.fail_to_pass, *contract.oracles.pass_to_pass]
        assert run_pytest(checkout, hidden_patch(built, contract), ids) == 0


def test_same_diff_accepted_where_authoritative(
    built: BuiltScenario,
    contracts: dict[str, TransitionContract],
    same_diff: Candidate,
    tmp_path: Path,
) -> None:
    checks = lifecycle_checks(built, contracts["contract"], same_diff, tmp_path)
    assert {n: c.status for n, c in checks.items()} == dict.fromkeys(checks, "passed")


def test_same_diff_rejected_where_derived(
    built: BuiltScenario,
    contracts: dict[str, TransitionContract],
    same_diff: Candidate,
    tmp_path: Path,
) -> None:
    """A fix made in a derived file is removed by the next regeneration: not a stable transition."""
    checks = lifecycle_checks(built, contracts["derived"], same_diff, tmp_path)
    failed = {n: c.detail for n, c in checks.items() if c.status != "passed"}
    assert failed == {
        "generated_artifacts_fresh": "regeneration changed sdk/settings.py; edited derived output "
        "sdk/settings.py without its source: regeneration overwrites it"
    }


def test_reference_patch_is_fresh_in_the_derived_copy(
    built: BuiltScenario, contracts: dict[str, TransitionContract], tmp_path: Path
) -> None:
    """The gold change (spec edited, settings regenerated) passes where the diff alone fails."""
    base, fix = built.commits["base"], built.commits["fix"]
    checkout = tmp_path / "fix"
    git.export_tree(built.repo, fix, checkout)
    changed = git.changed_paths(built.repo, base, fix)
    seen = check_generated(
        checkout, contracts["derived"].oracles.generators, changed, POLICY, PYTHON
    )
    assert seen.checks[0].status == "passed", seen.checks[0].detail
