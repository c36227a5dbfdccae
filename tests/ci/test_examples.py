"""The shipped CI example: its contract loads and its workflow names only options `gate` has."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from repogate.cli import app
from repogate.contract import load_contract

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ci"


def test_the_example_contract_loads() -> None:
    contract = load_contract(EXAMPLES / "repogate-contract.toml")
    assert contract.id == "pull-request" and contract.oracles.regression == "base-passing"


def test_the_workflow_uses_only_options_repogate_gate_has() -> None:
    commands = getattr(typer.main.get_command(app), "commands", {})
    gate = commands["gate"]
    known = {opt for param in gate.params for opt in getattr(param, "opts", ())}
    text = (EXAMPLES / "repogate-gate.yml").read_text()
    run = text[text.index("uvx repogate gate") :]
    used = set(re.findall(r"(--[a-z][a-z-]+)", run))
    assert used and used <= known, used - known
    assert "GITHUB_EVENT_PATH" in text and "fetch-depth: 0" in text
