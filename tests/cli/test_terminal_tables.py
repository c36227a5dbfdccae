"""Terminal output of `repogate run`: the live progress bar and a final table 100 columns wide."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from repogate.cli import ExitCode, load_evidence, main
from repogate.cli.progress import RunProgress
from repogate.cli.terminal import attempts_table
from repogate.decision import Decision, decide
from repogate.receipt import Crash
from repogate.store import AttemptRecord
from repogate.tasks.scenarios import BuiltScenario


def _records(root: Path) -> list[AttemptRecord]:
    accepted = decide(load_evidence(root / "examples" / "evidence" / "pure-parser-function.json"))
    rejected = decide(
        load_evidence(root / "examples" / "evidence" / "payments-sdk-retry-stale.json")
    )
    assert accepted.accepted and not rejected.accepted
    common = {"started_at": "2026-01-05T00:00:00Z", "status": "done"}
    long = "a-contract-with-a-very-long-identifier-that-goes-on-and-on"
    agent = "scripted:/x/an-agent-with-a-long-name.toml"
    return [
        AttemptRecord(
            attempt_id="a", contract_id=long, agent="gold", epoch=0, decision=accepted, **common
        ),
        AttemptRecord(
            attempt_id="b", contract_id=long, agent=agent, epoch=1, decision=rejected, **common
        ),
        AttemptRecord(
            attempt_id="c",
            contract_id="t",
            agent="null",
            epoch=0,
            status="crashed",
            started_at="2026-01-05T00:00:00Z",
            crash=Crash(type="RuntimeError", message="x" * 300),
        ),
    ]


def test_final_table_is_one_row_per_attempt_within_100_columns(root: Path) -> None:
    records = _records(root)
    buffer = io.StringIO()
    Console(file=buffer, width=100).print(attempts_table(records, "run /tmp/somewhere"))
    lines = buffer.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 100
    rows = [line for line in lines if line[:1].isdigit()]
    assert [row.split()[0] for row in rows] == ["1", "2", "3"]  # numbered as `show RUN N` takes
    assert "accepted" in rows[0] and "rejected" in rows[1] and "crashed" in rows[2]
    # an agent label wraps, never cut (new user: `show` cut `claude-3-5-sonnet-…` labels, so two
    # agents differing at their end read alike), and so does a contract id
    assert _column_cells(buffer.getvalue(), "agent", "ep")[1] == "an-agent-with-a-long-name"
    long = "a-contract-with-a-very-long-identifier-that-goes-on-and-on"
    assert _column_cells(buffer.getvalue(), "contract", "agent")[:2] == [long, long]


def test_contract_ids_sharing_a_prefix_and_every_failed_check_are_shown_whole(root: Path) -> None:
    """New user: `show` cut `payments-retry-timeout-compat` to `payments-retry-timeout…`, which
    read as the other contract, and cut check names (`generated_artifacts_fre…`)."""
    rejected = _records(root)[1].decision
    assert rejected is not None and len(rejected.failed) > 1
    common = {"started_at": "2026-01-05T00:00:00Z", "status": "done", "decision": rejected}
    records = [
        AttemptRecord(attempt_id=f"a{n}", contract_id=cid, agent=agent, epoch=0, **common)
        for n, (cid, agent) in enumerate(
            [("payments-retry-timeout", "full"), ("payments-retry-timeout-compat", "compat-stale")]
        )
    ]
    buffer = io.StringIO()
    Console(file=buffer, width=100).print(attempts_table(records, "run"))
    text = buffer.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "payments-retry-timeout-compat " in text and "payments-retry-timeout " in text
    shown = " ".join(text.split())
    for name in rejected.failed:
        assert name in shown.replace(" ,", ",") or name in text.replace("\n", ""), name


def test_progress_bar_counts_outcomes_with_eta_on_a_terminal(root: Path) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    with RunProgress(3, console) as bar:
        for record in _records(root):
            bar.tick(f"{record.contract_id} · epoch {record.epoch}", None)
            bar.tick("", record)
        assert bar.counts == {"accepted": 1, "rejected": 1, "error": 1}
    shown = buffer.getvalue()
    assert "1 accepted" in shown and "1 rejected" in shown and "1 error" in shown
    assert "3/3" in shown and "ETA" in shown
    assert "running " not in shown  # the bar, not log lines, on a terminal


def test_no_bar_off_a_terminal_and_nothing_with_json(root: Path) -> None:
    buffer = io.StringIO()
    with RunProgress(1, Console(file=buffer, force_terminal=False)) as bar:
        bar.tick("t1 · gold · epoch 0", None)
        bar.tick("", _records(root)[0])
    assert buffer.getvalue() == "running [1/1] t1 · gold · epoch 0\n"
    quiet = io.StringIO()
    with RunProgress(1, Console(file=quiet, force_terminal=True), quiet=True) as bar:
        bar.tick("t1 · gold · epoch 0", None)
        bar.tick("", _records(root)[0])
    assert quiet.getvalue() == ""


def test_each_progress_line_gives_the_attempts_place_among_all(root: Path) -> None:
    """New user: a log of ``running LABEL`` lines said nothing of how far the run was. Each line
    gives the attempt's place and the run's total (``[2/3]``); attempts found done on resume
    count first, and attempts running side by side say how many have finished."""
    done, *_ = _records(root)
    one_at_a_time = io.StringIO()
    with RunProgress(3, Console(file=one_at_a_time, force_terminal=False)) as bar:
        for label in ("a", "b", "c"):
            bar.tick(label, None)
            bar.tick(label, done)
    assert one_at_a_time.getvalue().splitlines() == [
        "running [1/3] a",
        "running [2/3] b",
        "running [3/3] c",
    ]
    resumed = io.StringIO()
    with RunProgress(3, Console(file=resumed, force_terminal=False)) as bar:
        bar.tick("a", done)  # found done in the store: not run again
        bar.tick("b", None)
    assert resumed.getvalue() == "1 of 3 attempts already done\nrunning [2/3] b\n"
    side_by_side = io.StringIO()
    with RunProgress(4, Console(file=side_by_side, force_terminal=False)) as bar:
        bar.tick("a", None)
        bar.tick("b", None)
        bar.tick("a", done)
        bar.tick("c", None)
    assert side_by_side.getvalue().splitlines() == [
        "running [1/4] a",
        "running [2/4] b (0 finished)",
        "running [3/4] c (1 finished)",
    ]


def test_text_from_runs_is_shown_as_text_never_as_markup(root: Path) -> None:
    """Test ids carry brackets (``test_x[timeout=301]``) and agents choose crash messages: rich
    must print them as written, never read them as markup (dropping a parameter or restyling)."""
    from repogate.cli.terminal import decision_table

    rejected = decide(
        load_evidence(root / "examples" / "evidence" / "payments-sdk-retry-stale.json")
    )
    check = rejected.checks[0].model_copy(update={"detail": "tests/t.py::test_x[timeout=301]"})
    shown = rejected.model_copy(update={"checks": (check,)})
    buffer = io.StringIO()
    Console(file=buffer, width=200).print(decision_table(shown))
    assert "test_x[timeout=301]" in buffer.getvalue()
    crashed = _records(root)[2].model_copy(
        update={"crash": Crash(type="X", message="[bold red]forged[/] boom")}
    )
    buffer = io.StringIO()
    Console(file=buffer, width=200).print(attempts_table([crashed], "run"))
    assert "[bold red]forged" in buffer.getvalue()


def _readme_ids() -> list[str]:
    """The embedded default's contract ids, as the README's verdict table names them."""
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    return re.findall(r"^\| `([^`]+)` \(", text, flags=re.MULTILINE)


def _printed_at(width: int, pairs: list[tuple[str, str]], decision: Decision | None) -> str:
    """The attempts table of one finished attempt per (contract id, agent), printed at ``width``."""
    records = [
        AttemptRecord(
            attempt_id=f"a{n}",
            contract_id=cid,
            agent=agent,
            epoch=0,
            started_at="2026-01-05T00:00:00Z",
            status="done",
            decision=decision,
        )
        for n, (cid, agent) in enumerate(pairs)
    ]
    buffer = io.StringIO()
    Console(file=buffer, width=width).print(attempts_table(records, "run"))
    return buffer.getvalue()


def _column_cells(text: str, column: str, following: str) -> list[str]:
    """Each row's cell in ``column`` (up to the next header ``following``), its lines joined."""
    lines = text.splitlines()
    header = next(line for line in lines if f" {column}" in f" {line}" and following in line)
    start = header.index(column)
    end = header.index(following, start)
    cells: list[str] = []
    for line in lines[lines.index(header) + 2 :]:  # after the header's rule
        piece = line[start:end].strip()
        if line[:1].isdigit():
            cells.append(piece)
        elif cells and piece:
            cells[-1] += piece
    return cells


