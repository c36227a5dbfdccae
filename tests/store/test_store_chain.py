"""The store's digest chain: receipts -> decision.json -> SQLite row.

Threat closed: anyone who can write the run directory (an agent under weak isolation, a careless
script) rewrites a receipt, a decision or an index row, and ``show`` and resume would present the
forgery as the harness's verdict. Every such change must be found and the attempt named.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from _stored_run import finished_run as _run_dir
from repogate.cli import ExitCode, main
from repogate.errors import RunDirError
from repogate.store import Store


def test_untouched_run_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir, first, _ = _run_dir(tmp_path)
    with Store.open(run_dir) as store:
        assert store.changed_evidence() == {}
        decision = store.get(first).decision  # type: ignore[union-attr]
        assert decision is not None
        receipts = sorted((run_dir / "attempts" / first / "receipts").iterdir())
        assert [d.path for d in decision.receipt_digests] == [
            str(p.relative_to(run_dir / "attempts" / first)) for p in receipts
        ]
    assert main(["show", str(run_dir)]) == ExitCode.OK
    assert "changed" not in capsys.readouterr().err


def _tamper_receipt(run_dir: Path, attempt: str) -> None:
    path = next((run_dir / "attempts" / attempt / "receipts").glob("*-I.intoto.json"))
    data = json.loads(path.read_text())
    data["predicate"]["status"] = "passed"
    data["predicate"]["checks"][0]["status"] = "passed"
    path.write_text(json.dumps(data, indent=2))


def _tamper_decision_file(run_dir: Path, attempt: str) -> None:
    path = run_dir / "attempts" / attempt / "decision.json"
    data = json.loads(path.read_text())
    data.update(accepted=True, outcome="accepted", failed=[])
    path.write_text(json.dumps(data, indent=2))


def _tamper_row(run_dir: Path, attempt: str) -> None:
    with sqlite3.connect(run_dir / "store.sqlite") as conn:
        (text,) = conn.execute(
            "SELECT decision FROM attempts WHERE attempt_id=?", (attempt,)
        ).fetchone()
        data = json.loads(text)
        data.update(accepted=True, outcome="accepted", failed=[])
        conn.execute(
            "UPDATE attempts SET decision=? WHERE attempt_id=?", (json.dumps(data), attempt)
        )


def _tamper_receipt_row(run_dir: Path, attempt: str) -> None:
    with sqlite3.connect(run_dir / "store.sqlite") as conn:
        conn.execute(
            "UPDATE receipts SET status='passed', body=replace(body, '\"failed\"', '\"passed\"')"
            " WHERE attempt_id=?",
            (attempt,),
        )


def _row_of_another_shape(column: str) -> Callable[[Path, str], None]:
    """Rewrite a store row's JSON to a list: valid JSON, not a decision or a receipt."""
    table = "attempts" if column == "decision" else "receipts"

    def tamper(run_dir: Path, attempt: str) -> None:
        with sqlite3.connect(run_dir / "store.sqlite") as conn:
            conn.execute(f"UPDATE {table} SET {column}='[]' WHERE attempt_id=?", (attempt,))  # noqa: S608

    return tamper


def _delete_receipt(run_dir: Path, attempt: str) -> None:
    next((run_dir / "attempts" / attempt / "receipts").glob("*-E.intoto.json")).unlink()


TAMPERS = {
    "receipt file": (_tamper_receipt, "receipts/01-I.intoto.json"),
    "decision file": (_tamper_decision_file, "decision.json"),
    "decision row": (_tamper_row, "store row"),
    "receipt row": (_tamper_receipt_row, "store row"),
    "receipt deleted": (_delete_receipt, "receipts/00-E.intoto.json"),
    # valid JSON of another shape in a row: it was a usage error (exit 2) or a traceback
    "decision row a list": (_row_of_another_shape("decision"), "store row of the decision"),
    "receipt row a list": (_row_of_another_shape("body"), "store row of receipts/00-E"),
}


@pytest.mark.parametrize("kind", sorted(TAMPERS))
def test_show_names_the_tampered_attempt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    run_dir, first, second = _run_dir(tmp_path)
    tamper, where = TAMPERS[kind]
    tamper(run_dir, second)
    with Store.open(run_dir) as store:
        changed = store.changed_evidence()
    assert list(changed) == [second]
    assert where in "; ".join(changed[second])
    code = main(["show", str(run_dir)])
    captured = capsys.readouterr()
    assert code == ExitCode.INTERNAL
    assert f"attempt {second}" in captured.err and where in captured.err
    assert first not in captured.err
    assert "evidence changed" in captured.out  # the row shows no verdict, trusting neither copy
    assert main(["show", str(run_dir), "--json"]) == ExitCode.INTERNAL
    rows = {r["attempt_id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows[first]["evidence"] == "verified"
    assert rows[second]["evidence"].startswith("changed")


@pytest.mark.parametrize("kind", sorted(TAMPERS))
def test_resume_refuses_a_tampered_run(tmp_path: Path, kind: str) -> None:
    """Resume never takes a changed verdict as finished work, nor silently redoes it."""
    run_dir, _, second = _run_dir(tmp_path)
    TAMPERS[kind][0](run_dir, second)
    with pytest.raises(RunDirError, match=f"attempt {second}") as caught:
        Store.create(run_dir)
    assert "new --out" in str(caught.value)
    assert len(str(caught.value).splitlines()) == 1
    # Refused before anything was written: the lock is released, the evidence left as found.
    with Store.open(run_dir) as store:
        assert store.changed_evidence().keys() == {second}


@pytest.mark.parametrize("kind", sorted(TAMPERS))
def test_report_refuses_a_run_whose_evidence_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """A report must not count a verdict whose evidence chain is broken (new-user finding: it
    printed the tampered run's acceptance with exit 0). It exits 3, as ``show`` does on the same
    folder (the documented code for changed evidence; it had exit 2, bad input)."""
    run_dir, _, second = _run_dir(tmp_path)
    TAMPERS[kind][0](run_dir, second)
    for argv in (
        ["report", str(run_dir)],
        ["report", str(run_dir), "--json"],
        ["show", str(run_dir)],
    ):
        capsys.readouterr()
        assert main(argv) == ExitCode.INTERNAL, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and second in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("changed", "more"), [(2, "(and 1 more attempt)"), (3, "(and 2 more attempts)")]
)
def test_the_refusal_counts_the_other_changed_attempts_in_english(
    tmp_path: Path, changed: int, more: str
) -> None:
    """It said "(and 1 more attempts)"."""
    from repogate.store._chain import refuse_changed

    found: dict[str, tuple[str, ...]] = {
        f"attempt-{n}": ("decision.json differs",) for n in range(changed)
    }
    with pytest.raises(RunDirError) as info:
        refuse_changed(tmp_path, found)
    assert f"(decision.json differs) {more}; " in str(info.value)
