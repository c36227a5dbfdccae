"""The report's text and HTML page say what a section is and measures with their units.

New user: the text report's heading "runs (manifest in brief)" did not say what the section
holds (what ran, and under which isolation), and the soft measures read ``wall_time_s 12.42``:
a field name and a raw float, in the text and as the HTML table's column heads.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from _stored_run import one_attempt_run
from repogate.cli import ExitCode, main
from repogate.decision import SoftMetrics

RUNS_HEADING = "Runs: what ran and under which isolation"
BWRAP = "bwrap: filesystem allowlist, own PID namespace, no network"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    soft = SoftMetrics(wall_time_s=12.4167, tokens=12345, agent_cost_usd=0.01234)
    one_attempt_run(tmp_path / "run", BWRAP, soft)
    return tmp_path / "run"


def test_the_text_report_names_its_sections_and_units(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["report", str(run_dir)]) == ExitCode.OK
    text = capsys.readouterr().out
    assert RUNS_HEADING in text and "manifest in brief" not in text
    # one attempt: the median and the total are the same
    soft = "agent cost $0.0123 / $0.0123; wall time 12.4 s / 12.4 s; tokens 12,345 / 12,345"
    assert soft in " ".join(text.split()), text
    assert re.search(r"\b(wall_time_s|agent_cost_usd)\b|12\.41", text) is None


def test_the_html_page_names_its_sections_and_units(run_dir: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    assert main(["report", str(run_dir), "--html", str(page)]) == ExitCode.OK
    html = page.read_text()
    assert f"<h2>{RUNS_HEADING}</h2>" in html
    soft = re.search(r'<table id="soft">.*?</table>', html)
    assert soft is not None
    heads = re.findall(r"<th>(.*?)</th>", soft.group())
    assert heads == ["agent", "n", *(f"{m}" for m in SOFT_HEADS)]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", soft.group())
    assert cells[2:5] == ["0 min / 0 min", "$0.0123 / $0.0123", "12.4 s / 12.4 s"], cells
    assert cells[-1] == "12,345 / 12,345"


SOFT_HEADS = (
    "review",
    "agent cost",
    "wall time",
    "retries",
    "changed lines",
    "review rounds",
    "extra repair effort",
    "tokens",
)


def test_the_reports_say_when_a_run_started_as_a_person_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """New user: the runs section said ``2026-12-02T19:40:12+00:00``, the manifest's value as
    stored; the text and the HTML page say ``2026-12-02 19:40 UTC``."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796240412")  # 2026-12-02 19:40:12 UTC
    one_attempt_run(tmp_path / "run", BWRAP, SoftMetrics(wall_time_s=1.0))
    capsys.readouterr()
    assert main(["report", str(tmp_path / "run")]) == ExitCode.OK
    text = capsys.readouterr().out
    page = tmp_path / "page.html"
    assert main(["report", str(tmp_path / "run"), "--html", str(page)]) == ExitCode.OK
    for shown in (text, page.read_text()):
        assert "2026-12-02 19:40 UTC" in shown
        assert re.search(r"2026-12-02T|\+00:00|1796240412", shown) is None


SKIPPED_LEGEND = (
    "(N skipped): not applicable, e.g. the hermetic profile has no review accepted or sentinel "
    "passed"
)


def test_the_text_funnel_says_why_a_hermetic_attempts_stages_are_skipped(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """New user: the funnel's sentinel row read `0/0/0 (1 skipped)` for a hermetic-profile
    attempt, which runs no sentinel, and nothing said why (nor for its review row)."""
    capsys.readouterr()
    assert main(["report", str(run_dir)]) == ExitCode.OK
    text = capsys.readouterr().out
    funnel = text.split("stage funnel", 1)[1].split("evaluator and environment errors", 1)[0]
    funnel = " ".join(funnel.split())
    assert "review accepted 0/0/0 (1 skipped) n/a" in funnel, funnel
    assert "sentinel passed 0/0/0 (1 skipped) n/a" in funnel, funnel
    assert SKIPPED_LEGEND in funnel, funnel
    assert text.count("(N skipped)") == 1


def test_the_html_funnel_says_why_a_stage_is_skipped(run_dir: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    assert main(["report", str(run_dir), "--html", str(page)]) == ExitCode.OK
    after = page.read_text().split('<table id="funnel">', 1)[1].split("</table>", 1)[1]
    assert after.startswith(f"<p class=note>{SKIPPED_LEGEND}.</p>"), after[:300]
