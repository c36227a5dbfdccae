"""Bad input and a hostile machine: one line ``error: what; how to fix``, exit 2 (130 for Ctrl-C),
nothing half-written, and the run resumes.

Threat closed: a traceback with exit 1 reads as "not accepted" to a script, and a half-written run
folder loses or corrupts finished attempts.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repogate.cli import ExitCode, main
from repogate.store import Store
from repogate.tasks.scenarios import BuiltScenario

CLI = [sys.executable, "-m", "repogate.cli"]
HANG_S = 3600
"""Seconds after which a wait that should end on an event is called a hang; no load reaches it
(the old 300 s limits on a first attempt and on a rerun were reached at a load average of 12)."""


def _one_line_error(err: str) -> None:
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "; " in err and "Traceback" not in err, err


@pytest.mark.parametrize(
    "args", [["--epochs", "0"], ["--epochs", "-1"], ["--epochs", "abc"], ["--bogus"]]
)
def test_bad_option_values_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    out = tmp_path / "run"
    assert main(["run", *args, "--out", str(out)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    _one_line_error(err)
    assert args[0] in err and "--help" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # not an integer: typer said pydantic's "Input should be a valid integer, unable to parse
        # string as an integer"
        (
            ["run", "--workers", "two"],
            "--workers 'two' is not a whole number; give a whole number, e.g. --workers 1; "
            "see `repogate run --help`",
        ),
        (
            ["run", "--epochs", "1.5"],
            "--epochs '1.5' is not a whole number; give a whole number, e.g. --epochs 1; "
            "see `repogate run --help`",
        ),
        (
            ["tasks", "mine", "r", "--range", "a..b", "--out", "o", "--limit", ""],
            "--limit '' is not a whole number; give a whole number, e.g. --limit 1; "
            "see `repogate tasks mine --help`",
        ),
        (
            ["tasks", "import", "i.json", "--out", "o", "--test-timeout", "soon"],
            "--test-timeout 'soon' is not a number; give a number, e.g. --test-timeout 1; "
            "see `repogate tasks import --help`",
        ),
        # out of range: "Input should be greater than or equal to 1"
        (
            ["run", "--epochs", "0"],
            "--epochs 0 is below 1; give 1 or more; see `repogate run --help`",
        ),
        (
            ["tasks", "import", "i.json", "--out", "o", "--repeats", "11"],
            "--repeats 11 is above 10; give 10 or less; see `repogate tasks import --help`",
        ),
        (
            ["tasks", "import", "i.json", "--out", "o", "--test-timeout", "0.5"],
            "--test-timeout 0.5 is below 1; give 1 or more; see `repogate tasks import --help`",
        ),
    ],
)
def test_a_number_option_given_another_value_names_the_option_and_what_it_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    assert main(args) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err == f"error: {said}\n"
    assert "Input should" not in err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # an option other tools print JSON with, on every command that has --json
        (["show", "RUN", "--format", "json"], "no such option: --format (did you mean --json?)"),
        (["show", "RUN", "--format=json"], "no such option: --format (did you mean --json?)"),
        (
            ["decide", "E.json", "--output", "json"],
            "no such option: --output (did you mean --json?)",
        ),
        (["run", "-o", "json"], "no such option: -o (did you mean --json?)"),
        (
            ["tasks", "check", "c.toml", "--output-format", "json"],
            "no such option: --output-format (did you mean --json?)",
        ),
        # spelt alike: click's guess, one said as "did you mean"
        (["show", "RUN", "--jsn"], "no such option: --jsn (did you mean --json?)"),
        (["run", "--agnt", "gold"], "no such option: --agnt (did you mean --agent?)"),
        (
            ["run", "--epoch", "2"],
            "no such option: --epoch (possible options: --epochs, --repo-cache)",
        ),
        # a command without --json is offered none
        (["version", "--format", "json"], "no such option: --format"),
    ],
)
def test_an_unknown_option_names_the_option_it_may_mean(
    capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    """``--format json`` was "No such option: --format": ``--json`` is not spelt like it."""
    assert main(args) == ExitCode.USAGE
    words = 2 if args[0] == "tasks" else 1  # the command's words: `repogate tasks check`
    command = " ".join(["repogate", *args[:words]])
    assert capsys.readouterr().err == (
        f"error: {said}; see `{command} --help` for the valid options\n"
    )


def test_report_format_json_points_to_json(capsys: pytest.CaptureFixture[str]) -> None:
    """``report`` has a --format (swebench): ``--format json`` there is a value to correct."""
    assert main(["report", "RUN", "--format", "json"]) == ExitCode.USAGE
    assert capsys.readouterr().err == (
        "error: unknown --format 'json' (for JSON, give --json); choose one of: swebench\n"
    )


def _userns_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = ["unshare", "--user", "--map-root-user", "--mount", "true"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


requires_userns = pytest.mark.skipif(
    not _userns_works(), reason="a private mount (unshare --user --mount) is not allowed here"
)


def _on_small_disk(mount: Path, options: str, script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (sh) with a fresh tmpfs mounted (``options``) at ``mount``, privately."""
    mount.mkdir(parents=True, exist_ok=True)
    wrapped = f"mount -t tmpfs -o {options} tmpfs {mount} && {script}"
    return subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", wrapped],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
        timeout=600,
    )


