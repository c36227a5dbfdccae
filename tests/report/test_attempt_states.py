"""One vocabulary for an attempt's progress, read alike by ``show``, ``report`` and the HTML.

Threat: ``report --json`` called an attempt not started yet ``running`` (and a run's interrupted
attempt ``running`` too) while ``show`` said ``not started`` / ``interrupted``: two readers of
one store disagreeing on what happened. Every reader now words it with
:func:`repogate.vocabulary.attempt_state`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from repogate.agent_spec import GoldSpec, NullSpec
from repogate.cli import ExitCode, load_evidence, main
from repogate.decision import decide
from repogate.sandbox import Isolation
from repogate.store import RunManifest, Store
from repogate.vocabulary import ATTEMPT_STATES, attempt_state


def _report_states(run: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["report", str(run), "--json"]) == ExitCode.OK
    return [row["outcome"] for row in json.loads(capsys.readouterr().out)["attempts"]]


def _show(run: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["show", str(run), *args]) == ExitCode.OK
    return capsys.readouterr().out


def _html_states(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    page = tmp_path / "report.html"
    assert main(["report", str(run), "--html", str(page)]) == ExitCode.OK
    capsys.readouterr()
    cells = r'<td class="[a-z-]+">(accepted|not started|running|interrupted)</td>'
    return re.findall(cells, page.read_text())


def test_show_report_and_html_word_an_unfinished_attempt_alike(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Done, started and not started: the same words in the report (JSON, HTML) and in show."""
    run = tmp_path / "run"
    decision = decide(load_evidence(root / "examples" / "evidence" / "pure-parser-function.json"))
    iso = Isolation(kind="bwrap", network_off=True)
    with Store.create(run) as store:
        store.write_manifest(
            RunManifest(
                agents=({"spec": "gold"}, {"spec": "null"}),
                contracts=(),
                selection="test",
                planned_attempts=3,
                isolation_agent=iso,
                isolation_tests=iso,
            )
        )
        done = store.begin_attempt("t", GoldSpec(), 0)
        started = store.begin_attempt("t", NullSpec(), 0)
        store.begin_attempt("t", GoldSpec(), 1)
        store.start_attempt(done.attempt_id)
        store.finish_attempt(done.attempt_id, decision)
        store.start_attempt(started.attempt_id)
        live = ["accepted", "running", "not started"]
        assert _report_states(run, capsys) == live
        assert "attempt status: running" in _show(run, capsys, "2")
        assert "attempt status: not started" in _show(run, capsys, "3")
    stopped = ["accepted", "interrupted", "not started"]
    assert _report_states(run, capsys) == stopped
    assert _html_states(run, tmp_path, capsys) == stopped
    assert "attempt status: interrupted" in _show(run, capsys, "2")
    shown = json.loads(_show(run, capsys, "--json"))
    assert [r["state"] for r in shown] == ["done", "interrupted", "not started"]


def test_every_stored_status_has_one_word_for_each_liveness() -> None:
    """The mapping is total and its words are the documented ones."""
    words = {
        (s, live): attempt_state(s, live=live)
        for s in ("planned", "running", "done", "crashed")
        for live in (True, False)
    }
    assert words == {
        ("planned", True): "not started",
        ("planned", False): "not started",
        ("running", True): "running",
        ("running", False): "interrupted",
        ("done", True): "done",
        ("done", False): "done",
        ("crashed", True): "crashed",
        ("crashed", False): "crashed",
    }
    assert set(words.values()) == set(ATTEMPT_STATES)
