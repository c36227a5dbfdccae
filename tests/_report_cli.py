"""Shared by the report's CLI tests: `repogate report` refusing its input in one line."""

from __future__ import annotations

import pytest

from repogate.cli import ExitCode, main


def report_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run ``repogate report ARGS`` in-process; assert exit 2 and a one-line ``error: ...; ...``."""
    capsys.readouterr()
    assert main(["report", *args]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "; " in err, err
    return err
