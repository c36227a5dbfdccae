"""Limits on what an agent leaves: workspace bytes, workspace files, patch bytes.

Threat closed: an agent that leaves a 5 GB file (or a million files) in its permitted paths cost
the harness minutes and gigabytes of memory and was accepted. Passing a limit is the agent's
failure, named (``edits_permitted``) with the figure, and found from ``lstat`` sizes and a capped
read of the diff, never by reading the files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _scenario_variant import contract_with
from conftest import run_json
from repogate.cli import ExitCode, main
from repogate.store import Store
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow


def _agent(tmp_path: Path, body: str) -> str:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nset -e\n" + body)
    script.chmod(0o755)
    return f"cmd:{script}"


def _edits_permitted(out: Path) -> str:
    with Store.open(out) as store:
        (record,) = store.attempts()
    assert record.decision is not None
    assert record.decision.outcome == "rejected"
    (check,) = (c for c in record.decision.checks if c.name == "edits_permitted")
    assert check.status == "failed"
    return check.detail


def test_a_huge_sparse_file_fails_the_default_limit(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = _agent(tmp_path, "truncate -s 3G confparse/big.bin\n")
    out = tmp_path / "run"
    code, rows = run_json(capsys, str(parser.contracts[0]), "--agent", agent, "--out", str(out))
    assert code == ExitCode.OK
    assert "edits_permitted" in rows[0]["failed"]  # type: ignore[operator]
    detail = _edits_permitted(out)
    assert "max_workspace_bytes = 2,147,483,648" in detail
    assert "largest file: confparse/big.bin, 3,221,225,472 bytes" in detail
    assert not list((out / "attempts").glob("*/patch.diff"))  # nothing of it was copied


LIMITED = {
    "files": (
        "max_workspace_files = 40",
        "for i in $(seq 1 60); do : > confparse/f$i.py; done\n",
        "more than 40 files and folders (permissions.max_workspace_files)",
    ),
    "patch": (
        "max_patch_bytes = 2000",
        "seq 1 2000 > confparse/numbers.txt\n",
        "patch is longer than permissions.max_patch_bytes = 2,000 bytes",
    ),
}


@pytest.mark.parametrize("kind", sorted(LIMITED))
def test_a_contract_limit_is_enforced_with_its_figure(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    limit, script, said = LIMITED[kind]
    contract = contract_with(parser, "", f"{kind}.toml")
    contract.write_text(
        contract.read_text().replace("[permissions]\n", f"[permissions]\n{limit}\n")
    )
    out = tmp_path / "run"
    agent = _agent(tmp_path, script)
    code, _ = run_json(capsys, str(contract), "--agent", agent, "--out", str(out))
    assert code == ExitCode.OK
    assert said in _edits_permitted(out)


def test_the_limits_are_documented_in_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "contract"]) == ExitCode.OK
    fields = json.loads(capsys.readouterr().out)["$defs"]["Permissions"]["properties"]
    for key in ("max_workspace_bytes", "max_workspace_files", "max_patch_bytes"):
        assert "Default" in fields[key]["description"], key
