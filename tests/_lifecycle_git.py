"""Tiny git helpers for the lifecycle gate tests: real repositories through the git CLI."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_AUTHOR_DATE": "2001-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **ENV}, check=True, capture_output=True
    ).stdout


def write(repo: Path, files: Mapping[str, str | None]) -> None:
    """Write (or, for None, delete) files under ``repo``."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def commit(repo: Path, files: Mapping[str, str | None], message: str = "c") -> str:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").decode().strip()


def new_repo(path: Path, files: Mapping[str, str | None]) -> tuple[Path, str]:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    return path, commit(path, files, "base")


def diff(repo: Path, a: str, b: str) -> bytes:
    return git(repo, "diff", "--binary", "--full-index", "--no-renames", a, b)
