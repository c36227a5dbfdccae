"""A run still being written, an interrupted one, and an empty one, built with the real Store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repogate.agent_spec import GoldSpec
from repogate.cli import ExitCode, load_evidence, main
from repogate.decision import decide
from repogate.sandbox import Isolation
from repogate.store import RunManifest, Store


def _store(run_dir: Path, planned: int) -> Store:
    store = Store.create(run_dir)
    iso = Isolation(kind="bwrap", network_off=True)
    store.write_manifest(
        RunManifest(
            agents=({"spec": "gold"},),
            contracts=(),
            selection="test",
            planned_attempts=planned,
            isolation_agent=iso,
            isolation_tests=iso,
        )
    )
    return store


def test_a_run_in_progress_is_reported_as_partial(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    decision = decide(load_evidence(root / "examples" / "evidence" / "pure-parser-function.json"))
    with _store(tmp_path / "run", planned=3) as store:
        first = store.begin_attempt("t1", GoldSpec(), 0)
        store.finish_attempt(first.attempt_id, decision)
        store.begin_attempt("t2", GoldSpec(), 0)  # still running; the store's lock is held
        assert main(["report", str(tmp_path / "run"), "--json"]) == ExitCode.OK
        captured = capsys.readouterr()
        report = json.loads(captured.out)
        assert report["partial"] is True
        assert report["partial_note"].endswith("partial (in progress), 1 of 3 attempts done")
        assert "partial report:" in captured.err
        errors = report["errors"][0]
        assert (errors["attempts"], errors["unfinished"]) == (2, 1)
        assert report["acceptance"][0]["attempts"] == 1  # the unfinished one is not scored
    assert main(["report", str(tmp_path / "run"), "--json"]) == ExitCode.OK
    report = json.loads(capsys.readouterr().out)
    assert "partial (interrupted), 1 of 3 attempts done" in report["partial_note"]
    # the text report carries the note itself: said once, not again on stderr
    assert main(["report", str(tmp_path / "run")]) == ExitCode.OK
    captured = capsys.readouterr()
    assert (captured.out + captured.err).count("partial report:") == 1


def test_an_empty_run_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _store(tmp_path / "run", planned=2):
        pass
    assert main(["report", str(tmp_path / "run")]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "no attempt" in err and "run `repogate run ... --out DIR` first" in err


def test_a_run_stopped_before_its_first_attempt_finished_says_how_to_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """New user: the hint was `run repogate run --out DIR first`, which, with no contracts named,
    means the embedded default, and was refused on a run of other contracts."""
    with _store(tmp_path / "run", planned=2) as store:
        store.begin_attempt("t1", GoldSpec(), 0)
    assert main(["report", str(tmp_path / "run")]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "1 begun, none finished" in err
    assert "rerun the `repogate run` command that made it (the same contracts and agents)" in err


def test_several_runs_are_reported_as_one_set(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    decision = decide(load_evidence(root / "examples" / "evidence" / "pure-parser-function.json"))
    for name, task in (("a", "t1"), ("b", "t2")):
        with _store(tmp_path / name, planned=1) as store:
            record = store.begin_attempt(task, GoldSpec(), 0)
            store.finish_attempt(record.attempt_id, decision)
    assert main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--json"]) == ExitCode.OK
    report = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in report["runs"]] == ["complete", "complete"]
    gold = report["acceptance"][0]
    assert (gold["agent"], gold["accepted"], gold["scored"], gold["tasks"]) == ("gold", 2, 2, 2)
    assert {a["run"] for a in report["attempts"]} == {str(tmp_path / "a"), str(tmp_path / "b")}
