"""The embedded default's injected variants: one per kind, a robust and a mimicking agent each."""

from __future__ import annotations

from pathlib import Path

from repogate.contract import load_contract
from repogate.tasks.scenario_injections import with_injected
from repogate.tasks.scenarios import build_scenario, default_agents
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
