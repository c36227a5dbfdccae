"""`repogate report` over a real small run: the parser scenario with gold, null and an agent whose
fix passes the tests but edits a file it may not (resolved, not accepted), two epochs each."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _report_cli import report_error
from conftest import ROOT
from repogate.cli import ExitCode, main
from repogate.decision import STAGES
from repogate.report.differences import NEWCOMBE, SIGN_TEST
from repogate.report.stats import WILSON_CC_TASKS, Z, wilson_bounds, wilson_cc_bounds
from repogate.tasks.scenarios import build_scenario

pytestmark = pytest.mark.slow

FIX = ROOT / "src/repogate/tasks/scenarios/parser/files/fix/confparse/parser.py"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A finished run: gold, null and fix-and-notes on the parser scenario, 2 epochs."""
    tmp = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REPOGATE_CACHE", str(tmp / "cache"))
        mp.setenv("SOURCE_DATE_EPOCH", "1767600000")
        scenario = build_scenario("parser", tmp / "scenario")
        agent = tmp / "fix-and-notes.toml"
        agent.write_text(
            'description = "The right fix, plus a notes file outside the editable paths."\n'
            "[[edit]]\npath = 'confparse/parser.py'\nwrite = '''"
            + FIX.read_text()
            + "'''\n[[edit]]\npath = 'NOTES.md'\nwrite = 'bounds checked'\n"
        )
        out = tmp / "run"
        argv = ["run", str(scenario.contracts[0]), "--out", str(out), "--epochs", "2"]
        argv += ["--agent", "gold", "--agent", "null", "--agent", f"scripted:{agent}", "--json"]
        assert main(argv) == ExitCode.OK
        yield out


def _report(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["report", *args, "--json"]) == ExitCode.OK
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def _rows(report: dict[str, Any], section: str) -> list[dict[str, Any]]:
    rows = report[section]
    assert isinstance(rows, list)
    return rows


