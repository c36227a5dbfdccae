"""A run's identity: a run id made when the run is created, kept on resume, carried by a copy.

Threats closed (new-user findings, issue 12 follow-up): ``repogate report RUN COPY`` counted a
copied run folder's attempts twice (runs carried no id, so a copy looked like another run), which
doubles every n and narrows every interval; and a resumed run's manifest moved ``created_at`` to
the resume, so a report said the run began after most of its attempts.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from repogate.agent_spec import AgentSpec, GoldSpec, NullSpec
from repogate.cli import ExitCode, load_evidence, main
from repogate.decision import decide
from repogate.sandbox import Isolation
from repogate.store import RunManifest, Store
from repogate.tasks.scenarios import BuiltScenario


def _finished(run_dir: Path, root: Path, agents: tuple[AgentSpec, ...] = (GoldSpec(),)) -> None:
    """Begin and finish one attempt per agent on task ``t1`` in the run at ``run_dir``."""
    decision = decide(load_evidence(root / "examples" / "evidence" / "pure-parser-function.json"))
    iso = Isolation(kind="bwrap", network_off=True)
    with Store.create(run_dir) as store:
        store.write_manifest(
            RunManifest(
                agents=({"spec": "gold"},),
                contracts=(),
                selection="test",
                isolation_agent=iso,
                isolation_tests=iso,
            )
        )
        for agent in agents:
            record = store.begin_attempt("t1", agent, 0)
            store.finish_attempt(record.attempt_id, decision)


def _run_id(run_dir: Path) -> str:
    with Store.open(run_dir) as store:
        return store.run_id


def test_a_run_id_is_made_once_kept_on_resume_and_carried_by_a_copy(tmp_path: Path) -> None:
    Store.create(tmp_path / "a").close()
    Store.create(tmp_path / "b").close()
    first = _run_id(tmp_path / "a")
    assert len(first) == 32 and int(first, 16) >= 0  # a uuid4's hex, not a clock reading
    assert _run_id(tmp_path / "b") != first  # the fixed test clock makes no two runs one
    Store.create(tmp_path / "a").close()  # resume
    assert _run_id(tmp_path / "a") == first
    shutil.copytree(tmp_path / "a", tmp_path / "copy")
    assert _run_id(tmp_path / "copy") == first


def _as_schema_3(run_dir: Path) -> None:
    """Make ``run_dir`` what the previous repogate wrote: store schema 3, no run id anywhere."""
    with sqlite3.connect(run_dir / "store.sqlite") as conn:
        conn.execute("DELETE FROM meta WHERE key='run_id'")
        conn.execute("UPDATE meta SET value='3' WHERE key='schema_version'")
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest.pop("run_id", None)
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def test_an_older_run_folder_has_an_id_its_copy_shares_and_resume_keeps(
    tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Schema 3 folders carry no run id: one is derived from what they hold (so a copy of an old
    run is still known as one), and a resume writes that same id as it upgrades to schema 4."""
    _finished(tmp_path / "old", root)
    _as_schema_3(tmp_path / "old")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767600001")  # another run, a second later
    _finished(tmp_path / "other", root)
    _as_schema_3(tmp_path / "other")
    shutil.copytree(tmp_path / "old", tmp_path / "copy")
    derived = _run_id(tmp_path / "old")
    assert derived == _run_id(tmp_path / "copy") != _run_id(tmp_path / "other")
    with Store.create(tmp_path / "copy") as store:
        assert store.run_id == derived
    with sqlite3.connect(tmp_path / "copy" / "store.sqlite") as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    assert (meta["schema_version"], meta["run_id"]) == ("4", derived)


def _report(capsys: pytest.CaptureFixture[str], *runs: Path) -> tuple[dict[str, Any], str]:
    capsys.readouterr()
    assert main(["report", *map(str, runs), "--json"]) == ExitCode.OK
    captured = capsys.readouterr()
    report: dict[str, Any] = json.loads(captured.out)
    return report, captured.err