@pytest.mark.parametrize("width", [80, 100, 160])
def test_contract_ids_are_never_cut_at_any_width(root: Path, width: int) -> None:
    """New user: at 100 columns `show` cut 6 of the embedded default's 11 contract ids
    (`payments-r…ing-test`), so two injected variants of the payments task read alike."""
    ids = _readme_ids()
    assert len(ids) == 11 and len({len(i) for i in ids}) > 1, ids
    rejected = _records(root)[1].decision
    pairs = [(cid, agent) for cid in ids for agent in ("lock-hand-edited", "gold")]
    text = _printed_at(width, pairs, rejected)
    assert max(len(line) for line in text.splitlines()) <= width, text
    assert _column_cells(text, "contract", "agent") == [i for i in ids for _ in range(2)], text
    assert _column_cells(text, "agent", "ep") == ["lock-hand-edited", "gold"] * len(ids), text
    if width >= 160:  # room for every id on one line: none wraps
        assert all(f" {i} " in text for i in ids), text


def test_agent_labels_and_failed_checks_are_never_cut_at_80_columns(root: Path) -> None:
    """The other cells naming things: two agents sharing a short name are labelled by their
    whole spec text (cut in its middle past 40 characters before), and every failed check of
    a rejected row is named whole, even where a narrow terminal wraps its name."""
    rejected = _records(root)[1].decision
    assert rejected is not None
    specs = [f"cmd:python3 /srv/agents/team-{side}/experiments/fix.py" for side in ("a", "b")]
    text = _printed_at(
        80, [("payments-retry-timeout+generated-file-trap", s) for s in specs], rejected
    )
    assert max(len(line) for line in text.splitlines()) <= 80, text
    assert [c.replace(" ", "") for c in _column_cells(text, "agent", "ep")] == [
        s.replace(" ", "") for s in specs
    ], text
    named = ", ".join(rejected.failed).replace(" ", "")
    assert [w.replace(" ", "") for w in _column_cells(text, "why", "sentinel")] == [named] * 2


