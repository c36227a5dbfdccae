"""Command-line edges a new user meets: ``--out`` given a file, and the attempts table telling
the agent's own status and an interrupted attempt."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from repogate.cli import ExitCode, load_evidence, main
from repogate.decision import decide
from repogate.report.terminal import attempts_table
from repogate.store import AttemptRecord


@pytest.mark.parametrize("below", ["", "run"])
def test_out_that_is_a_file_is_a_one_line_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], below: str
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("keep me\n")
    out = taken / below if below else taken
    code = main(["run", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    assert err.startswith(f"error: --out {out} is ") and err.count("\n") == 1, err
    assert str(taken) in err and "give a folder" in err
    assert taken.read_text() == "keep me\n"


def _record(
    status: str = "done", *, decided: bool = True, root: Path | None = None
) -> AttemptRecord:
    decision = None
    if decided and root is not None:
        decision = decide(
            load_evidence(root / "examples" / "evidence" / "pure-parser-function.json")
        )
    return AttemptRecord(
        attempt_id="t1__cmd-a__e0",
        contract_id="t1",
        agent="cmd:./fix.sh --fast",
        epoch=0,
        status=status,
        started_at="2026-01-05T00:00:00Z",
        decision=decision,
    )


def _text(*args: object, **kwargs: object) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=200).print(attempts_table(*args, **kwargs))  # type: ignore[arg-type]
    return buffer.getvalue()


def test_table_shows_the_agents_status_when_not_done(root: Path) -> None:
    """An agent stopped at its budget must not pass for one that finished and was judged."""
    record = _record(root=root)
    stopped = _text([record], "run", {record.attempt_id: "stopped"})
    assert "accepted" in stopped and "(agent stopped)" in stopped
    assert "cmd:fix.sh" in stopped
    done = _text([record], "run", {record.attempt_id: "done"})
    assert "(agent" not in done
    assert "(agent" not in _text([record], "run")


def test_show_calls_an_unfinished_attempt_interrupted() -> None:
    record = _record("running", decided=False)
    assert "interrupted" in _text([record], "run", interrupted=True)
    assert "interrupted" not in _text([record], "run")


def test_show_tells_a_running_attempt_from_an_interrupted_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An attempt still being worked on by a live run must not be reported as interrupted."""
    from repogate.agent_spec import GoldSpec
    from repogate.store import Store

    with Store.create(tmp_path) as store:  # holds the run directory's lock, as a live run does
        store.begin_attempt("t", GoldSpec(), 0)
        assert main(["show", str(tmp_path)]) == ExitCode.OK
        live = capsys.readouterr().out
        assert "running" in live and "interrupted" not in live
    # the run ends without finishing the attempt (killed)
    assert main(["show", str(tmp_path)]) == ExitCode.OK
    assert "interrupted" in capsys.readouterr().out