@pytest.mark.parametrize("schema", [4, 3])
def test_report_counts_each_attempt_of_a_copied_run_once(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str], schema: int
) -> None:
    _finished(tmp_path / "run", root, (GoldSpec(), NullSpec()))
    if schema == 3:
        _as_schema_3(tmp_path / "run")
    shutil.copytree(tmp_path / "run", tmp_path / "copy")
    alone, _ = _report(capsys, tmp_path / "run")
    for given in ((tmp_path / "run", tmp_path / "copy"), (tmp_path / "run", tmp_path / "run")):
        report, err = _report(capsys, *given)
        assert report["acceptance"] == alone["acceptance"]
        assert len(report["attempts"]) == 2
        assert [r["path"] for r in report["runs"]] == [str(tmp_path / "run")]
        assert err.startswith(f"note: {given[1]} holds the same run as {given[0]} (run id "), err
        assert "each attempt is counted once" in err and err.count("\n") == 1, err


def test_a_copy_extended_with_an_agent_adds_only_its_new_attempts(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy that went on (a new agent) is the same run plus attempts: those count, once."""
    _finished(tmp_path / "run", root)
    shutil.copytree(tmp_path / "run", tmp_path / "copy")
    with Store.create(tmp_path / "copy") as store:
        record = store.begin_attempt("t1", NullSpec(), 0)
        decision = decide(
            load_evidence(root / "examples" / "evidence" / "pure-parser-function.json")
        )
        store.finish_attempt(record.attempt_id, decision)
    report, _ = _report(capsys, tmp_path / "run", tmp_path / "copy")
    rows = report["attempts"]
    assert sorted(a["agent"] for a in rows) == ["gold", "null"]


def test_two_runs_of_the_same_inputs_are_two_runs(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs made apart (repeats a user means to pool) keep both their attempts."""
    _finished(tmp_path / "a", root)
    _finished(tmp_path / "b", root)
    report, err = _report(capsys, tmp_path / "a", tmp_path / "b")
    assert len(report["attempts"]) == 2 and "note:" not in err


@pytest.mark.slow
def test_the_manifest_names_the_run_and_keeps_its_creation_time_on_resume(
    parser: BuiltScenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "run"
    argv = ["run", str(parser.contracts[0]), "--agent", "null", "--out", str(out), "--json"]
    assert main(argv) == ExitCode.OK
    first = json.loads((out / "manifest.json").read_text())
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1767600000 + 86400))  # the resume, a day later
    assert main(argv) == ExitCode.OK
    resumed = json.loads((out / "manifest.json").read_text())
    assert resumed["created_at"] == first["created_at"]
    assert resumed["run_id"] == first["run_id"] == _run_id(out)
    capsys.readouterr()


def test_copies_of_a_run_that_decided_an_attempt_apart_are_refused(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Red team: an unfinished run copied, then each folder resumed, decided one attempt two ways;
    ``report`` counted whichever folder came first (accepted one way round, rejected the other)."""
    evidence = root / "examples" / "evidence"
    _finished(tmp_path / "run", root)
    with Store.create(tmp_path / "run") as store:
        open_id = store.begin_attempt("t1", NullSpec(), 0).attempt_id  # interrupted here
    shutil.copytree(tmp_path / "run", tmp_path / "copy")
    accepted = decide(load_evidence(evidence / "pure-parser-function.json"))
    rejected = decide(load_evidence(evidence / "payments-sdk-retry-stale.json"))
    assert accepted.accepted and not rejected.accepted
    for folder, decision in ((tmp_path / "run", accepted), (tmp_path / "copy", rejected)):
        with Store.create(folder) as store:
            store.finish_attempt(open_id, decision)
    for given in ((tmp_path / "run", tmp_path / "copy"), (tmp_path / "copy", tmp_path / "run")):
        capsys.readouterr()
        assert main(["report", *map(str, given)]) == ExitCode.USAGE
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1, err
        assert f"decided attempt {open_id} differently" in err, err