def test_acceptance_resolved_and_errors(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = _report(capsys, str(run_dir), "--by", "change_type")
    assert report["agents"] == ["gold", "null", "fix-and-notes"]
    assert report["baseline"] == "gold" and report["partial"] is False
    acc = {(r["agent"], r["cohort"]): r for r in _rows(report, "acceptance")}
    assert set(acc) == {(a, c) for a in report["agents"] for c in ("all", "bug")}
    gold, null = acc["gold", "all"], acc["null", "all"]
    assert (gold["accepted"], gold["scored"], gold["errors"], gold["attempts"]) == (2, 2, 0, 2)
    assert (null["accepted"], null["scored"]) == (0, 2)
    # two epochs of one task, every attempt agreeing: the interval rests on the one task
    assert gold["interval"]["method"] == WILSON_CC_TASKS
    assert (gold["interval"]["n"], gold["interval"]["tasks"]) == (2, 1)
    assert gold["interval"]["low"] == pytest.approx(wilson_cc_bounds(1, 1)[0])
    assert 0.05 < gold["interval"]["low"] < 0.06 and gold["interval"]["se"] is None
    resolved = {r["agent"]: r for r in _rows(report, "resolved")}
    notes = resolved["fix-and-notes"]
    assert (notes["scored"], notes["errors"], notes["resolved"], notes["accepted"]) == (2, 0, 2, 0)
    assert resolved["null"]["resolved"] == 0
    gaps = _rows(report, "gaps")
    assert [(g["agent"], g["epoch"]) for g in gaps] == [("fix-and-notes", 0), ("fix-and-notes", 1)]
    assert all(g["stopped_by"] == ["edits_permitted"] for g in gaps)
    errors = {e["agent"]: e for e in _rows(report, "errors")}
    assert errors["gold"]["attempts"] == 2 and set(errors["gold"]["kinds"].values()) == {0}
    funnel = {f["agent"]: f for f in _rows(report, "funnels")}
    null_stages = {s["stage"]: s for s in funnel["null"]["stages"]}
    assert list(null_stages) == list(STAGES)
    assert null_stages["focused tests passed"]["failed"] == 2
    assert null_stages["regression tests passed"]["own"]["estimate"] == 1.0
    assert null_stages["regression tests passed"]["cumulative"]["estimate"] == 0.0
    pass_k = {(p["agent"], p["k"]): p for p in _rows(report, "pass_k")}
    assert pass_k["gold", 2]["pass_hat_k"] == 1.0 and pass_k["null", 2]["pass_at_k"] == 0.0
    paired = {p["agent"]: p for p in _rows(report, "paired")}
    assert paired["null"]["comparison"]["difference"]["estimate"] == -1.0
    # one task, null below gold in both epochs: not a point at -1 but Newcombe's bound over the
    # one task (no concordant pair: -1 + sqrt(2) * the Wilson upper limit of 0 of 1)
    null_vs_gold = paired["null"]["comparison"]
    assert null_vs_gold["method"] == SIGN_TEST
    assert null_vs_gold["difference"]["method"] == NEWCOMBE
    assert null_vs_gold["difference"]["low"] == -1.0
    assert null_vs_gold["difference"]["high"] == pytest.approx(
        -1 + 2**0.5 * wilson_bounds(0, 1)[1], abs=1e-9
    )
    assert wilson_bounds(0, 1)[1] == pytest.approx(Z**2 / (1 + Z**2))
    assert paired["null"]["tasks"] == 1 and paired["null"]["dropped"]["agent_errors"] == 0
    autonomy = {a["agent"]: a for a in _rows(report, "autonomy") if a["cohort"] == "bug"}
    # one task: too few for any verdict; an integrity failure (edits_permitted) is one anyway
    assert autonomy["null"]["verdict"] == "insufficient evidence"
    assert autonomy["null"]["decided_by"] == ["c", "e"]  # nor did a sentinel run
    assert (autonomy["fix-and-notes"]["verdict"], autonomy["fix-and-notes"]["decided_by"]) == (
        "keep",
        ["d"],
    )
    evidence = next(c for c in autonomy["null"]["clauses"] if c["clause"] == "e")
    assert evidence["says"].startswith("1 paired task (at least 10)")
    assert autonomy["null"]["policy"].startswith("v1 defaults sha256 ")
    brief = _rows(report, "runs")[0]
    assert (brief["planned"], brief["done"], brief["status"]) == (6, 6, "complete")
    assert "network off" in str(brief["isolation"])


def test_a_chosen_baseline_and_terminal_width(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report(capsys, str(run_dir), "--baseline", "null")
    assert {p["agent"] for p in _rows(report, "paired")} == {"gold", "fix-and-notes"}
    gold = next(p for p in _rows(report, "paired") if p["agent"] == "gold")
    assert gold["comparison"]["difference"]["estimate"] == 1.0
    assert main(["report", str(run_dir)]) == ExitCode.OK
    text = capsys.readouterr().out
    assert "resolved (SWE-bench" in text and "edits_permitted" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_swebench_format_has_swebench_keys(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["report", str(run_dir), "--format", "swebench", "--agent", "null"]) == 0
    null = json.loads(capsys.readouterr().out)
    # the keys of SWE-bench's harness/reporting.py make_run_report, schema_version 2
    assert set(null) == {
        "total_instances", "submitted_instances", "completed_instances", "resolved_instances",
        "unresolved_instances", "empty_patch_instances", "error_instances", "completed_ids",
        "incomplete_ids", "empty_patch_ids", "submitted_ids", "resolved_ids", "unresolved_ids",
        "error_ids", "schema_version",
    }  # fmt: skip
    assert null["empty_patch_ids"] == ["parser-bounded-config"] and null["completed_ids"] == []
    assert main(["report", str(run_dir), "--format", "swebench", "--agent", "fix-and-notes"]) == 0
    notes = json.loads(capsys.readouterr().out)
    assert notes["resolved_ids"] == ["parser-bounded-config"]  # resolved, though not accepted
    assert (notes["total_instances"], notes["submitted_instances"]) == (1, 1)
    assert main(["report", str(run_dir), "--format", "swebench"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("error: --format swebench reports one agent; add --agent NAME")
    assert err.count("\n") == 1


def test_bad_inputs_are_one_line_errors(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "does not exist" in report_error(capsys, str(tmp_path / "nope"))
    assert "holds no store.sqlite" in report_error(capsys, str(tmp_path))
    err = report_error(capsys, str(run_dir), "--by", "team")
    assert "unknown cohort key 'team'" in err and "change_type, consequence" in err
    err = report_error(capsys, str(run_dir), "--baseline", "nobody")
    assert "unknown baseline agent 'nobody'" in err and "gold, null, fix-and-notes" in err
    assert "unknown --format" in report_error(capsys, str(run_dir), "--format", "csv")
    assert "--agent chooses" in report_error(capsys, str(run_dir), "--agent", "gold")


def test_report_as_a_subprocess(run_dir: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "300"}
    done = subprocess.run(
        [sys.executable, "-m", "repogate.cli", "report", str(run_dir), "--json"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["acceptance"][0]["interval"]["method"] == WILSON_CC_TASKS


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _pct(value: object) -> str:
    assert isinstance(value, float | int)
    return f"{100 * value:.1f}%"


def _interval(interval: dict[str, Any]) -> str:
    return f"{_pct(interval['estimate'])} [{_pct(interval['low'])}, {_pct(interval['high'])}]"


@pytest.mark.skipif(
    not CHROMIUM.exists() and not os.environ.get("CI"),
    reason="Debian's chromium is not installed here (CI installs it: .ci/run)",
)
def test_html_page_in_chromium_shows_the_json_numbers(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page opened in a real headless Chromium shows the JSON report's numbers, asks for
    nothing over the network, and links every attempt's receipts and patch by relative path."""
    from playwright.sync_api import Request, sync_playwright

    page_path = tmp_path / "out" / "report.html"
    capsys.readouterr()
    assert main(["report", str(run_dir), "--html", str(page_path), "--json"]) == ExitCode.OK
    report = json.loads(capsys.readouterr().out)
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})  # a laptop's screen

            def seen(request: Request) -> None:
                requests.append(request.url)

            page.on("request", seen)
            page.goto(page_path.as_uri())
            cells = page.eval_on_selector_all(
                "table",
                "ts => Object.fromEntries(ts.map(t => [t.id, [...t.tBodies[0].rows].map("
                "r => [...r.cells].map(c => c.innerText.trim()))]))",
            )
            hrefs = page.eval_on_selector_all(
                "#attempts a", "as => as.map(a => a.getAttribute('href'))"
            )
            charts = page.eval_on_selector_all(
                "svg", "ss => ss.map(s => s.getBoundingClientRect().width)"
            )
            headline = page.eval_on_selector("#headline", "t => t.getBoundingClientRect().bottom")
        finally:
            browser.close()
    assert requests == [page_path.as_uri()]  # no network, no other file
    assert len(charts) == 3 and min(charts) > 100
    acceptance = [
        [
            r["agent"],
            r["cohort"],
            f"{r['accepted']}/{r['scored']}",
            str(r["tasks"]),
            f"{_interval(r['interval'])} SE n/a",  # one task: no standard error
            f"{r['errors']}/{r['attempts']}",
            r["interval"]["method"],
        ]
        for r in report["acceptance"]
    ]
    assert cells["acceptance"] == acceptance
    # the page leads with accepted beside resolved per agent, seen without scrolling
    assert next(iter(cells)) == "headline" and headline < 768
    verdicts = {a["agent"]: a["verdict"] for a in report["autonomy"]}
    assert cells["headline"] == [
        [
            r["agent"],
            str(r["accepted_rate"]["tasks"]),
            f"{r['accepted']}/{r['scored']}",
            f"{_interval(r['accepted_rate'])} SE n/a",
            f"{r['resolved']}/{r['scored']}",
            f"{_interval(r['resolved_rate'])} SE n/a",
            str(r["errors"]),
            verdicts.get(r["agent"], "baseline (gold)"),
        ]
        for r in report["resolved"]
    ]
    funnel = [[row[0], row[1], row[4]] for row in cells["funnel"]]  # agent, stage, cumulative
    assert funnel == [
        [f["agent"], s["stage"], _pct(s["cumulative"]["estimate"])]
        for f in report["funnels"]
        for s in f["stages"]
    ]
    assert [row[1:] for row in cells["resolved"]] == [
        [
            str(r["scored"]),
            f"{r['resolved']}/{r['scored']}",
            f"{_interval(r['resolved_rate'])} SE n/a",
            f"{r['accepted']}/{r['scored']}",
            f"{_interval(r['accepted_rate'])} SE n/a",
            str(r["errors"]),
            str(r["resolved_not_accepted"]),
        ]
        for r in report["resolved"]
    ]
    assert [row[:3] for row in cells["autonomy"]] == [
        [a["cohort"], a["agent"], a["verdict"]] for a in report["autonomy"]
    ]
    assert [row[:2] for row in cells["gaps"]] == [
        [g["agent"], g["contract"]] for g in report["gaps"]
    ]
    assert [row[:3] + row[4:5] for row in cells["attempts"]] == [
        [a["contract"], a["agent"], str(a["epoch"]), a["outcome"]] for a in report["attempts"]
    ]
    assert hrefs and all((page_path.parent / h).resolve().is_file() for h in hrefs)
    assert sum(h.endswith("patch.diff") for h in hrefs) >= 4  # gold and fix-and-notes, 2 epochs
    assert sum(h.endswith("-V.intoto.json") for h in hrefs) == 6


def test_show_one_attempt_by_row_number_or_id(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["show", str(run_dir)]) == ExitCode.OK
    table = capsys.readouterr().out.splitlines()
    rows = [line for line in table if line[:1].isdigit()]
    assert len(rows) == 6 and max(map(len, table)) <= 100
    third = rows[2]
    assert third.split()[0] == "3" and "fix-and-notes" in third and "edits_permitted" in third
    assert main(["show", str(run_dir), "3"]) == ExitCode.OK
    shown = capsys.readouterr().out
    assert "edits_permitted" in shown and "NOTES.md" in shown  # the check's detail
    assert "receipts/03-V.intoto.json" in shown and "patch.diff" in shown
    attempt_id = shown.split()[1].rstrip(":")
    assert main(["show", str(run_dir), attempt_id, "--json"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)[0]["attempt_id"] == attempt_id
    assert main(["show", str(run_dir), "7"]) == ExitCode.USAGE
    assert "give a row number 1..6" in capsys.readouterr().err
