"""Readable evidence of failures: one line with the cause and the log's path; the full log kept in
the attempt folder.

Found on real input: an environment that failed to build put ~100 lines of compiler output in the
table; a base-state run that wrote no report kept no pytest output (its cause had to be found by
hand); a stopped attempt repeated one message under every check it did not reach.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from repogate.cli import main
from repogate.cli.terminal import attempts_table
from repogate.store import Store
from repogate.tasks.scenarios import BuiltScenario

pytestmark = pytest.mark.slow

NOISE = "import sys; [print('gcc: note: line %d' % i, file=sys.stderr) for i in range(150)]"


def _variant(scenario: BuiltScenario, old: str, new: str) -> Path:
    text = scenario.contracts[0].read_text()
    assert old in text
    path = scenario.contracts[0].parent / "variant.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def _run(contract: Path, out: Path) -> tuple[dict[str, str], Path, str]:
    """Run the null agent; return its checks' details, its attempt folder and the table."""
    assert main(["run", str(contract), "--agent", "null", "--out", str(out), "--json"]) == 0
    with Store.open(out) as store:
        (record,) = store.attempts()
    assert record.decision is not None
    buffer = io.StringIO()
    Console(file=buffer, width=200).print(attempts_table([record], "run"))
    details = {str(c.name): c.detail for c in record.decision.checks}
    return details, store.attempt_dir(record.attempt_id), buffer.getvalue()


def _log_named(detail: str, folder: Path) -> str:
    match = re.search(r"log: (\S+)", detail)
    assert match, detail
    path = Path(match.group(1))
    assert path.is_relative_to(folder), path  # kept in the attempt folder
    return path.read_text()


def test_an_environment_that_fails_to_build_gives_one_line_and_keeps_its_log(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failing = f"{NOISE}; print('gcc: error: missing.h: No such file', file=sys.stderr); sys.exit(1)"
    contract = _variant(
        parser, 'install = ["uv pip install pytest"]', f'install = ["python -c \\"{failing}\\""]'
    )
    details, folder, table = _run(contract, tmp_path / "run")
    capsys.readouterr()
    detail = details["environment_reproduced"]
    assert "\n" not in detail and len(detail) < 600, detail
    assert "gcc: error: missing.h: No such file" in detail  # the cause, not the noise
    log = _log_named(detail, folder)
    assert "gcc: note: line 0" in log and "gcc: note: line 149" in log
    assert "gcc: note" not in table
    # the checks it never reached say so once each, without repeating the cause
    unreached = [d for name, d in details.items() if d.startswith("not observed")]
    assert unreached and all("gcc" not in d for d in unreached), unreached


def test_a_base_state_run_without_a_report_keeps_the_test_output(
    parser: BuiltScenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failing = (
        f"{NOISE}; print('E   ImportError: cannot import name url_quote from werkzeug.urls', "
        "file=sys.stderr); sys.exit(4)"
    )
    contract = _variant(
        parser,
        'test_command = "python -m pytest -p no:cacheprovider"',
        f'test_command = "python -c \\"{failing}\\""',
    )
    details, folder, _ = _run(contract, tmp_path / "run")
    capsys.readouterr()
    detail = details["environment_reproduced"]
    assert "\n" not in detail and len(detail) < 600, detail
    assert "ImportError: cannot import name url_quote from werkzeug.urls" in detail
    log = _log_named(detail, folder)
    assert "gcc: note: line 149" in log and "url_quote" in log
