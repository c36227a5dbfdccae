"""`repogate run` as a new user meets it, on the built-in parser scenario: a command agent named
by a relative path, the agent's own status beside the verdict, and Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_json
from repogate.cli import ExitCode, main
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow


def test_relative_command_file_runs_from_the_start_folder(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``cmd:sh fix.sh`` names a file in the folder repogate was started in, not in the workspace:
    it must run, never pass for an agent that did nothing ("command not found")."""
    (tmp_path / "fix.sh").write_text("echo fixed > confparse/fixed.txt\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    code, rows = run_json(
        capsys, str(parser.contracts[0]), "--agent", "cmd:sh fix.sh", "--out", "run"
    )
    assert code == ExitCode.OK
    assert "+fixed" in next((out / "attempts").glob("*/patch.diff")).read_text()
    assert rows[0]["agent_status"] == "done", rows


def test_agent_status_is_shown_beside_the_verdict(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent stopped at its budget must not look like one that finished and was judged."""
    path = parser.contracts[0]
    path.write_text(path.read_text().replace("time_budget_s = 120", "time_budget_s = 2"))
    out = tmp_path / "run"
    args = ("--agent", "gold", "--agent", "cmd:sleep 100", "--out", str(out))
    code, rows = run_json(capsys, str(path), *args)
    assert code == ExitCode.OK
    gold, sleeper = rows
    assert gold["agent_status"] == "done"
    assert sleeper["agent"] == "cmd:sleep 100"
    assert sleeper["agent_status"] == "stopped"
    assert "stopped at its budget of 2 s" in str(sleeper["agent_detail"])
    assert main(["show", str(out)]) == ExitCode.OK
    shown = capsys.readouterr().out
    assert "(agent stopped)" in shown and "cmd:sleep" in shown
    assert main(["run", str(path), *args]) == ExitCode.OK  # the resumed run's table says it too
    assert "(agent stopped)" in capsys.readouterr().out


def test_ctrl_c_says_how_to_resume(parser: BuiltScenario, tmp_path: Path) -> None:
    """Ctrl-C prints one line on how to resume and exits 130; `show` calls the attempt left
    unfinished interrupted, not running, and the one that never started not started."""
    argv = ["run", str(parser.contracts[0]), "--agent", "cmd:sleep 30", "--agent", "null"]
    argv += ["--out", "run"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "repogate.cli", *argv],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # a Ctrl-C to the test runner's terminal does not reach it
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()
    while first.startswith("warning: "):  # weak isolation, where bubblewrap is missing
        first = proc.stderr.readline()
    assert first.startswith("running ")
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED
    assert "interrupted: finished attempts are kept; rerun the same command to resume" in err
    shown = subprocess.run(
        [sys.executable, "-m", "repogate.cli", "show", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "interrupted" in shown.stdout and "running" not in shown.stdout
    rows = [line for line in shown.stdout.splitlines() if line[:1].isdigit()]
    assert len(rows) == 2 and " interrupted " in rows[0] and " not started " in rows[1], rows
