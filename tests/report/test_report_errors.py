"""Evaluator and environment errors in a real run are counted apart, by kind, never as the
agent's failure, with their denominator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repogate.cli import ExitCode, main
from repogate.report.load import load_runs
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow

VARIANTS = {
    "env-build": ('install = ["uv pip install pytest"]', 'install = ["uv pip install ./no-such-package-here"]'),
    "invalid": (
        '"tests/test_limits.py::test_unknown_key_rejected",\n]',
        '"tests/test_limits.py::test_unknown_key_rejected",\n  "tests/test_limits.py::test_unknown_key_rej",\n]',
    ),
    "timeout": (
        'test_command = "python -m pytest -p no:cacheprovider"',
        'test_command = "python -c \\"import time; time.sleep(60)\\""\ntimeout_s = 2',
    ),
}  # fmt: skip


def test_errors_by_kind_with_their_denominator(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An install that fails, an expected test that does not exist and tests that hang are the
    evaluator's or environment's faults: the agent's acceptance has no denominator from them."""
    source = parser.contracts[0]
    paths = []
    for name, (old, new) in VARIANTS.items():
        text = source.read_text()
        assert old in text
        text = text.replace('id = "parser-bounded-config"', f'id = "parser-{name}"')
        paths.append(source.parent / f"{name}.toml")
        paths[-1].write_text(text.replace(old, new))
    out = tmp_path / "run"
    argv = ["run", *map(str, paths), "--agent", "gold", "--out", str(out), "--json"]
    assert main(argv) == ExitCode.OK
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == ExitCode.OK
    report = json.loads(capsys.readouterr().out)
    errors = report["errors"][0]
    assert errors["attempts"] == 3 and errors["unfinished"] == 0
    assert errors["kinds"] == {
        "environment build": 1,
        "invalid task": 1,
        "timeout": 1,
        "harness crash": 0,
        "other evaluator error": 0,
    }
    kinds = {a["contract"]: a["error_kind"] for a in report["attempts"]}
    assert kinds == {
        "parser-env-build": "environment build",
        "parser-invalid": "invalid task",
        "parser-timeout": "timeout",
    }
    decided = {a.contract: a.decision for run in load_runs([out]) for a in run.attempts}
    set_where_it_happened = {  # the kind the environment check was given, not its wording
        task: next(c.kind for c in d.checks if c.name == "environment_reproduced")
        for task, d in decided.items()
        if d is not None
    }
    assert set_where_it_happened == kinds
    acceptance = report["acceptance"][0]
    assert (acceptance["scored"], acceptance["errors"], acceptance["attempts"]) == (0, 3, 3)
    assert acceptance["interval"]["n"] == 0
    assert main(["report", str(out), "--format", "swebench"]) == ExitCode.OK
    swebench = json.loads(capsys.readouterr().out)
    assert swebench["error_ids"] == ["parser-env-build", "parser-invalid", "parser-timeout"]
    assert swebench["completed_ids"] == [] and swebench["resolved_instances"] == 0
