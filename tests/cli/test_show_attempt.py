"""`repogate show RUN N`: one attempt's text as a person reads it.

New user: the one-attempt view did not say which isolation the attempt ran under (bubblewrap,
unshare or none, with its warnings), though the decision and the run manifest record it; and
its soft measures read ``wall_time_s=12.4167``: a field name and a raw float.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _stored_run import one_attempt_run
from repogate.cli import ExitCode, main
from repogate.decision import SoftMetrics

BWRAP = "bwrap: filesystem allowlist, own PID namespace, no network"
WEAK = (
    "NETWORK NOT ISOLATED: neither bubblewrap nor unshare could make a network namespace on this "
    "machine; allowed by --allow-weak-isolation"
)


def _show(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    assert main(["show", str(run_dir), "1"]) == ExitCode.OK
    return capsys.readouterr().out.splitlines()


def test_one_attempt_says_its_isolation_under_bubblewrap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one_attempt_run(tmp_path, BWRAP, SoftMetrics())
    lines = _show(tmp_path, capsys)
    assert f"isolation: {BWRAP}" in lines
    assert "run's isolation: agents: bwrap, network off; tests: bwrap, network off" in lines
    assert not [line for line in lines if line.startswith("warning:")]


def test_one_attempt_says_its_weak_isolation_with_the_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one_attempt_run(tmp_path, WEAK, SoftMetrics(), weak=True)
    lines = _show(tmp_path, capsys)
    assert f"isolation: {WEAK}" in lines
    assert "run's isolation: agents: none, network ON; tests: none, network ON" in lines
    assert f"warning: {WEAK}" in lines


def test_an_unfinished_attempt_says_the_runs_isolation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one_attempt_run(tmp_path, BWRAP, SoftMetrics(), decided=False)
    lines = _show(tmp_path, capsys)
    assert not [line for line in lines if line.startswith("isolation:")]  # no decision: not known
    assert "run's isolation: agents: bwrap, network off; tests: bwrap, network off" in lines


@pytest.mark.parametrize(
    ("soft", "said"),
    [
        (SoftMetrics(wall_time_s=12.4167), "soft: wall time 12.4 s"),
        (
            SoftMetrics(wall_time_s=0.04, changed_lines=14, tokens=12345, agent_cost_usd=0.01234),
            "soft: agent cost $0.0123, wall time 0.04 s, changed lines 14, tokens 12,345",
        ),
        (
            SoftMetrics(review_minutes=2.5, retries=1, review_rounds=2, extra_repair_effort=3),
            "soft: review 2.5 min, retries 1, review rounds 2, extra repair effort 3",
        ),
    ],
)
def test_soft_measures_read_with_their_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], soft: SoftMetrics, said: str
) -> None:
    one_attempt_run(tmp_path, BWRAP, soft)
    lines = [line.strip() for line in _show(tmp_path, capsys)]
    assert said in lines
    assert not [line for line in lines if "_s=" in line or ("=" in line and "soft" in line)]


def test_one_attempt_says_when_it_started_and_finished_in_utc(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`show RUN_DIR N` says when the attempt ran as a person reads a time (the store keeps
    ISO 8601 text); an attempt not started yet says neither."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796240412")  # 2026-12-02 19:40:12 UTC
    one_attempt_run(tmp_path / "done", BWRAP, SoftMetrics())
    lines = _show(tmp_path / "done", capsys)
    assert "started 2026-12-02 19:40 UTC, finished 2026-12-02 19:40 UTC" in lines, lines
    one_attempt_run(tmp_path / "planned", BWRAP, SoftMetrics(), decided=False)
    lines = _show(tmp_path / "planned", capsys)
    assert not [line for line in lines if line.startswith("started")], lines
