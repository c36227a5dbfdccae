"""Seeing whether a command ran git at all: a ``git`` first on ``PATH`` that logs, then runs git.

repogate runs the git CLI by name with ``PATH`` from its own environment
(:mod:`repogate.git`), so the real git still does the work; the log only says it was asked.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import pytest


def git_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a ``git`` first on ``PATH`` that notes each call in a log, then runs the real git.

    Returns the log; it exists only once some git command ran (a repository read or made).
    """
    real = shutil.which("git")
    assert real is not None
    spy = tmp_path / "spy"
    spy.mkdir()
    log = tmp_path / "git-calls.log"
    script = spy / "git"
    script.write_text(f'#!/bin/sh\necho "$@" >> {shlex.quote(str(log))}\nexec {real} "$@"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{spy}{os.pathsep}{os.environ['PATH']}")
    return log
