"""The cost ``tasks strength`` records is the whole measurement's, making the mutants included.

Seen on the click tasks (`docs/oracle-strength.md`, "On 20 click tasks"): on a reference adding
lines to a 3000-line module, 96 mutants were made and 3 run; the step took 281 s of wall time and
the record said 87.2 s, the three attempts alone, since making every mutant (libcst and ``ast``
over the whole mutated file, each time) was left out. Every way out of ``measure`` now counts it:
mutants run, none run (all kept apart), and no mutable line at all. A fake clock stands in for
the module's time (the mutants' attempts are real), so the seconds asserted are exact.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import pytest

from repogate.contract import load_contract
from repogate.runner import RunOptions
from repogate.tasks import strength as st
from repogate.tasks._mutants import Mutant, mutants_of
from repogate.tasks.scenarios import BuiltScenario, build_scenario

MAKING_S = 40.0
"""Seconds the fake clock moves while the mutants are made."""


class _Clock:
    """Stands in for :mod:`repogate.clock` in the strength module: time moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltScenario:
    return build_scenario("weak-oracle", tmp_path_factory.mktemp("weak"))


def _slow_making(monkeypatch: pytest.MonkeyPatch, keep: str) -> None:
    """Mutants take ``MAKING_S`` to make; ``keep``: ``all``, ``equivalent`` (all marked so), ``none``."""
    clock = _Clock()
    monkeypatch.setattr(st, "clock", clock)

    def making(texts: Mapping[str, str], patch: bytes) -> list[Mutant]:
        made = mutants_of(texts, patch)
        clock.now += MAKING_S
        if keep == "equivalent":
            return [dataclasses.replace(m, equivalent=True) for m in made]
        return made if keep == "all" else []

    monkeypatch.setattr(st, "mutants_of", making)


def _measure(built: BuiltScenario, cache: Path, tmp_path: Path, budget: int) -> st.Strength:
    contract = load_contract(built.contracts[0])
    with pytest.MonkeyPatch.context() as env:
        env.setenv("REPOGATE_CACHE", str(cache))
        options = RunOptions(out=tmp_path / "work" / "run")
        return st.measure(contract, "gauge", tmp_path / "work", options, budget=budget)


def test_the_cost_of_mutants_run_counts_making_them(
    built: BuiltScenario, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _slow_making(monkeypatch, "all")
    result = _measure(built, cache, tmp_path, budget=1)
    assert (result.run, result.made, result.killed + result.survived) == (1, 10, 1)
    assert (result.seconds, result.making_seconds) == (MAKING_S, MAKING_S)


def test_the_cost_when_every_mutant_is_kept_apart_is_the_making(
    built: BuiltScenario, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _slow_making(monkeypatch, "equivalent")
    result = _measure(built, cache, tmp_path, budget=4)
    assert (result.run, result.made, result.equivalent, result.score) == (0, 10, 10, None)
    assert (result.seconds, result.making_seconds) == (MAKING_S, MAKING_S)


def test_the_cost_when_no_line_can_be_mutated_is_the_making(
    built: BuiltScenario, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _slow_making(monkeypatch, "none")
    result = _measure(built, cache, tmp_path, budget=4)
    assert result.note == "the reference adds no mutable Python line"
    assert (result.run, result.seconds, result.making_seconds) == (0, MAKING_S, MAKING_S)
