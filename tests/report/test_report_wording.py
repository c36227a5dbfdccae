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
