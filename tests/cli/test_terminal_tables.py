"""Terminal output of `repogate run`: the live progress bar and a final table 100 columns wide."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from repogate.cli import load_evidence
from repogate.cli.progress import RunProgress
from repogate.cli.terminal import attempts_table
from repogate.decision import decide
from repogate.receipt import Crash
from repogate.store import AttemptRecord


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
    # an agent label folds, never cut (new user: `show` cut `claude-3-5-sonnet-…` labels, so two
    # agents differing at their end read alike): the column's lines spell the label whole
    start = rows[1].index("an-agent-with")
    second = lines[lines.index(rows[1]) + 1]
    label = rows[1][start:].split()[0] + second[start:].split()[0]
    assert label == "an-agent-with-a-long-name", (rows[1], second)
    shown = rows[0].split()[1]  # a long contract id is cut in its middle: both ends stay
    assert shown.startswith("a-contract") and shown.endswith("on-and-on") and "…" in shown


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
    assert "payments-re…meout-compat" in text and "payments-retry-timeout " in text
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
    assert buffer.getvalue() == "running t1 · gold · epoch 0\n"
    quiet = io.StringIO()
    with RunProgress(1, Console(file=quiet, force_terminal=True), quiet=True) as bar:
        bar.tick("t1 · gold · epoch 0", None)
        bar.tick("", _records(root)[0])
    assert quiet.getvalue() == ""


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