@requires_userns
def test_read_only_out_is_refused_before_anything(tmp_path: Path) -> None:
    """Permission bits do not stop root; a read-only file system stops everyone."""
    mount = tmp_path / "ro"
    cli = " ".join(CLI)
    done = _on_small_disk(mount, "ro,size=1m", f"{cli} run --out {mount}/run")
    assert done.returncode == ExitCode.USAGE, done.stderr
    _one_line_error(done.stderr)
    assert "not writable" in done.stderr and "Read-only file system" in done.stderr


@pytest.mark.slow
@requires_userns
def test_full_disk_stops_with_one_line_and_resumes(parser: BuiltScenario, tmp_path: Path) -> None:
    """The disk fills during the run: exit 2, no half-written file, and a rerun completes."""
    mount = tmp_path / "disk"
    run = mount / "run"
    cmd = f"{' '.join(CLI)} run {parser.contracts[0]} --agent gold --agent null --out {run}"
    script = (
        f"{cmd} >/dev/null 2>{tmp_path}/first.err; echo $? >{tmp_path}/first.rc; "
        f"find {run} -name '*.tmp' >{tmp_path}/tmp-files; "
        f"mount -o remount,size=50m {mount} && {cmd} --json >{tmp_path}/second.out; "
        f"echo $? >{tmp_path}/second.rc; cp -r {run} {tmp_path}/kept"
    )
    done = _on_small_disk(mount, "size=160k", script)
    assert done.returncode == 0, done.stderr
    first_err = (tmp_path / "first.err").read_text()
    assert (tmp_path / "first.rc").read_text().strip() == str(int(ExitCode.USAGE)), first_err
    assert "Traceback" not in first_err  # above the error: progress lines only
    _one_line_error(first_err.splitlines(keepends=True)[-1])
    assert "full" in first_err or "No space" in first_err
    assert (tmp_path / "tmp-files").read_text() == ""
    assert (tmp_path / "second.rc").read_text().strip() == "0"
    with Store.open(tmp_path / "kept") as store:
        assert [a.status for a in store.attempts()] == ["done", "done"]
        assert store.changed_evidence() == {}


def _variant(scenario: BuiltScenario, reference: str, patch: str) -> Path:
    (scenario.contracts[0].parent / "ref.diff").write_text(patch)
    text = scenario.contracts[0].read_text()
    head, _, _ = text.partition("[reference]")
    path = scenario.contracts[0].parent / "variant.toml"
    path.write_text(head + f"[reference]\n{reference}\n")
    return path


