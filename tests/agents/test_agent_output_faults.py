"""What an agent leaves that the harness cannot read or take is the agent's failure, never a crash.

Threat closed (red team: agent-output-crash, odd-files, usage-forgery): an agent turned its own
rejection into a harness crash (attempt ``crashed``, run exit 3, left out of every acceptance
denominator) with outputs the harness could not parse or copy: a 5000-digit integer in
``usage.json``, a deeply nested ``requirements.json``, a FIFO or a file whose name is not UTF-8 in
its workspace. And usage figures it reported were taken as they were: negative spend lowered the
soft measures, a NaN cost dropped the agent from them. Now an unreadable output file is ignored
with a note in the proposal's detail, usage figures must be finite and at least 0 (else the file
is ignored), and a workspace entry the harness cannot take fails ``edits_permitted`` with why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import run_json
from repogate.agents.predictions import load_predictions
from repogate.cli import ExitCode, main
from repogate.errors import AgentSpecError
from repogate.store import Store
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow

OUTPUTS = {
    "bigint": "printf '{\"tokens\": %s}' $(printf '9%.0s' $(seq 1 5000)) > \"$REPOGATE_OUTPUT/usage.json\"",
    "nested": "python3 -c \"import os; open(os.environ['REPOGATE_OUTPUT'] + '/requirements.json', "
    "'w').write('[' * 200000 + ']' * 200000)\"",
    "nan": 'printf \'{"tokens": 5, "cost_usd": NaN}\' > "$REPOGATE_OUTPUT/usage.json"',
    "negative": 'printf \'{"tokens": -1000000000, "cost_usd": -1e300}\' > "$REPOGATE_OUTPUT/usage.json"',
    "infinite": 'printf \'{"tokens": 5, "cost_usd": 1e999}\' > "$REPOGATE_OUTPUT/usage.json"',
}
WORKSPACE = {
    "fifo": ("mkfifo confparse/pipe.py", "confparse/pipe.py", "named pipe"),
    "badname": (
        "python3 -c \"open(b'confparse/\\\\xff\\\\xfe.py', 'w').write('x = 1')\"",
        "confparse/\\xff\\xfe.py",
        "not UTF-8",
    ),
}


def _agents(tmp_path: Path, bodies: dict[str, str]) -> list[str]:
    args = []
    for name, body in bodies.items():
        script = tmp_path / f"{name}.sh"
        script.write_text("#!/bin/sh\nset -e\n" + body + "\n")
        args += ["--agent", f"cmd:sh {script}"]
    return args


def _by_script(out: Path) -> dict[str, Any]:
    store = Store.open(out)
    found = {a.agent.rsplit("/", 1)[-1].removesuffix(".sh"): a for a in store.attempts()}
    store.close()
    return found


def _proposal(out: Path, attempt_id: str) -> dict[str, Any]:
    store = Store.open(out)
    receipts = store.receipts(attempt_id)
    store.close()
    (propose,) = (r for r in receipts if r.gate == "propose")
    return dict(propose.details["proposal"])


def test_unreadable_output_files_are_ignored_with_a_note_and_bad_usage_is_not_used(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code, rows = run_json(
        capsys, str(parser.contracts[0]), *_agents(tmp_path, OUTPUTS), "--out", str(out)
    )
    assert code == ExitCode.OK, rows
    assert all(r["outcome"] == "rejected" for r in rows), rows
    attempts = _by_script(out)
    notes = {
        "bigint": "usage.json ignored",
        "nested": "requirements.json ignored",
        "nan": "usage.json ignored",
        "negative": "usage.json ignored",
        "infinite": "usage.json ignored",
    }
    for name, note in notes.items():
        proposal = _proposal(out, attempts[name].attempt_id)
        assert note in proposal["detail"], (name, proposal)
        assert proposal["usage"] == {"tokens": 0, "cost_usd": 0.0}, (name, proposal)
        assert proposal["requirements"] is None, (name, proposal)
    # the report is strict JSON, and no agent's soft measures hold a negative or NaN figure
    assert main(["report", str(out), "--json"]) == ExitCode.OK
    text = capsys.readouterr().out

    def refuse(constant: str) -> float:
        raise AssertionError(f"non-standard JSON constant {constant}")

    report = json.loads(text, parse_constant=refuse)
    soft = {row["agent"].rsplit("/", 1)[-1].removeprefix("cmd:"): row for row in report["soft"]}
    for name in OUTPUTS:
        row = soft[f"{name}.sh"]
        assert row["n"] == 1, row  # no agent dropped from the soft measures
        figures = [
            row["measures"][m][s] for m in ("agent_cost_usd", "tokens") for s in ("median", "total")
        ]
        assert figures == [0.0, 0.0, 0.0, 0.0], row


def test_a_workspace_entry_the_harness_cannot_take_fails_edits_permitted(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    bodies = {name: body for name, (body, _path, _why) in WORKSPACE.items()}
    code, rows = run_json(
        capsys, str(parser.contracts[0]), *_agents(tmp_path, bodies), "--out", str(out)
    )
    assert code == ExitCode.OK, rows
    attempts = _by_script(out)
    for name, (_body, path, why) in WORKSPACE.items():
        decision = attempts[name].decision
        assert decision is not None and decision.outcome == "rejected", (name, decision)
        (check,) = (c for c in decision.checks if c.name == "edits_permitted")
        assert check.status == "failed", (name, check)
        assert path in check.detail and why in check.detail, (name, check.detail)


PREDICTIONS = {
    "bigint": '[{"instance_id": "t", "model_name_or_path": "m", "model_patch": "", "n": '
    + "9" * 5000
    + "}]",
    "nested": "[" * 100000 + "]" * 100000,
    "escape": json.dumps(
        [{"instance_id": "t", "model_name_or_path": "m\x1b[2J", "model_patch": ""}]
    ),
    "surrogate": '[{"instance_id": "t", "model_name_or_path": "m", "model_patch": "\\ud800"}]',
}


@pytest.mark.parametrize("kind", sorted(PREDICTIONS))
def test_a_predictions_file_an_agent_wrote_badly_is_bad_input_never_a_crash(
    tmp_path: Path, kind: str
) -> None:
    """A predictions file is an agent's output too: a number Python will not convert, nesting
    deeper than the parser recurses, a model name that would restyle the terminal (it names the
    agent in every table), a patch that is not Unicode text are bad input (exit 2, one line),
    never a traceback or raw escapes on the screen."""
    path = tmp_path / "preds.json"
    path.write_text(PREDICTIONS[kind])
    with pytest.raises(AgentSpecError) as caught:
        load_predictions(path)
    assert "\x1b" not in str(caught.value)
