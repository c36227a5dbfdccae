from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from repogate.agent_spec import parse_agent_spec
from repogate.cli import ExitCode, main
from repogate.decision import Evidence, decide
from repogate.errors import RunDirError
from repogate.receipt import Check, Crash, Observation, observe
from repogate.sandbox import Isolation
from repogate.state import CandidateState
from repogate.store import RunManifest, Store

GOLD = parse_agent_spec("gold")
NULL = parse_agent_spec("null")
STATE = CandidateState(base_commit="a" * 40, candidate_commit="b" * 40, patch_digest="c" * 64)


def _decision() -> object:
    return decide(
        Evidence(task_id="t", profile="hermetic", state=STATE, submitted_patch_digest="c" * 64)
    )


def test_receipts_survive_a_killed_attempt_and_resume_redoes_it(tmp_path: Path) -> None:
    """A crash mid-attempt leaves finished receipts readable; resume neither loses nor duplicates."""
    with Store.create(tmp_path) as store:
        done = store.begin_attempt("t", GOLD, 0)
        store.finish_attempt(done.attempt_id, _decision())  # type: ignore[arg-type]
        half = store.begin_attempt("t", NULL, 0)
        store.start_attempt(half.attempt_id)  # as the run does when its worker starts it
        receipt = observe(
            "E",
            STATE.state_id,
            lambda: Observation(checks=(Check(name="environment_reproduced", status="passed"),)),
        )
        path = store.add_receipt(half.attempt_id, receipt, STATE)
    # the process dies here: no finish_attempt

    with Store.create(tmp_path) as reopened:
        _resumed(reopened, path, half.attempt_id)


def _resumed(reopened: Store, path: Path, half: str) -> None:
    assert path.is_file()
    assert reopened.receipts(half)[0].gate == "E"
    assert [a.status for a in reopened.attempts()] == ["done", "running"]

    again = reopened.begin_attempt("t", GOLD, 0)
    assert again.status == "done"  # finished work is kept, not redone
    redo = reopened.begin_attempt("t", NULL, 0)
    assert redo.status == "planned"  # begun anew, waiting for a worker
    assert reopened.receipts(redo.attempt_id) == []
    assert len(reopened.attempts()) == 2


def test_open_missing_dir(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="does not exist"):
        Store.open(tmp_path / "nope")