BAD_REFERENCES = {
    "does not apply": (
        "diff --git a/confparse/__init__.py b/confparse/__init__.py\n"
        "--- a/confparse/__init__.py\n+++ b/confparse/__init__.py\n"
        "@@ -1,1 +1,1 @@\n-this line is not there\n+nor is this\n"
    ),
    "outside the repository": (
        "diff --git a/../outside.txt b/../outside.txt\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+escaped\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(BAD_REFERENCES))
def test_a_broken_reference_patch_is_refused_before_the_run(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """A contract whose gold cannot apply is the author's error, not gold "rejected"."""
    contract = _variant(parser, 'file = "ref.diff"', BAD_REFERENCES[kind])
    out = tmp_path / "run"
    code = main(["run", str(contract), "--agent", "gold", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    _one_line_error(err)
    assert "reference patch does not apply" in err and "parser-bounded-config" in err
    assert not out.exists()
    assert not (parser.repo.parent / "outside.txt").exists()


@pytest.mark.slow
def test_ctrl_c_while_the_working_folder_is_removed(parser: BuiltScenario, tmp_path: Path) -> None:
    """Ctrl-C (to the whole process group, as a terminal sends it) while an attempt's large
    working folder is being removed: exit 130, one line, and the rerun completes the run."""
    many = tmp_path / "many.sh"
    many.write_text(
        "#!/bin/sh\nmkdir -p confparse/gen\n"
        "for d in $(seq 1 40); do mkdir confparse/gen/$d; "
        "for f in $(seq 1 100); do : > confparse/gen/$d/$f.py; done; done\n"
    )
    many.chmod(0o755)
    out = tmp_path / "run"
    # the second attempt's agent takes 30 s, the window for the Ctrl-C (the null agent's was a
    # second or two, which a loaded machine can let pass before this process looks again)
    agents = ["--agent", f"cmd:{many}", "--agent", "cmd:sleep 30"]
    cmd = [*CLI, "run", str(parser.contracts[0]), *agents]
    cmd += ["--out", str(out)]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True)
    decided = None
    hang = (
        time.monotonic() + HANG_S
    )  # the waits are on events; this only turns a hang into a failure
    while decided is None and proc.poll() is None:
        assert time.monotonic() < hang, "the first attempt never finished"
        decided = next((out / "attempts").glob("*cmd-many*/decision.json"), None)
        time.sleep(0.005)
    assert decided is not None, "the run ended before its first attempt was decided"
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=HANG_S)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert err.strip().splitlines()[-1].startswith("interrupted:"), err
    assert "Traceback" not in err, err
    again = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=HANG_S)
    assert again.returncode == ExitCode.OK, again.stderr
    with Store.open(out) as store:
        assert [a.status for a in store.attempts()] == ["done", "done"]
        assert store.changed_evidence() == {}


@pytest.mark.parametrize("existing", [False, True])
@pytest.mark.parametrize(
    "agent",
    [
        ("bogus",),  # not a spec at all
        ("scripted:{tmp}/missing.toml",),  # a file that is not there
        # a good file that covers none of the scenarios, with every row required
        ("predictions:{tmp}/p.json", "--require-all-predictions"),
    ],
)
def test_a_bad_agent_on_the_embedded_default_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: tuple[str, ...], existing: bool
) -> None:
    """Bad input must write nothing: no half-made run folder holding built ``scenarios/``,
    whether the agent spec is malformed, names a missing file, or lacks a scenario's contract
    (checked against their ids, read before any scenario is built)."""
    row = {"instance_id": "not-a-scenario", "model_name_or_path": "m", "model_patch": ""}
    (tmp_path / "p.json").write_text(json.dumps([row]))
    out = tmp_path / "run"
    if existing:
        out.mkdir()
    spec, *flags = agent
    code = main(["run", "--agent", spec.format(tmp=tmp_path), *flags, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    _one_line_error(err)
    assert (sorted(out.iterdir()) == []) if existing else not out.exists()


@pytest.mark.parametrize(
    ("leave", "said"),
    [
        ({"store.sqlite": b"garbage, not a database\n"}, "is not a readable repogate store"),
        ({"store.sqlite": b""}, "is not a readable repogate store"),
        ({"notes.txt": b"mine\n"}, "holds files and no repogate run"),
    ],
)
def test_an_out_folder_that_is_not_a_run_is_refused_and_left_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], leave: dict[str, bytes], said: str
) -> None:
    """A corrupt store (new user: a traceback and exit 1, read by scripts as "not accepted") and a
    folder of someone else's files (adopted silently) are refused before anything is written."""
    out = tmp_path / "run"
    out.mkdir()
    for name, data in leave.items():
        (out / name).write_bytes(data)
    code = main(["run", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    _one_line_error(err)
    assert said in err
    assert sorted(p.name for p in out.iterdir()) == sorted(leave)
    assert all((out / n).read_bytes() == d for n, d in leave.items())