@pytest.mark.parametrize(("columns", "width"), [("80", 80), (None, 100), ("200", 200)])
def test_show_prints_at_the_terminals_width_with_every_id_whole(
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    columns: str | None,
    width: int,
) -> None:
    """``repogate show RUN_DIR`` as a person runs it: ``COLUMNS`` (a terminal's width) is
    honoured; piped without it, the table is 100 columns wide."""
    from repogate.agent_spec import GoldSpec
    from repogate.cli import main
    from repogate.errors import ExitCode
    from repogate.store import Store

    decision = decide(load_evidence(root / "examples" / "evidence" / "pure-parser-function.json"))
    ids = _readme_ids()
    run = tmp_path / "run"
    with Store.create(run) as store:
        for cid in ids:
            record = store.begin_attempt(cid, GoldSpec(), 0)
            store.finish_attempt(record.attempt_id, decision)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert main(["show", str(run)]) == ExitCode.OK
    text = capsys.readouterr().out
    table = text.split("\ngenerated-file-trap, gold:")[0]  # the injections' lines follow
    widest = max(len(line.rstrip()) for line in table.splitlines())
    assert widest <= width and (width > 100 or widest > width - 10), text
    assert _column_cells(table, "contract", "agent") == ids, text


@pytest.mark.parametrize("terminal", [False, True], ids=["log", "terminal"])
def test_a_resume_with_nothing_left_says_every_attempt_is_already_done(
    root: Path, terminal: bool
) -> None:
    """New user: rerunning `repogate run --out DIR` on a finished run printed its table and not
    a word on progress; it says how many of its attempts were found done, as a partial resume
    does before its first `running [N/TOTAL]` line."""
    done, *_ = _records(root)
    shown = io.StringIO()
    with RunProgress(2, Console(file=shown, force_terminal=terminal, width=100)) as bar:
        bar.tick("a", done)
        bar.tick("b", done)
    said = "2 of 2 attempts already done\n"  # on a terminal, above the bar it then clears
    assert said in shown.getvalue() if terminal else shown.getvalue() == said
    quiet = io.StringIO()  # --json: no progress at all
    with RunProgress(1, Console(file=quiet, force_terminal=terminal), quiet=True) as bar:
        bar.tick("a", done)
    assert quiet.getvalue() == ""


def test_a_rerun_says_how_many_attempts_it_found_done(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same, from `repogate run` itself: a rerun of a finished run, then one extending it."""
    contract, out = str(parser.contracts[0]), str(tmp_path / "run")
    gold = ["run", contract, "--agent", "gold", "--out", out]
    assert main(gold) == ExitCode.OK
    assert "already done" not in capsys.readouterr().err
    assert main(gold) == ExitCode.OK
    err = capsys.readouterr().err.splitlines()
    assert "1 of 1 attempt already done" in err and not any("running [" in e for e in err), err
    assert main([*gold, "--agent", "null"]) == ExitCode.OK
    err = capsys.readouterr().err.splitlines()
    at = err.index("1 of 2 attempts already done")
    assert err[at + 1].startswith("running [2/2] ") and err[at + 1].endswith(" · null · epoch 0")