def test_show_missing_and_half_written_dirs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", str(tmp_path / "nope")]) == ExitCode.USAGE
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "half").mkdir()
    assert main(["show", str(tmp_path / "half")]) == ExitCode.USAGE
    assert "holds no store.sqlite" in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "store.sqlite").write_bytes(b"this is not sqlite" * 100)
    assert main(["show", str(broken)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1


def test_other_schema_version_refused(tmp_path: Path) -> None:
    Store.create(tmp_path).close()
    with sqlite3.connect(tmp_path / "store.sqlite") as conn:
        conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    with pytest.raises(RunDirError, match="schema version 99"):
        Store.open(tmp_path)


def test_show_lists_attempts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store.create(tmp_path) as store:
        rec = store.begin_attempt("t", GOLD, 0)
        store.finish_attempt(rec.attempt_id, _decision())  # type: ignore[arg-type]
    assert main(["show", str(tmp_path), "--json"]) == ExitCode.OK
    assert '"contract_id": "t"' in capsys.readouterr().out


def test_attempt_ids_of_specs_with_a_long_common_prefix_differ() -> None:
    """Two scripted agents in one folder must never share an attempt (one would be skipped)."""
    from repogate.store import attempt_id_for

    folder = "scripted:/very/long/run/directory/scenarios/payments/agents/"
    a = attempt_id_for("t", parse_agent_spec(folder + "compat-stale.toml"), 0)
    b = attempt_id_for("t", parse_agent_spec(folder + "compat.toml"), 0)
    assert a != b
    assert "compat-stale" in a


def test_a_crashed_attempt_is_redone_from_scratch_on_resume(tmp_path: Path) -> None:
    """Resuming must not add a second try's receipts to the first try's."""
    with Store.create(tmp_path) as store:
        first = store.begin_attempt("t", GOLD, 0)
        receipt = observe(
            "E",
            STATE.state_id,
            lambda: Observation(checks=(Check(name="environment_reproduced", status="passed"),)),
        )
        store.add_receipt(first.attempt_id, receipt, STATE)
        store.finish_attempt(first.attempt_id, None, crash=Crash(type="GitError", message="boom"))
        again = store.begin_attempt("t", GOLD, 0)
        assert again.status == "planned"
        assert store.receipts(again.attempt_id) == []


def test_store_is_a_context_manager_that_releases_the_run_directory(tmp_path: Path) -> None:
    """Leaving the ``with`` block closes the store, so the next run may take the folder."""
    with Store.create(tmp_path) as store:
        store.begin_attempt("t", GOLD, 0)
        with pytest.raises(RunDirError, match="another repogate run"):
            Store.create(tmp_path)
    with Store.create(tmp_path) as again, Store.open(tmp_path) as reader:
        assert [a.status for a in reader.attempts()] == ["planned"]
        assert again.being_written()


def test_manifest_reads_back_as_the_typed_manifest(tmp_path: Path) -> None:
    """The manifest is read as the model it was written from, not as loose JSON."""
    iso = Isolation(kind="none", network_off=False, detail="no sandbox")
    written = RunManifest(
        agents=({"spec": "gold"},),
        contracts=(),
        selection="s",
        isolation_agent=iso,
        isolation_tests=iso,
        planned_attempts=3,
    )
    with Store.create(tmp_path) as store:
        assert store.manifest() is None
        store.write_manifest(written)
        read = store.manifest()
    assert isinstance(read, RunManifest)
    assert read == written


def test_an_unreadable_manifest_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.create(tmp_path) as store:
        rec = store.begin_attempt("t", GOLD, 0)
        store.finish_attempt(rec.attempt_id, _decision())  # type: ignore[arg-type]
    (tmp_path / "manifest.json").write_text('{"schema_version": 1, "agents": 7}')
    with Store.open(tmp_path) as store, pytest.raises(RunDirError, match=r"manifest\.json"):
        store.manifest()
    assert main(["report", str(tmp_path)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "; " in err, err


def test_a_crash_is_stored_as_the_same_record_a_receipt_carries(tmp_path: Path) -> None:
    """One error record: an attempt's crash reads back typed, as a gate's crash does."""
    crashed = observe("E", STATE.state_id, lambda: (_ for _ in ()).throw(OSError("disk gone")))
    assert crashed.crash == Crash(type="OSError", message="disk gone")
    with Store.create(tmp_path) as store:
        rec = store.begin_attempt("t", GOLD, 0)
        store.finish_attempt(rec.attempt_id, None, crash=Crash.of(KeyError("k")))
        record = store.get(rec.attempt_id)
    assert record is not None and record.status == "crashed"
    assert record.crash == Crash(type="KeyError", message="'k'")
    assert str(record.crash) == "KeyError: 'k'"


def test_a_run_folder_of_store_schema_2_still_loads_its_crash_strings(tmp_path: Path) -> None:
    """Run folders written by the previous version kept a crash as ``Type: message`` text."""
    with Store.create(tmp_path) as store:
        rec = store.begin_attempt("t", GOLD, 0)
    with sqlite3.connect(tmp_path / "store.sqlite") as conn:
        conn.execute("UPDATE meta SET value='2' WHERE key='schema_version'")
        conn.execute(
            "UPDATE attempts SET status='crashed', crash=? WHERE attempt_id=?",
            ("GitError: git fetch failed: exit 128", rec.attempt_id),
        )
    with Store.open(tmp_path) as store:
        (record,) = store.attempts()
    assert record.crash == Crash(type="GitError", message="git fetch failed: exit 128")


def test_a_run_folder_of_an_older_schema_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Store.create(tmp_path).close()
    with sqlite3.connect(tmp_path / "store.sqlite") as conn:
        conn.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    assert main(["show", str(tmp_path)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "schema version 1" in err and "; " in err
