"""repogate's pytest plugin for the regression run, copied into the harness's tool folder.

Loaded into the environment under test with ``-p repogate_regress`` (the tool folder on
PYTHONPATH); repogate itself never imports it. Two switches, both environment variables:

- ``REPOGATE_COVERAGE_FILE``: record coverage (``coverage`` from the tool folder) of files under
  the working directory into that data file, switching the dynamic context to each test's node id
  for its setup, call and teardown, and back to the empty context between tests (what
  ``pytest-cov --cov-context=test`` does, minus the phase suffix);
- ``REPOGATE_SELECT``: a file of node ids, one a line; tests whose id is not listed are
  deselected, as with ``--deselect``.

It must run on every pytest the target may pin, so it uses only old, stable hooks.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_COVERAGE_FILE = os.environ.get("REPOGATE_COVERAGE_FILE")
_SELECT = os.environ.get("REPOGATE_SELECT")
_cov: Any = None

if _COVERAGE_FILE:
    import coverage

    _cov = coverage.Coverage(
        data_file=_COVERAGE_FILE, source=[str(Path.cwd())], config_file=False, branch=False
    )
    _cov.start()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Generator[None, None, None]:
    """Record what one test executes (setup, call, teardown) under its node id."""
    if _cov is not None:
        _cov.switch_context(item.nodeid)
    yield
    if _cov is not None:
        _cov.switch_context("")


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Keep only the listed ids when a selection is given."""
    if not _SELECT:
        return
    lines = Path(_SELECT).read_text(encoding="utf-8").splitlines()
    wanted = {line for line in lines if line.strip()}
    kept = [i for i in items if i.nodeid in wanted]
    dropped = [i for i in items if i.nodeid not in wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_unconfigure(config: Any) -> None:
    """Stop and save the coverage data."""
    if _cov is not None:
        _cov.stop()
        _cov.save()
