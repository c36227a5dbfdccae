"""`repogate version` and `--help` load the command line only, not what the commands use.

New user: `repogate version` took 14-22 s under load, 8.5 s of it importing `repogate.cli`, which
loaded the run's pipeline, the store and the report's scientific stack for every command.
`benchmarks/cli_import.py` measures the time; this checks what is loaded.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("scipy", "numpy", "matplotlib", "repogate.report", "repogate.runner", "repogate.store")


@pytest.mark.parametrize(
    "args", [["version"], ["--help"], ["run", "--help"], ["tasks", "mine", "--help"]]
)
def test_the_command_line_alone_is_loaded(args: list[str]) -> None:
    probe = (
        "import sys\n"
        "from repogate.cli import main\n"
        f"code = main({args!r})\n"
        "print(' '.join(sorted(sys.modules)))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert [m for m in HEAVY if m in loaded] == []
