"""Standard output closed by its reader (``repogate show RUN | head -1``): exit 141, quietly.

typer turned the ``BrokenPipeError`` of a write into exit 1, rich (the tables) into
``SystemExit(1)``, and one met by Python's last flush printed ``Exception ignored ...`` and exited
120: a script read "not accepted", or a traceback's noise. Now every command ends with
:attr:`ExitCode.OUTPUT_CLOSED` (128 + SIGPIPE, as a shell reports ``yes | head``) and prints
nothing more, whichever write met the closed pipe.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from _stored_run import finished_run
from repogate.cli import ExitCode

CLI = [sys.executable, "-m", "repogate.cli"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return finished_run(tmp_path_factory.mktemp("run"))[0]


def _closed_early(args: list[str]) -> tuple[int, bytes]:
    """Run ``repogate ARGS`` with its standard output a pipe whose reader closes it at once."""
    with subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # before the command has loaded: its first write meets a closed pipe
        err = proc.stderr.read()
        return proc.wait(timeout=600), err


@pytest.mark.parametrize(
    "args",
    [
        ["show", "RUN"],  # a rich table: rich exited 1
        ["show", "RUN", "1"],  # one attempt: lines, then a table
        ["show", "RUN", "--json"],  # typer.echo, buffered: met at the last flush
        ["schema", "contract"],
        ["--help"],  # printed while the command line is read
        ["tasks", "--help"],  # a group's help
        ["version"],
        ["--version"],  # printed while the command line is read, as --help
        ["-h"],
    ],
)
def test_a_closed_output_exits_141_and_prints_nothing(run_dir: Path, args: list[str]) -> None:
    code, err = _closed_early([str(run_dir) if a == "RUN" else a for a in args])
    assert (code, err) == (ExitCode.OUTPUT_CLOSED, b"")


@pytest.mark.parametrize("args", [["show", "RUN"], ["show", "RUN", "--json"]])
def test_a_shell_pipe_whose_reader_has_gone_exits_141_quietly(
    run_dir: Path, tmp_path: Path, args: list[str]
) -> None:
    """The shell's own pipe to a reader that ends without reading (``| true``): ``PIPESTATUS``."""
    command = " ".join([*CLI, *(str(run_dir) if a == "RUN" else a for a in args)])
    script = f'{command} 2>{tmp_path / "err"} | true; echo "${{PIPESTATUS[0]}}"'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=600)
    assert done.stdout == f"{ExitCode.OUTPUT_CLOSED.value}\n"
    assert (tmp_path / "err").read_text() == ""


def test_an_open_output_is_unchanged(run_dir: Path) -> None:
    done = subprocess.run([*CLI, "show", str(run_dir)], capture_output=True, timeout=600)
    assert done.returncode == ExitCode.OK and done.stderr == b""
    assert done.stdout.decode().startswith(f"run {run_dir}")


def test_only_a_pipe_whose_reader_has_gone_counts_as_a_closed_output(tmp_path: Path) -> None:
    """A ``BrokenPipeError`` from another pipe (a child process's stdin) is not hidden as 141."""
    import io
    import os

    from repogate.cli._help import output_closed

    read, write = os.pipe()
    with os.fdopen(write, "w") as writer, os.fdopen(read) as reader:
        assert not output_closed(writer)  # its reader is open
        reader.close()
        assert output_closed(writer)
    with (tmp_path / "out.txt").open("w") as file:
        assert not output_closed(file)
    assert output_closed(io.StringIO())  # no file descriptor to ask: as the error said
