"""`repogate run --skip-sentinel-when-rejected` end to end on the payments scenario's compatibility
round (a lifecycle contract whose sentinel replays a real follow-up): real git, uv, pytest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_json
from repogate.cli import ExitCode, main
from repogate.receipt import Receipt
from repogate.store import Store
from repogate.tasks.scenarios import BuiltScenario, build_scenario

pytestmark = pytest.mark.slow

FLAG = "--skip-sentinel-when-rejected"
SENTINEL = "post_merge_sentinel_passed"


@pytest.fixture(scope="module")
def payments(tmp_path_factory: pytest.TempPathFactory, cache: Path) -> BuiltScenario:
    """The payments scenario, built once for this module."""
    return build_scenario("payments", tmp_path_factory.mktemp("payments") / "built")


def _run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cache: Path,
    payments: BuiltScenario,
    agent: str,
    out: Path,
    *flags: str,
) -> tuple[dict[str, object], Receipt]:
    """Run scripted ``agent`` on the compatibility contract; return its decision and S receipt."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = payments.repo.parent / "compat.toml"
    spec = f"scripted:{payments.repo.parent / 'agents' / f'{agent}.toml'}"
    code, (row,) = run_json(capsys, str(contract), "--agent", spec, "--out", str(out), *flags)
    assert code == ExitCode.OK
    with Store.open(out) as store:
        (sentinel,) = [r for r in store.receipts(str(row["attempt_id"])) if r.gate == "S"]
    return row, sentinel


def _history_entries(cache: Path) -> int:
    """The sentinel's cached real-history results (one file per follow-up and selection)."""
    return sum(1 for p in (cache / "history").rglob("*") if p.is_file())


def test_a_rejected_attempt_skips_the_sentinel_only_with_the_flag(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    cache: Path,
    payments: BuiltScenario,
) -> None:
    """`full` predates the compatibility criterion R3: gate V rejects it (and so does R)."""
    before = _history_entries(cache)
    out = tmp_path / "skip"
    row, sentinel = _run(capsys, monkeypatch, cache, payments, "full", out, FLAG)
    assert row["outcome"] == "rejected"
    assert row["failed"] == ["requirements_recovered", "focused_tests_passed"]
    assert row["errored"] == []
    assert row["stages"]["sentinel passed"] == "skipped"  # type: ignore[index]
    not_run = "not run: already rejected by requirements_recovered, focused_tests_passed"
    assert [(c.name, c.status, c.detail) for c in sentinel.checks] == [
        (SENTINEL, "skipped", not_run)
    ]
    assert sentinel.status == "skipped"
    assert "steps" not in sentinel.details  # no follow-up was replayed, no test ran
    assert sentinel.details["rejected_by"] == ["requirements_recovered", "focused_tests_passed"]
    assert _history_entries(cache) == before  # no real-history test run either
    checks = {c["name"]: c for c in row["checks"]}  # type: ignore[attr-defined]
    assert (checks[SENTINEL]["status"], checks[SENTINEL]["detail"]) == ("skipped", not_run)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["skip_sentinel_when_rejected"] is True
    # `show` of the attempt says the sentinel was not run, and why
    assert main(["show", str(out), "1"]) == ExitCode.OK
    shown = capsys.readouterr().out
    assert f"sentinel: {not_run} ({FLAG})" in shown
    # the report's funnel leaves the skipped sentinel out of its own pass rate
    assert main(["report", str(out), "--json"]) == ExitCode.OK
    (funnel,) = json.loads(capsys.readouterr().out)["funnels"]
    stage = next(s for s in funnel["stages"] if s["stage"] == "sentinel passed")
    assert (stage["passed"], stage["failed"], stage["skipped"]) == (0, 0, 1)
    assert stage["own"]["n"] == 0
    # the text report shows the skipped sentinel in its funnel row and the option in "Runs"
    said = f"sentinel skipped on attempts already rejected ({FLAG})"
    assert main(["report", str(out)]) == ExitCode.OK
    text = capsys.readouterr().out
    (funnel_row,) = [line for line in text.splitlines() if "sentinel passed" in line]
    assert "0/0/0 (1 skipped)" in funnel_row
    assert said in " ".join(text.split())  # the Runs cell may wrap
    html = tmp_path / "report.html"
    assert main(["report", str(out), "--html", str(html)]) == ExitCode.OK
    page = html.read_text()
    assert "0/0/0 (1 skipped)" in page and said in page

    # the same attempt without the flag: the sentinel runs as it always did, and fails
    plain = tmp_path / "plain"
    row, sentinel = _run(capsys, monkeypatch, cache, payments, "full", plain)
    assert row["failed"] == ["requirements_recovered", "focused_tests_passed", SENTINEL]
    assert row["stages"]["sentinel passed"] == "failed"  # type: ignore[index]
    assert sentinel.status == "failed" and len(sentinel.details["steps"]) == 1
    assert _history_entries(cache) > before
    manifest = json.loads((plain / "manifest.json").read_text())
    assert manifest["skip_sentinel_when_rejected"] is False
    assert main(["report", str(plain)]) == ExitCode.OK
    text = capsys.readouterr().out
    (funnel_row,) = [line for line in text.splitlines() if "sentinel passed" in line]
    assert "0/1/0" in funnel_row and "skipped" not in funnel_row and FLAG not in text


def test_an_attempt_nothing_rejected_runs_the_sentinel_with_the_flag(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    cache: Path,
    payments: BuiltScenario,
) -> None:
    """`compat` meets every criterion and is re-approved: its sentinel runs and it is accepted."""
    row, sentinel = _run(capsys, monkeypatch, cache, payments, "compat", tmp_path / "run", FLAG)
    assert row["outcome"] == "accepted"
    assert row["stages"]["sentinel passed"] == "passed"  # type: ignore[index]
    assert sentinel.status == "passed" and len(sentinel.details["steps"]) == 1
