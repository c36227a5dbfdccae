"""`repogate version` and `--help` load the command line only, not what the commands use.

New user: `repogate version` took 14-22 s under load, 8.5 s of it importing `repogate.cli`, which
loaded the run's pipeline, the store and the report's scientific stack for every command.
`benchmarks/cli_import.py` measures the time; this checks what is loaded.
"""

from __future__ import annotations

import pytest

from _loaded import modules_loaded_by

HEAVY = ("scipy", "numpy", "matplotlib", "repogate.report", "repogate.runner", "repogate.store")


@pytest.mark.parametrize(
    "args",
    [
        ["version"],
        ["--version"],
        ["--help"],
        ["-h"],
        ["run", "--help"],
        ["tasks", "mine", "--help"],
        ["show", "-h"],
    ],
)
def test_the_command_line_alone_is_loaded(args: list[str]) -> None:
    loaded = modules_loaded_by(args)
    assert [m for m in HEAVY if m in loaded] == []
