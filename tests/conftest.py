"""Shared fixtures: the repository root and a CLI runner that calls the real entry point."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # The clock module's documented switch, not a patch of internals: receipts become deterministic.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767600000")
    os.environ.pop("REPOGATE_REPO_CACHE", None)


requires_bwrap = pytest.mark.skipif(
    "os.environ.get('REPOGATE_SANDBOX', 'auto') not in ('auto', 'bwrap') or __import__('shutil').which('bwrap') is None",
    reason="filesystem restriction needs bubblewrap (without it the manifest says so)",
)
