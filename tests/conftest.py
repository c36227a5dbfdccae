"""Shared fixtures: the repository root and a CLI runner that calls the real entry point."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Generator, Iterator
from pathlib import Path
from types import FrameType

import pytest

from _model_endpoint import TEST_KEY, ModelRuns
from repogate import sandbox
from repogate.cli import main
from repogate.store import AttemptRecord, Store
from repogate.tasks.scenarios import BuiltScenario, build_scenario

_RUNNER_INTERRUPTED = threading.Event()


def _runner_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C to the test runner: remember it, then raise ``KeyboardInterrupt`` as Python does."""
    _RUNNER_INTERRUPTED.set()
    signal.default_int_handler(signum, frame)


# A Ctrl-C to pytest while a test runs `repogate` in this process (`main([...])`) is caught there,
# as the command line catches it, and came out as a failed test (exit 130) with the session going
# on. The runner's own handler remembers it, and the session stops after that test
# (`pytest_runtest_protocol` below). A test that sends SIGINT to this process on purpose takes it
# with a handler of its own (`own_sigint`), so its signal never stops the session. A suite started
# in the background by a shell without job control inherits SIGINT ignored; a handler here also
# makes the `repogate` processes the tests start begin with the default, so their Ctrl-C tests stop.
signal.signal(signal.SIGINT, _runner_ctrl_c)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    result = yield
    if _RUNNER_INTERRUPTED.is_set():
        item.session.shouldstop = "Ctrl-C reached the test runner"
    return result


@pytest.fixture
def own_sigint() -> Iterator[None]:
    """For a test that sends SIGINT to this process itself: Python's handler while it runs."""
    runner = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, runner)


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # The clock module's documented switch, not a patch of internals: receipts become deterministic.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767600000")
    os.environ.pop("REPOGATE_REPO_CACHE", None)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An environment cache shared by one test module's runs (venvs are built once)."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def model_runs(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> ModelRuns:
    """Runs of a model-driven agent on the parser scenario, the test key set (``TEST_KEY``)."""
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    return ModelRuns(parser, tmp_path, capsys, monkeypatch)


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of the test's own (no environment another test built is reused); its path."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    return cache


@pytest.fixture
def parser(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> BuiltScenario:
    """The built-in parser scenario, built as a real git repository under ``tmp_path``."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    return build_scenario("parser", tmp_path / "scenario")


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, object]]]:
    """Run ``repogate run ARGS --json`` in-process; return its exit code and decisions."""
    code = main(["run", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def gold_and_null(
    capsys: pytest.CaptureFixture[str], contract: Path, out: Path
) -> dict[str, dict[str, object]]:
    """Run ``gold`` and ``null`` on ``contract`` into ``out``; assert gold is accepted and null
    rejected by its own failing FAIL_TO_PASS test; return the decisions by agent."""
    code, rows = run_json(
        capsys, str(contract), "--agent", "gold", "--agent", "null", "--out", str(out)
    )
    assert code == 0
    by_agent = {str(r["agent"]): r for r in rows}
    assert by_agent["gold"]["accepted"] is True, by_agent["gold"]
    assert by_agent["null"]["outcome"] == "rejected"
    assert "focused_tests_passed" in by_agent["null"]["failed"]  # type: ignore[operator]
    return by_agent


HAS_BWRAP = sandbox.isolation(False).kind == "bwrap"

requires_bwrap = pytest.mark.skipif(
    not HAS_BWRAP,
    reason="needs bubblewrap (bwrap) working here: the file-system allowlist is its job; "
    "without it repogate refuses untrusted code unless weak isolation is allowed",
)


def stored_attempts(run_dir: Path) -> list[AttemptRecord]:
    """Every attempt of the run in ``run_dir``, read through the store (closed afterwards)."""
    with Store.open(run_dir) as store:
        return store.attempts()


@pytest.fixture(scope="session", autouse=True)
def _weak_isolation_where_no_bwrap() -> Iterator[None]:
    # On a machine without bubblewrap the suite runs its own fake agents and scenario code with
    # the documented switch that allows weak isolation (what a user would pass as a flag); where
    # bubblewrap works the switch is cleared, so every test runs under the allowlist. Session
    # scope: module fixtures that run attempts come after it.
    with pytest.MonkeyPatch.context() as patch:
        if HAS_BWRAP:
            patch.delenv(sandbox.WEAK_ENV, raising=False)
        else:
            patch.setenv(sandbox.WEAK_ENV, "1")
        yield
