"""`repogate show RUN N` says why the agent did not finish, and which expected ids do not exist.

New user: ``show`` printed ``agent status: crashed; attempt status: done`` with no reason (a
scripted ``replace`` whose old text was not in the file, a predictions patch that does not
apply): the reason was in ``receipts/01-propose.intoto.json`` only. And a contract with a
misspelled test id said ``task invalid: 1 expected test id(s) do not exist at the base`` without
naming it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_json
from repogate.cli import ExitCode, main
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow

MISS = """\
[[edit]]
path = "confparse/parser.py"
replace = ["text that is not there", "new text"]
"""


def _show(run_dir: Path, attempt: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    assert main(["show", str(run_dir), attempt]) == ExitCode.OK
    return capsys.readouterr().out.splitlines()


def _show_json(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    capsys.readouterr()
    assert main(["show", str(run_dir), "--json"]) == ExitCode.OK
    return {str(row["agent"]): row for row in json.loads(capsys.readouterr().out)}


def test_show_says_why_each_kind_of_agent_crashed(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "miss-agent.toml").write_text(MISS)
    preds = tmp_path / "preds.jsonl"
    row = {
        "instance_id": "parser-bounded-config",
        "model_name_or_path": "org/broken",
        "model_patch": "this is not a patch\n",
    }
    preds.write_text(json.dumps(row) + "\n")
    agents = {
        "scripted:miss-agent.toml": "edit 1: confparse/parser.py: text to replace occurs 0 times, "
        "not once",
        f"predictions:{preds}": "patch does not apply: ",
        "cmd:sh -c 'exit 3'": "exit 3",
    }
    out = tmp_path / "run"
    argv = [str(parser.contracts[0]), "--out", str(out)]
    argv += ["--agent", "scripted:miss-agent.toml", "--agent", f"predictions:{preds}"]
    argv += ["--agent", "cmd:sh -c 'exit 3'"]
    code, rows = run_json(capsys, *argv)
    assert code == ExitCode.OK
    ids = {str(r["agent"]): str(r["attempt_id"]) for r in rows}
    assert sorted(ids) == sorted(agents)
    shown = _show_json(out, capsys)
    for agent, reason in agents.items():
        assert shown[agent]["agent_status"] == "crashed", shown[agent]
        assert str(shown[agent]["agent_detail"]).startswith(reason), shown[agent]
        lines = _show(out, ids[agent], capsys)
        assert "agent status: crashed; attempt status: done" in lines
        said = [line for line in lines if line.startswith("agent's reason: ")]
        assert len(said) == 1 and said[0].startswith(f"agent's reason: {reason}"), lines
    assert "No valid patches in input" in str(shown[f"predictions:{preds}"]["agent_detail"])


def test_an_agent_that_finished_shows_no_reason_line(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code, _rows = run_json(capsys, str(parser.contracts[0]), "--agent", "null", "--out", str(out))
    assert code == ExitCode.OK
    lines = _show(out, "1", capsys)
    assert "agent status: done; attempt status: done" in lines
    assert not [line for line in lines if line.startswith("agent's reason")]
    assert _show_json(out, capsys)["null"]["agent_status"] == "done"


def test_show_names_a_misspelled_pass_to_pass_id(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = parser.contracts[0]
    good = '"tests/test_limits.py::test_bounds_inclusive[timeout=1]"'
    typo = '"tests/test_limits.py::test_bounds_inclusiv[timeout=1]"'
    assert good in path.read_text()
    path.write_text(path.read_text().replace(good, typo, 1))
    out = tmp_path / "run"
    main(["run", str(path), "--agent", "null", "--out", str(out)])
    lines = _show(out, "1", capsys)
    detail = (
        "task invalid: 1 expected test id(s) do not exist at the base: "
        "'tests/test_limits.py::test_bounds_inclusiv[timeout=1]'"
    )
    # the table wraps the detail where the terminal's width puts it, inside an id too
    said = "".join("".join(line.replace("│", " ").split()) for line in lines)
    assert "".join(detail.split()) in said, lines
    decision = _show_json(out, capsys)["null"]["decision"]
    assert isinstance(decision, dict)
    (check,) = [c for c in decision["checks"] if c["name"] == "environment_reproduced"]
    assert (check["status"], check["detail"]) == ("error", detail)
