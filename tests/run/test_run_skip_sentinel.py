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
from repogate.vocabulary import SKIPPED_STAGES_LEGEND

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


def _funnel_row(line: str, stage: str) -> bool:
    """Whether ``line`` of the text report is the funnel's row of ``stage`` (not its legend,
    ``(N skipped): not applicable, e.g. ... sentinel passed``, which names the stage too)."""
    return stage in line and SKIPPED_STAGES_LEGEND not in " ".join(line.split())


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
    (funnel_row,) = [line for line in text.splitlines() if _funnel_row(line, "sentinel passed")]
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
    (funnel_row,) = [line for line in text.splitlines() if _funnel_row(line, "sentinel passed")]
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


AGENTS = ("compat", "full")


def _spec(payments: BuiltScenario, agent: str) -> str:
    """The ``--agent`` spec of the payments scenario's scripted ``agent``."""
    return f"scripted:{payments.repo.parent / 'agents' / f'{agent}.toml'}"


def _extend(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cache: Path,
    payments: BuiltScenario,
    out: Path,
    first: tuple[str, ...],
    then: tuple[str, ...],
) -> tuple[dict[str, dict[str, object]], list[str]]:
    """Run `compat` with ``first`` flags, then rerun into the same ``out`` adding `full` (which
    a hard check rejects) with ``then``; return the decisions by agent name and the second
    command's warning lines."""
    monkeypatch.setenv("REPOGATE_CACHE", str(cache))
    contract = str(payments.repo.parent / "compat.toml")
    compat, full = (_spec(payments, a) for a in AGENTS)
    code, _ = run_json(capsys, contract, "--agent", compat, "--out", str(out), *first)
    assert code == ExitCode.OK
    argv = [contract, "--agent", compat, "--agent", full, "--out", str(out), "--json", *then]
    code = main(["run", *argv])
    said = capsys.readouterr()
    assert code == ExitCode.OK, said.err
    rows = {Path(str(r["agent"]).removeprefix("scripted:")).stem: r for r in json.loads(said.out)}
    return rows, [line for line in said.err.splitlines() if line.startswith("warning:")]


def _sentinels(out: Path) -> dict[str, str]:
    """Each attempt's gate S status by agent name, read from its stored receipt."""
    with Store.open(out) as store:
        return {
            Path(a.agent.removeprefix("scripted:")).stem: r.status
            for a in store.attempts()
            for r in store.receipts(a.attempt_id)
            if r.gate == "S"
        }


@pytest.mark.parametrize(
    ("first", "then", "skipped", "said"),
    [
        (
            (FLAG,),
            (),
            True,
            f"warning: this run was started with {FLAG}: its sentinel is still not run on "
            f"attempts already rejected, though this command did not give {FLAG}; run into a "
            "new --out folder to judge attempts the other way",
        ),
        (
            (),
            (FLAG,),
            False,
            f"warning: this run was started without {FLAG}: its sentinel still runs on every "
            f"attempt, though this command gave {FLAG}; run into a new --out folder to judge "
            "attempts the other way",
        ),
    ],
)
def test_a_resumed_run_keeps_its_first_commands_skip_setting_and_says_so(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    cache: Path,
    payments: BuiltScenario,
    first: tuple[str, ...],
    then: tuple[str, ...],
    skipped: bool,
    said: str,
) -> None:
    """New user: a rerun into the same --out without the flag ran the sentinel on its rejected
    attempts while the manifest still said it was skipped (true when any command had it), and
    with the flag after a run without it, skipped it silently. The run's first command sets it;
    a later command keeps it, saying so in one line, so the manifest and every attempt agree."""
    out = tmp_path / "run"
    rows, warnings = _extend(capsys, monkeypatch, cache, payments, out, first, then)
    assert warnings == [said]
    assert rows["compat"]["outcome"] == "accepted"  # nothing rejected it: its sentinel ran
    assert rows["full"]["outcome"] == "rejected"
    stage = "skipped" if skipped else "failed"
    assert rows["full"]["stages"]["sentinel passed"] == stage  # type: ignore[index]
    assert _sentinels(out) == {"compat": "passed", "full": stage}
    checks = {c["name"]: c for c in rows["full"]["checks"]}  # type: ignore[attr-defined]
    not_run = "not run: already rejected by requirements_recovered, focused_tests_passed"
    assert (checks[SENTINEL]["detail"] == not_run) is skipped
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["skip_sentinel_when_rejected"] is skipped
    # the same command again: the run already has its setting, nothing to say, nothing rerun
    again = [str(payments.repo.parent / "compat.toml"), "--agent", _spec(payments, "compat")]
    code = main(["run", *again, "--out", str(out), *first])
    assert code == ExitCode.OK
    assert "warning: this run was started" not in capsys.readouterr().err
