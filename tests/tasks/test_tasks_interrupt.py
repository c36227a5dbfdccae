"""Ctrl-C during task validation is never the candidate's fault: nothing is recorded for it.

``repogate tasks mine`` runs as a terminal runs it, in its own process group, and gets SIGINT
to the whole group (git children included, as a terminal sends it; once SIGTERM to the main
process alone, as a scheduler sends it) at three moments: while the
first candidate's states run, while its gold attempt runs, and while a later candidate's gold
attempt runs. Each time: exit 130 with one line, nothing appended for the interrupted candidate,
every finished one kept; the last rerun validates what was left and nothing twice. ``tasks
check`` is stopped in its gold attempt the same way.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _tasks_repo import ENV_MAP, build_history
from repogate.cli import CHECK_INTERRUPTED_MESSAGE, TASKS_INTERRUPTED_MESSAGE
from repogate.errors import ExitCode
from repogate.tasks.taskset import TaskSet

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "repogate.cli"]


HANG_S = 3600
"""Only turns a hang into a failure: every wait here is on an event, at any load."""


def _interrupt_when(
    cmd: list[str],
    folder: Path,
    pattern: str,
    said: str = TASKS_INTERRUPTED_MESSAGE,
    *,
    scheduler_stop: bool = False,
) -> str:
    """Start ``cmd``; once ``folder`` holds a match of ``pattern``, Ctrl-C it; return stderr.

    Ctrl-C is SIGINT to the whole group, as a terminal sends it; with ``scheduler_stop``, SIGTERM
    to the main process alone, as a scheduler or `kill PID` sends it (the same must follow).
    """
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    hang = time.monotonic() + HANG_S
    seen = None
    while seen is None and proc.poll() is None:
        assert time.monotonic() < hang, f"{pattern} never appeared"
        seen = next(folder.glob(pattern), None)
        time.sleep(0.005)
    assert seen is not None, f"{pattern} never appeared: {proc.communicate()}"
    if scheduler_stop:
        os.kill(proc.pid, signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=HANG_S)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert err.strip().splitlines() == [said], err  # one line, no traceback
    return err


def _recorded(out: Path) -> tuple[list[str], list[str]]:
    taskset = TaskSet.open(out)
    return [t.id for t in taskset.tasks()], [r.id for r in taskset.rejected()]


def test_ctrl_c_while_candidates_validate_records_nothing_for_them(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    commits = build_history(tmp_path / "calc")
    ids = {k: f"calc-{commits[k][:10]}" for k in ("sub", "negative", "mul", "div")}
    env_map = tmp_path / "env.toml"
    env_map.write_text(ENV_MAP.format(name="calc"))
    out = tmp_path / "set"
    cmd = [*CLI, "tasks", "mine", str(tmp_path / "calc"), "--range", f"{commits['base']}..main"]
    cmd += ["--out", str(out), "--env-map", str(env_map)]
    sub, div = ids["sub"], ids["div"]

    _interrupt_when(cmd, out, f"work/{sub}/reports/*")  # the state runs
    assert _recorded(out) == ([], [])
    # its gold attempt, stopped as a scheduler stops a job: SIGTERM to the main process alone
    _interrupt_when(cmd, out, f"validation/{sub}/attempts/*/receipts/*", scheduler_stop=True)
    assert _recorded(out) == ([], [])
    # div's gold attempt (not accepted once it finishes: it edits the CI oracle)
    _interrupt_when(cmd, out, f"validation/{div}/attempts/*/receipts/*")
    assert _recorded(out) == ([sub], [ids["negative"], ids["mul"]])
    assert not (out / "rejected.jsonl").read_text().count(div)

    again = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=HANG_S)
    assert again.returncode == ExitCode.OK, again.stderr
    printed = [line for line in again.stdout.splitlines() if not line.startswith("task set")]
    assert printed == [f"{div}: reference_not_accepted"]  # the rest is kept, not redone
    assert _recorded(out) == ([sub], [ids["negative"], ids["mul"], div])
    assert not (out / "contracts" / div).exists()

    check = [*CLI, "tasks", "check", str(out)]
    _interrupt_when(
        check, cache / "check-runs", f"{sub}/attempts/*/receipts/*", CHECK_INTERRUPTED_MESSAGE
    )
    assert not (cache / "check-runs" / sub).exists() and not (cache / "check-work" / sub).exists()


def test_ctrl_c_while_tasks_import_starts_or_reads_its_instances_is_one_line(
    tmp_path: Path,
) -> None:
    """Ctrl-C before any candidate is validated (the command's own start-up, reading the
    instances) printed a traceback. The instance file is a FIFO no one writes, so the command
    waits in its reading phase; the early signals land while it starts. A signal before Python
    set its own handler kills it silently (nothing of repogate ran); any later one must give one
    line and exit 130, with nothing written."""
    fifo = tmp_path / "instances.jsonl"
    os.mkfifo(fifo)
    script = Path(sys.executable).with_name("repogate")  # the console script a user runs
    out = tmp_path / "set"
    outcomes = []
    for delay in (0.02, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 2.0):
        proc = subprocess.Popen(
            [str(script), "tasks", "import", str(fifo), "--out", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # never left behind, whatever the fault
            proc.communicate()
            pytest.fail(f"tasks import still ran 60 s after Ctrl-C sent {delay} s after its start")
        # CPython's start-up phases fail as "Fatal Python error: init_<phase>" (init_import_site;
        # init_sys_streams under load in CI): all before any code of repogate's
        before_entry = ("Traceback", "Fatal Python error: init_")
        if err.startswith(before_entry) and not re.search(r'_entry\.py", line \d+, in main', err):
            # the signal came before repogate's entry point ran (the interpreter's start-up, its
            # `site` import included, the console script's own imports): nothing of repogate's
            # command had started. Python exits an unhandled KeyboardInterrupt by SIGINT (-2) or
            # with 1, by version and moment
            assert err.rstrip().endswith("KeyboardInterrupt") and "repogate/cli" not in err, err
        elif proc.returncode == -signal.SIGINT:  # killed before Python set its own handler
            assert err == "", err
        else:
            assert (proc.returncode, err) == (
                ExitCode.INTERRUPTED,
                TASKS_INTERRUPTED_MESSAGE + "\n",
            )
        outcomes.append(proc.returncode)
    assert outcomes[-1] == ExitCode.INTERRUPTED  # the reading phase itself was reached
    assert not out.exists()
