from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from repogate.cli import ExitCode, main
from repogate.decision import Evidence, decide
from repogate.errors import RunDirError
from repogate.receipt import Check, Observation, observe
from repogate.state import CandidateState
from repogate.store import Store

STATE = CandidateState(base_commit="a" * 40, candidate_commit="b" * 40, patch_digest="c" * 64)


def _decision() -> object:
    return decide(
        Evidence(task_id="t", profile="hermetic", state=STATE, submitted_patch_digest="c" * 64)
    )


def test_receipts_survive_a_killed_attempt_and_resume_redoes_it(tmp_path: Path) -> None:
    """A crash mid-attempt leaves finished receipts readable; resume neither loses nor duplicates."""
    store = Store.create(tmp_path)
    done = store.begin_attempt("t", "gold", 0)
    store.finish_attempt(done.attempt_id, _decision())  # type: ignore[arg-type]
    half = store.begin_attempt("t", "null", 0)
    receipt = observe(
        "E",
        STATE.state_id,
        lambda: Observation(checks=(Check(name="environment_reproduced", status="passed"),)),
    )
    path = store.add_receipt(half.attempt_id, receipt, STATE)
    store.close()  # the process dies here: no finish_attempt

    reopened = Store.open(tmp_path)
    assert path.is_file()
    assert reopened.receipts(half.attempt_id)[0].gate == "E"
    assert [a.status for a in reopened.attempts()] == ["done", "running"]

    again = reopened.begin_attempt("t", "gold", 0)
    assert again.status == "done"  # finished work is kept, not redone
    redo = reopened.begin_attempt("t", "null", 0)
    assert redo.status == "running"
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
    store = Store.create(tmp_path)
    rec = store.begin_attempt("t", "gold", 0)
    store.finish_attempt(rec.attempt_id, _decision())  # type: ignore[arg-type]
    store.close()
    assert main(["show", str(tmp_path), "--json"]) == ExitCode.OK
    assert '"contract_id": "t"' in capsys.readouterr().out


def test_attempt_ids_of_specs_with_a_long_common_prefix_differ() -> None:
    """Two scripted agents in one folder must never share an attempt (one would be skipped)."""
    from repogate.store import attempt_id_for

    folder = "scripted:/very/long/run/directory/scenarios/payments/agents/"
    a = attempt_id_for("t", folder + "compat-stale.toml", 0)
    b = attempt_id_for("t", folder + "compat.toml", 0)
    assert a != b
    assert "compat-stale" in a


def test_a_crashed_attempt_is_redone_from_scratch_on_resume(tmp_path: Path) -> None:
    """Resuming must not add a second try's receipts to the first try's."""
    store = Store.create(tmp_path)
    first = store.begin_attempt("t", "gold", 0)
    receipt = observe(
        "E",
        STATE.state_id,
        lambda: Observation(checks=(Check(name="environment_reproduced", status="passed"),)),
    )
    store.add_receipt(first.attempt_id, receipt, STATE)
    store.finish_attempt(first.attempt_id, None, crash="GitError: boom")
    again = store.begin_attempt("t", "gold", 0)
    assert again.status == "running"
    assert store.receipts(again.attempt_id) == []
    store.close()
