"""`repogate show RUN N`: one attempt's text as a person reads it.

New user: the one-attempt view did not say which isolation the attempt ran under (bubblewrap,
unshare or none, with its warnings), though the decision and the run manifest record it; and
its soft measures read ``wall_time_s=12.4167``: a field name and a raw float. And a hermetic
attempt's sentinel (observed, no check of that profile) was in the run table's sentinel column
(``failed``) but nowhere in the one-attempt view: its reason was only in ``receipts/08-S``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _stored_run import one_attempt_run
from repogate.cli import ExitCode, main
from repogate.decision import SoftMetrics
from repogate.receipt import Check, Observation

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


CONFLICT = (
    "follow-up 9d9e76487136 conflicts (the follow-up conflicts with the candidate in "
    "shipping/rates.py)"
)


def _gate_s(status: str, detail: str, **details: str) -> Observation:
    check = Check(name="post_merge_sentinel_passed", status=status, detail=detail)
    return Observation(checks=(check,), details=details)


def test_a_hermetic_attempt_shows_its_observed_sentinel_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one_attempt_run(tmp_path, BWRAP, SoftMetrics(), gate_s=_gate_s("failed", CONFLICT))
    lines = _show(tmp_path, capsys)
    assert (
        f"sentinel: failed: {CONFLICT} (observed, not a check of the hermetic profile: "
        "no part of the verdict)"
    ) in lines, lines
    row = main_table(tmp_path, capsys).splitlines()[3].split()
    assert row[-2:] == ["failed", "0.0"]  # the run table's sentinel column says the same


def test_a_passed_sentinel_in_hermetic_is_shown_as_observed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one_attempt_run(tmp_path, BWRAP, SoftMetrics(), gate_s=_gate_s("passed", "3 follow-ups"))
    lines = _show(tmp_path, capsys)
    assert (
        "sentinel: passed: 3 follow-ups (observed, not a check of the hermetic profile: "
        "no part of the verdict)"
    ) in lines, lines


def test_a_lifecycle_sentinel_is_a_row_of_the_checks_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one_attempt_run(
        tmp_path, BWRAP, SoftMetrics(), gate_s=_gate_s("failed", CONFLICT), profile="lifecycle"
    )
    lines = _show(tmp_path, capsys)
    assert [line for line in lines if "post_merge_sentinel_passed" in line], lines
    assert not [line for line in lines if line.startswith("sentinel:")], lines


def test_a_skipped_hermetic_sentinel_says_why_it_was_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    why = "not run: already rejected by focused_tests_passed"
    flag = "--skip-sentinel-when-rejected"
    one_attempt_run(tmp_path, BWRAP, SoftMetrics(), gate_s=_gate_s("skipped", why, not_run=flag))
    lines = _show(tmp_path, capsys)
    assert [line for line in lines if line.startswith("sentinel:")] == [
        f"sentinel: {why} ({flag})"
    ], lines


def main_table(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The run table's one row, as ``repogate show RUN_DIR`` prints it."""
    capsys.readouterr()
    assert main(["show", str(run_dir)]) == ExitCode.OK
    return capsys.readouterr().out
