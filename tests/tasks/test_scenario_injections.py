"""The embedded default's injected variants: one per kind, a robust and a mimicking agent each."""

from __future__ import annotations

from pathlib import Path

import pytest

from repogate.contract import load_contract
from repogate.tasks.scenario_injections import contract_ids, with_injected
from repogate.tasks.scenarios import build_scenario, default_agents, scenario_names
from repogate.vocabulary import INJECTIONS


def test_payments_gains_one_variant_of_each_kind(tmp_path: Path) -> None:
    plain = build_scenario("payments", tmp_path / "payments")
    built = with_injected(plain)
    derived = [load_contract(p) for p in built.contracts[len(plain.contracts) :]]
    assert sorted(c.derivation.kind for c in derived if c.derivation) == sorted(INJECTIONS)
    for path, contract in zip(built.contracts[len(plain.contracts) :], derived, strict=True):
        specs = default_agents(built, path, contract.reference is not None)
        assert len(specs) == 2
        for spec in specs:  # every named agent is a shipped scripted agent file
            assert spec.startswith("scripted:") and Path(spec.removeprefix("scripted:")).is_file()
    assert built.contracts[: len(plain.contracts)] == plain.contracts


def test_a_scenario_without_injections_is_unchanged(tmp_path: Path) -> None:
    plain = build_scenario("parser", tmp_path / "parser")
    assert with_injected(plain) == plain


@pytest.mark.parametrize("name", scenario_names())
def test_the_ids_read_without_building_are_the_built_contracts_ids(
    tmp_path: Path, name: str
) -> None:
    """``run --require-all-predictions`` checks the embedded default against these ids before
    building it: they must be exactly the built contracts' ids, in order."""
    built = with_injected(build_scenario(name, tmp_path / name))
    assert contract_ids(name) == tuple(load_contract(p).id for p in built.contracts)
    assert len(contract_ids(name)) == len(set(contract_ids(name))) >= 1
