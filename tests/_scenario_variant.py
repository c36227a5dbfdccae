"""A variant of a built scenario's contract: the same contract with extra tables."""

from __future__ import annotations

from pathlib import Path

from repogate.tasks.scenarios import BuiltScenario


def contract_with(scenario: BuiltScenario, extra: str, name: str = "variant.toml") -> Path:
    """Write the scenario's first contract with ``extra`` inserted before ``[permissions]``."""
    text = scenario.contracts[0].read_text()
    path = scenario.contracts[0].parent / name
    path.write_text(text.replace("[permissions]\n", extra + "\n[permissions]\n", 1))
    return path
