"""``repogate report``: read run directories and print, or write, the report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from repogate._counted import counted, listed
from repogate._folders import file_in_the_way
from repogate.errors import ExitCode, UserInputError
from repogate.report.aggregate import build_report
from repogate.report.json import to_json
from repogate.report.load import load_runs
from repogate.report.policy import load_policy
from repogate.report.swebench import swebench_report
from repogate.report.text import print_report

FORMATS = ("swebench",)


def execute(
    run_dirs: list[Path],
    by: str | None,
    as_json: bool,
    html: Path | None,
    fmt: str | None,
    baseline: str | None,
    agent: str | None,
    policy: Path | None = None,
) -> ExitCode:
    """Report on ``run_dirs``; return ``OK``.

    Folders holding the same run (a copy, or one folder given twice) are reported as one run,
    each attempt counted once, with a note on standard error naming them.

    Raises:
        UserInputError: a run directory is missing, not a repogate run or empty; the cohort key,
            the baseline, the agent or the format is unknown; the HTML file cannot be written;
            the policy file cannot be read or does not validate.
        ChangedEvidenceError: an attempt's evidence changed since it was stored (exit 3, as
            ``show`` gives).
    """
    if fmt is not None and fmt not in FORMATS:
        json_hint = " (for JSON, give --json)" if fmt.strip().lower() == "json" else ""
        raise UserInputError(
            f"unknown --format {fmt!r}{json_hint}", f"choose one of: {', '.join(FORMATS)}"
        )
    if agent is not None and fmt != "swebench":
        raise UserInputError(
            "--agent chooses the agent of --format swebench",
            "add --format swebench, or drop --agent (the report covers every agent)",
        )
    if html is not None:
        _check_html(html)
    chosen, source = load_policy(policy)
    runs = load_runs(run_dirs)
    for run in runs:
        for copy in run.copies:
            print(
                f"note: {copy} holds the same run as {run.path} (run id {run.run_id}): "
                "each attempt is counted once",
                file=sys.stderr,
            )
    if fmt == "swebench":
        print(json.dumps(swebench_report(runs, agent), indent=4))
        return ExitCode.OK
    report = build_report(runs, by, baseline, chosen, source)
    if report.partial and (as_json or html is not None):  # the text report says it itself
        print(f"partial report: {report.partial_note}", file=sys.stderr)
    if html is not None:
        from repogate.report.html import write_html

        missing = [p for p in html.parents if not p.exists()]
        write_html(report, html)  # makes missing folders, as pytest --junitxml and coverage do
        print(f"wrote {html}{_created(missing)}", file=sys.stderr)
    if as_json:
        print(to_json(report))
    elif html is None:
        from repogate.cli.terminal import StdoutConsole
        from repogate.report.text import WIDTH

        print_report(report, StdoutConsole(width=WIDTH))
    return ExitCode.OK


MAX_FOLDERS_SAID = 3
"""Created folders the ``wrote`` line names at most, from the top; the rest are counted."""


def _created(missing: list[Path]) -> str:
    """`` (created the folders site, site/reports)`` for the folders ``--html`` made, or ``""``.

    Args:
        missing: the page's folders that did not exist before it was written, deepest first
            (as :attr:`pathlib.Path.parents` lists them).

    Returns:
        The folders from the top down (the top one is the one to remove to undo it), at most
        :data:`MAX_FOLDERS_SAID` named and the rest counted (:func:`repogate._counted.listed`).
    """
    if not missing:
        return ""
    names = [str(p) for p in reversed(missing)]
    noun = "the folder" if len(names) == 1 else f"{counted(len(names), 'folder')}:"
    return f" (created {noun} {listed(names, MAX_FOLDERS_SAID)})"


def _check_html(html: Path) -> None:
    """Refuse an ``--html`` path that is a folder or lies below a file, before anything is read.

    Raises:
        UserInputError: naming the folder, or the file in the way.
    """
    if html.is_dir():
        raise UserInputError(f"--html {html} is a folder", "give a file name, e.g. report.html")
    in_the_way = file_in_the_way(html.parent)
    if in_the_way is not None:
        raise UserInputError(
            f"--html {html} is below the file {in_the_way}",
            "give a file name in a folder (missing folders are created), e.g. report.html",
        )
